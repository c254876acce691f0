// Package words is the offline model's second layer, above the lexicon: it
// cuts a message into sentences and Words, each with its lower-case form
// and place (words.go), reads what a single word says on its own, such as
// a task number, and matches the pattern language the grammar is written
// in (pattern.go). A word cut wrongly is mostly a lexicon entry.
package words
