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
// grammar.Parse reads a message into typed steps), results (what the
// tools said and how a reply words it), and this package, which remembers
// earlier turns (offline.go reads the conversation), carries the steps out
// over the turn's tool rounds (exec.go, steps.go, resolve.go), asks its
// questions and reads their answers (dialogue.go), naming the person's own
// tasks in its examples (examples.go). A fix to how a message is read belongs in grammar or below
// it; to how a tool's result is read or said, in results; to what is done
// with what was read, here.
package offline
