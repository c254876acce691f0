// Package cli is taskchat's terminal client: the run, chat and login
// commands of the binary, for people who live in a terminal and for
// scripts. It speaks only the HTTP API (api/openapi.yaml), as any other
// client would, so it imports nothing of the server: its wire types are
// its own, and a server of another version is met through the contract.
//
// Whatever the server sends goes through Text or Line before it reaches a
// terminal, so that a task titled with an escape sequence, or a model's
// reply holding one, prints as visible characters and never steers the
// terminal.
package cli
