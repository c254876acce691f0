// Package lexicon is the offline model's words: the word lists, phrase
// sets, chat spellings and irregular pasts it reads messages with, kept as
// text files in data/ that a person reads and extends without Go. It is
// the lowest layer of the model and imports only the standard library.
//
// Each file holds sections on one topic. A section is a name in brackets,
// a comment or two saying what the words are for and how they are used,
// and its entries, separated by spaces or line breaks:
//
//	[task verbs]
//	# Task verbs begin tasks ("book a table", "call the bank") ...
//	buy call email e-mail phone pay send schedule fix
//
// A phrase of several words is written with "_" for each space, as the
// grammar's patterns write it: get_rid_of. A section read as pairs or
// numbers holds one word and what it stands for a line ("tmrw tomorrow",
// "third 2"). Lines that start with "#" are comments. Sections that the
// grammar's patterns name as @done are named [@done].
//
// The layers above ask for each section by name as it starts
// (lexicon.Words("task verbs")), so a section that is missing, or written
// twice, or lists a word twice stops the program, and every test with it,
// before any message is read; a test of the offline package fails for a
// section nothing asks for.
//
// To teach the model a word, add it to the section whose comment says it
// is for that use and run the offline package's tests: the evaluation
// shows what the word changes. A new list is a new section and a new
// variable in the layer that reads it (words, slots, grammar or offline).
package lexicon
