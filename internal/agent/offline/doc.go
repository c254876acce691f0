// Package offline is a model for the agent that needs no network and no
// key: a deterministic reader of what people say about their to-do list,
// so the whole service can be developed, demonstrated and tested without a
// model service. It makes real tool calls through the same loop and tools
// as a language model, and writes its replies from their results.
//
// It is the top of the model's layers: lexicon (the words, as text files),
// words, slots (task references and titles), grammar (grammar.Parse reads a
// message into typed steps), results (what the tools said, and how a reply
// words it), and this package. It reads what earlier turns left open
// (offline.go), carries the steps out over the turn's tool rounds (exec.go,
// steps.go, resolve.go), answers and asks (dialogue.go), and holds the
// dialogue's tables (transitions.go). A fix to how a message is read
// belongs in grammar or below it; to how a result is said, in results; to
// what an answer does, in transitions.go; to what is done with what was
// read, here.
package offline
