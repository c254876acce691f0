// Package words is the offline model's second layer, above the lexicon:
// it cuts a message into sentences and words (words.go), matches the
// pattern language the grammar is written in (pattern.go), and reads the
// few things a single word says on its own, such as a task number or a
// state (numbers.go, words.go). It imports only the lexicon.
//
// It gives the grammar above it the Word (what was written, its lower-case
// form and where it stands in the message), Split and Sentences to cut
// text, Span to take back what a run of words covers as it was written,
// and CompilePattern and the phrase helpers the grammar's table and
// readers match with.
//
// A fix here is rare and reaches every reading: a word cut wrongly (an
// abbreviation that ends no sentence, a mark that stands for "done") is
// mostly a lexicon entry ("abbreviations", "chat spellings"); a new element
// of the pattern language is a change to pattern.go and its notation above.
// Run the offline package's tests after either: the evaluation shows what
// it changes.
package words
