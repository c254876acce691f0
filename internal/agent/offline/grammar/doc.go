// Package grammar is the offline model's fourth layer: it reads a message
// into Steps, the requests it makes in the order they were made, without
// knowing the list or the conversation. It cuts the message into clauses
// (clauses.go), matches each against the table of what people say
// (grammar.go) and builds the step a line means (builders.go); it reads
// asides, answers, pasted lists and what it could not read. It imports the
// lexicon, words and slots.
//
// It gives the executor above it Parse and the Step it returns: an Action,
// the tasks it points at (a slots.Ref), the Items to add, and the
// modifiers that say how it was said; and the fixed replies (HelpText …)
// with AnyTask, the place the executor writes an example's task number.
//
// A fix here is a line of the table (a new way of saying a request, with a
// builder if its meaning needs one) or a lexicon entry the table's
// patterns name as @set; then a case in the evaluation's cases file shows
// it, and the offline package's tests show what else it changed.
package grammar
