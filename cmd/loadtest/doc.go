// Command loadtest measures taskchat under load: it starts the real server
// in a child process against PostgreSQL and an instant OpenAI-compatible
// fake model, drives many users chatting concurrently (JSON and streamed),
// then holds many idle streams open, and many followers of one running
// turn, and prints a table of turns/s, latency, the service's own time per
// turn, database round trips per turn and memory per idle stream and per
// follower.
//
//	go run ./cmd/loadtest -db 'postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable'
//
// It creates a scratch database next to the one -db names and drops it.
//
// With -floor it measures, instead of taskchat, a turn written by hand
// that does only the work a turn cannot avoid (floor.go), on the same
// wire contract, schema and fake model: taskchat's figures are read
// against it, on the same machine, in alternating runs.
package main
