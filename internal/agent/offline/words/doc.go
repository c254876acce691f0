// Package words is the offline model's second layer, above the lexicon:
// it cuts a message into sentences and Words, each with its lower-case
// form and where it stands (words.go), reads what a single word says on
// its own, such as a task number or a state, and matches the pattern
// language the grammar is written in (pattern.go). It imports only the
// lexicon.
//
// A fix here is rare and reaches every reading: a word cut wrongly is
// mostly a lexicon entry ("abbreviations", "chat spellings").
package words
