// Package grammar is the offline model's fourth layer, above lexicon,
// words and slots: Parse reads a message into Steps, the requests it makes
// in order, without knowing the list or the conversation. It cuts the
// message into clauses (clauses.go), matches each against the table of
// what people say (grammar.go), and builds the step a line means
// (builders.go); it also reads asides, answers, pasted lists and what it
// could not read.
//
// A fix here is a line of the table, with a builder if its meaning needs
// one, or a lexicon entry; a case in the evaluation shows it.
package grammar
