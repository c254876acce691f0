package offline

// reviewDialogCases are conversations from the second held-out review
// (2026-11-26) about the dialogue: answers to a question, follow-ups,
// corrections, and what "it" and "the first one" mean.
var reviewDialogCases = []evalCase{
	// A place in a list ("the first one") after adds made one by one is a
	// place among those adds; with one task and no list shown, it is
	// asked about, never guessed.
	{kind: "follow-up", say: []string{"add walk the dog", "add feed the cat", "delete the first one"}, want: []string{"-", "Feed the cat"}},
	{kind: "follow-up", say: []string{"add buy milk", "add buy eggs", "add buy flour", "mark the second one done"},
		want: []string{"Buy milk", "[x] Buy eggs", "Buy flour"}},
	{kind: "follow-up", given: dialogCalls, say: []string{"add walk the dog", "add feed the cat", "complete the first one"},
		want: append(clone(dialogCalls), "[x] Walk the dog", "Feed the cat")},
	{kind: "follow-up", say: []string{"add walk the dog", "remind me to feed the cat", "delete the last one"}, want: []string{"Walk the dog", "-"}},
	{kind: "follow-up", say: []string{"add walk the dog", "delete the first one"}, want: []string{"Walk the dog"}, calls: "none"},

	// A yes or a no said with more words: what follows it adds nothing,
	// or is the request asked about, or keeps the tasks.
	{kind: "confirm", given: dialogHome, say: []string{"delete all my tasks", "yes do it"}, want: gone(dialogHome, 1, 2, 3, 4, 5, 6, 7)},
	{kind: "confirm", given: dialogHome, say: []string{"delete all my tasks", "yep do it"}, want: gone(dialogHome, 1, 2, 3, 4, 5, 6, 7)},
	{kind: "confirm", given: dialogHome, say: []string{"delete everything", "yes please do it"}, want: gone(dialogHome, 1, 2, 3, 4, 5, 6, 7)},
	{kind: "confirm", given: dialogHome, say: []string{"clear my list", "sure, go ahead"}, want: gone(dialogHome, 1, 2, 3, 4, 5, 6, 7)},
	{kind: "confirm", given: dialogHome, say: []string{"delete everything", "yes delete them"}, want: gone(dialogHome, 1, 2, 3, 4, 5, 6, 7)},
	{kind: "confirm", given: dialogHome, say: []string{"delete everything", "no, keep them"}, calls: "none"},
	{kind: "confirm", given: dialogCalls, say: []string{"delete the call task", "none of them"}, calls: "none"},
	{kind: "confirm", given: dialogCalls, say: []string{"delete the call task", "neither"}, calls: "none"},
	{kind: "confirm", given: dialogHome, say: []string{"yep do it"}, calls: "none"},
	{kind: "confirm", given: dialogHome, say: []string{"delete everything", "yes, go ahead and do it"}, want: gone(dialogHome, 1, 2, 3, 4, 5, 6, 7)},
	{kind: "confirm", given: dialogHome, say: []string{"delete all my tasks", "sure thing"}, want: gone(dialogHome, 1, 2, 3, 4, 5, 6, 7)},
	{kind: "confirm", given: dialogHome, say: []string{"delete everything", "yes, delete everything"}, want: gone(dialogHome, 1, 2, 3, 4, 5, 6, 7)},
	{kind: "confirm", given: dialogHome, say: []string{"delete everything except the bike", "yes, delete everything"}, calls: "list_tasks(all)"},
	{kind: "confirm", given: dialogHome, say: []string{"erase everything", "nah leave them alone"}, calls: "none"},
	{kind: "confirm", given: dialogHome, say: []string{"delete everything", "don't delete them"}, calls: "none"},
	{kind: "confirm", given: dialogCalls, say: []string{"delete the call task", "neither of them"}, calls: "none"},
	{kind: "confirm", given: dialogCalls, say: []string{"buy stamps", "no thanks"}, calls: "none"},
	{kind: "confirm", given: dialogHome, say: []string{"no need to delete task 3"}},
	{kind: "confirm", given: dialogCalls, say: []string{"delete the call task", "yes, the bank one"}, want: gone(dialogCalls, 2)},

	// A reference with "and", "also" or "too" and no verb, no question
	// open: one more for the change the last turn made.
	{kind: "follow-up", given: dialogHome, say: []string{"mark the dentist task done", "and the bike one too"}, want: done(dialogHome, 3, 5)},
	{kind: "follow-up", given: dialogHome, say: []string{"delete the bike task", "and the garage"}, want: gone(dialogHome, 5, 7)},
	{kind: "follow-up", given: dialogHome, say: []string{"complete task 1", "also task 3"}, want: done(dialogHome, 1, 3)},
	{kind: "follow-up", given: dialogHome, say: []string{"delete task 4", "task 5 too"}, want: gone(dialogHome, 4, 5)},
	{kind: "follow-up", given: dialogHome, say: []string{"i called mom", "and the garage and the bike as well"}, want: done(dialogHome, 4, 5, 7)},
	{kind: "follow-up", given: dialogHome, say: []string{"delete task 4", "show my list", "and task 5"}, want: gone(dialogHome, 4), calls: "none"},
	{kind: "follow-up", given: dialogHome, say: []string{"complete task 1", "and the dentist?"}, want: done(dialogHome, 1), calls: "none"},
	{kind: "follow-up", given: dialogCalls, say: []string{"delete the call task", "and the bank"}, want: gone(dialogCalls, 2)},

	// An exception said by place or pronoun is among what was just shown
	// or talked about.
	{kind: "except", given: dialogHome, say: []string{"what's pending?", "mark them all done except the last one"}, want: done(dialogHome, 1, 3, 4, 5)},
	{kind: "except", given: dialogHome, say: []string{"what's pending?", "delete them all except the first two"}, want: gone(dialogHome, 4, 5, 7)},
	{kind: "except", given: dialogHome, say: []string{"what's pending?", "complete everything except the last one"}, want: done(dialogHome, 1, 3, 4, 5)},
	{kind: "except", given: dialogHome, say: []string{"is task 3 done?", "mark everything done except that one"}, want: done(dialogHome, 1, 4, 5, 7)},
	{kind: "except", given: dialogHome, say: []string{"show my tasks", "delete all but the second", "yes"}, want: gone(dialogHome, 1, 3, 4, 5, 6, 7)},
	{kind: "except", given: dialogHome, say: []string{"mark everything done except the last one"}, calls: "list_tasks(all)"},

	// A correction makes the last change again on what was meant: a task
	// just added gets the title meant; a completion or a deletion is made
	// on the task meant (the one before stays as it is: the tools cannot
	// undo it).
	{kind: "correct", say: []string{"add buy batteries", "actually make that buy AA batteries"}, want: []string{"Buy AA batteries"}},
	{kind: "correct", say: []string{"add call the plumber", "no, I meant call the electrician"}, want: []string{"Call the electrician"}},
	{kind: "correct", given: dialogHome, say: []string{"delete task 3", "wait no, I meant task 4"}, want: gone(dialogHome, 3, 4), calls: "delete_task(4)"},
	{kind: "correct", given: dialogHome, say: []string{"mark task 5 done", "sorry, I meant 7"}, want: done(dialogHome, 5, 7)},
	{kind: "correct", given: dialogHome, say: []string{"delete the bike task", "no I meant the garage"}, want: gone(dialogHome, 5, 7)},
	{kind: "correct", given: dialogHome, say: []string{"rename task 4 to call dad", "sorry I meant call grandma"}, want: with(dialogHome, 4, "Call grandma")},
	{kind: "correct", given: dialogHome, say: []string{"mark task 5 done", "oops I meant task 5"}, want: done(dialogHome, 5), calls: "none"},
	{kind: "correct", given: dialogHome, say: []string{"delete task 3", "no, I meant tasks 3 and 4"}, want: gone(dialogHome, 3, 4), calls: "delete_task(4)"},
	{kind: "correct", given: dialogHome, say: []string{"show my tasks", "I meant task 4"}, calls: "none"},
	{kind: "correct", say: []string{"add buy milk", "I meant to buy eggs"}, want: []string{"Buy milk"}, calls: "none"},
	{kind: "correct", given: dialogCalls, say: []string{"delete the call task", "sorry, I meant the bank"}, want: gone(dialogCalls, 2)},
	{kind: "correct", say: []string{"add walk the dog", "add feed the cat", "make that feed the cats"}, want: []string{"Walk the dog", "Feed the cats"}},

	// A question about one task or topic answers with those tasks and
	// makes them what "it" means.
	{kind: "list", given: dialogHome, say: []string{"do I have anything about the dentist?"}, calls: "list_tasks(all)"},
	{kind: "list", given: dialogHome, say: []string{"do I have anything about the dentist?", "ok delete it"}, want: gone(dialogHome, 3)},
	{kind: "list", given: dialogHome, say: []string{"show me task 5", "delete it"}, want: gone(dialogHome, 5)},
	{kind: "list", given: dialogHome, say: []string{"what was task 4 again?", "mark it done"}, want: done(dialogHome, 4)},
	{kind: "list", given: dialogHome, say: []string{"is there anything about groceries on my list?", "it's done"}, want: done(dialogHome, 1)},
	{kind: "list", given: dialogHome, say: []string{"show me tasks 3 to 5", "delete the second one"}, want: gone(dialogHome, 4)},
	{kind: "list", given: dialogHome, say: []string{"what about the bike?", "finish it"}, want: done(dialogHome, 5)},
	{kind: "list", given: dialogHome, say: []string{"any tasks about yoga?", "delete it"}, calls: "none"},
	{kind: "outside", given: dialogHome, say: []string{"what's 15% of 80"}, calls: "none"},
}

var (
	dialogHome = []string{
		"Buy groceries",                  // 1
		"[x] Pay the electricity bill",   // 2
		"Dentist appointment on Tuesday", // 3
		"Call mom",                       // 4
		"Fix the bike",                   // 5
		"[x] Renew passport",             // 6
		"Clean the garage",               // 7
	}
	dialogCalls = []string{
		"Call the plumber", // 1
		"Call the bank",    // 2
		"Buy milk",         // 3
	}
)
