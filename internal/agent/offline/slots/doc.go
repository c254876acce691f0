// Package slots is the offline model's third layer: it reads what fills a
// slot of the grammar's table. refs.go reads how a person points at tasks
// ("task 3", "it", "the second one", "everything I've completed") into a
// Ref; titles.go the tasks an add request names; sentences.go what a
// sentence is on its own (a question about the list, a denial …) and a
// mistyped first keyword. A fix here is mostly a lexicon entry; a new way
// to point at tasks is a new reader in refs.go and a Ref kind.
package slots
