// Package offline is a model for the agent that needs no network and no
// key: a deterministic reader of what people say about their to-do list,
// so the whole service can be developed, demonstrated and tested end to end
// without a model service. It makes real tool calls through the same loop
// and tools as a language model would, and writes its replies from the
// tool results.
//
// It is the top of the model's layers, which depend one way: lexicon (the
// words, as text files), words (sentences, words and the pattern
// language), slots (task references and titles), grammar (the table:
// grammar.Parse reads a message into typed steps, each with its Mood and
// Bearing), results (what the tools said, how a reply words it, finding
// tasks by name), and this package: it reads the conversation
// (offline.go: what each earlier turn left open — its question, its
// offers, its focus, its last change, a request cut short), carries the
// steps out over the turn's tool rounds (exec.go, steps.go, resolve.go),
// answers and asks (dialogue.go), and holds the dialogue's tables
// (transitions.go: what a yes does, by how it is said and what is open;
// what a correction does). A fix to how a message is read belongs in
// grammar or below it — a table line, a lexicon entry; to how a tool's
// result is read or said, in results; to what an answer does, a line of a
// table in transitions.go; to what is done with what was read, here.
package offline
