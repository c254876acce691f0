// Package lexicon is the offline model's words: the word lists, phrase
// sets, chat spellings and irregular pasts it reads messages with, kept in
// data/*.txt for a person to read and extend without Go. It is the lowest
// layer of the model and imports only the standard library.
//
// A file holds sections: a name in brackets, a comment saying what the
// words are for, and entries separated by spaces or line breaks. A phrase
// is written with "_" for each space (get_rid_of); a section read as pairs
// or numbers holds a word and what it stands for a line ("tmrw tomorrow").
// A section the grammar's patterns name as @done is [@done].
//
// The layers above ask for each section by name as they start, so a
// missing section, a section written twice or a word listed twice stops
// the program before any message is read, and a test of the offline
// package fails for a section nothing asks for.
package lexicon
