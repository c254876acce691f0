// Package http is taskchat's HTTP API: the chat turn (answered as one JSON
// body, or streamed by turnstream), resuming and stopping a turn,
// conversations, tasks, health checks, the chat page, the development
// login, and the task tools over MCP for outside clients
// (/mcp: cmd/server builds the handler, this package guards it). Which
// user a request acts for is internal/auth's answer: this package mounts
// it (requireUser, the development login's route) and maps its errors, as
// every other error, to a status in one table (errors.go).
//
// NewServer lists every route in one place; api/openapi.yaml is its
// contract and a test keeps the two in step.
package http
