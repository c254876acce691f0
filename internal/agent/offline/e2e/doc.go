// Package e2e runs a sample of the offline model's evaluation end to end:
// through the real chat engine, the MCP task tools and PostgreSQL, judged
// as the offline package's own evaluation judges every case in memory
// (evaltest). It also holds the in-memory chat to the engine: on every
// message of the sample, the same reply and the same tool calls.
//
//	go test ./internal/agent/offline/e2e -run TestEvaluation -v
//
// With -all it runs every case, not the sample.
package e2e
