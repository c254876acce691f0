// Package offline is a model for the agent that needs no network and no
// key: a deterministic reader of what people say about their to-do list,
// making real tool calls through the same loop and tools as a language
// model, so the service can be developed and tested without one.
//
// It is the top of the model's layers: lexicon (the words), words, slots
// (task references and titles), grammar (a message read into typed steps),
// results (what the tools said, and how a reply words it), and this
// package, which carries the steps out (exec.go, steps.go, resolve.go)
// by the dialogue's tables (dialogue.go). A fix to how a message is read
// belongs in grammar or below; to how a result is said, in results; to
// what an answer does, in dialogue.go.
package offline
