// Package lexicon is the offline model's words: the word lists, phrase
// sets, chat spellings and irregular pasts it reads messages with, kept in
// data/*.txt for a person to read and extend without Go.
//
// A file holds sections: a name in brackets, a comment saying what the
// words are for, and entries separated by spaces or line breaks. A phrase
// is written with "_" for each space (get_rid_of); a section read as pairs
// or numbers holds a word and what it stands for a line ("tmrw tomorrow").
// A section the grammar's patterns name as @done is [@done].
//
// The layers above ask for each section by name as they start, so a
// mistake in the data stops the program before any message is read.
package lexicon
