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
// grammar.Parse reads a message into typed steps), and this package,
// which remembers earlier turns (offline.go reads the conversation),
// carries the steps out over the turn's tool rounds (exec.go, steps.go,
// resolve.go, dialogue.go for questions and answers) and words the
// replies (reply.go, examples.go, unkept.go). A fix to how a message is
// read belongs in grammar or below it; a fix to what is done with what
// was read, here.
package offline
