// Package slots is the offline model's third layer: it reads what fills a
// slot of the grammar's table. Refs reads how a person points at tasks
// ("task 3", "it", "the second one", "everything I've completed") into a
// Ref; titles reads the tasks an add request names into titles and
// descriptions; the rest reads what a sentence is on its own (a question,
// a denial, words that may be a task) and respells a mistyped first
// keyword. It imports the lexicon and package words only.
//
// It gives the grammar above it ParseRef and its kin, the title readers
// (SplitItems, SplitDescription, StripAddLeadIns …), and the word lists
// those readers share with the grammar; it gives the executor Ref, whose
// kind and fields say which tasks are meant, and TitleWords, Stems and
// ContainsAll to match a name against the titles of the list.
//
// A fix here is mostly a lexicon entry: a word that points at tasks
// ("ref filler", "pronouns many"), a lead-in taken off a title ("add
// lead-ins …"), an irregular past. A new way to point at tasks is a new
// reader in refs.go and a new RefKind the executor resolves. Run the
// offline package's tests after either: the evaluation shows what changed.
package slots
