package offline

// review4Cases are from the fourth review (2026-11-26), of the changes
// made that day: each defect it found, its variants, and the messages the
// fixes must not take.
var review4Cases = []evalCase{
	// "I need to finish task 3" says the task is still to do: a
	// completion after a modal said with a verb of doing the work is
	// asked about, never made; one said with a verb of ticking it off is
	// a request. An add after a modal that points at a task of the list
	// is offered, not made.
	{kind: "modal", given: dialogHome, say: []string{"need to finish task 3"}, calls: "none"},
	{kind: "modal", given: dialogHome, say: []string{"gotta finish task 4"}, calls: "none"},
	{kind: "modal", given: dialogHome, say: []string{"have to complete task 7"}, calls: "none"},
	{kind: "modal", given: dialogHome, say: []string{"I need to complete task 3"}, calls: "none"},
	{kind: "modal", given: dialogHome, say: []string{"I want to finish task 5"}, calls: "none"},
	{kind: "modal", given: dialogHome, say: []string{"need to finish task 3", "yes"}, want: done(dialogHome, 3)},
	{kind: "modal", given: dialogHome, say: []string{"need to finish task 3", "no, not yet"}, calls: "none"},
	{kind: "modal", given: dialogHome, say: []string{"need to do task 5"}, calls: "none"},
	{kind: "modal", given: dialogHome, say: []string{"need to finish the bike task"}, calls: "none"},
	{kind: "modal", given: dialogHome, say: []string{"have to complete task 4 by friday"}, calls: "none"},
	{kind: "modal", given: dialogHome, say: []string{"I have to mark task 3 as done"}, want: done(dialogHome, 3)},
	{kind: "modal", given: dialogHome, say: []string{"need to tick off task 4"}, want: done(dialogHome, 4)},
	{kind: "modal", given: dialogHome, say: []string{"gotta delete task 3"}, want: gone(dialogHome, 3)},
	{kind: "modal", given: dialogHome, say: []string{"I need to finish the report"}, want: append(clone(dialogHome), "Finish the report")},
	{kind: "modal", given: dialogHome, say: []string{"gotta call the landlord"}, want: append(clone(dialogHome), "Call the landlord")},

	// After a completion or a delete, "and …" is one more for it only when
	// it names a task of the list; other words may be a task to add, and
	// are offered as one.
	{kind: "follow-up", given: dialogHome, say: []string{"delete task 4", "and buy milk"}, want: gone(dialogHome, 4)},
	{kind: "follow-up", given: dialogHome, say: []string{"delete task 4", "and buy milk", "yes"}, want: append(gone(dialogHome, 4), "Buy milk")},
	{kind: "follow-up", given: dialogHome, say: []string{"delete task 2", "also fix the bike tomorrow", "yes"},
		want: append(gone(dialogHome, 2), "Fix the bike tomorrow")},
	{kind: "follow-up", given: dialogHome, say: []string{"complete task 1", "and pick up the kids", "yes"},
		want: append(done(dialogHome, 1), "Pick up the kids")},
	{kind: "follow-up", given: dialogHome, say: []string{"complete task 1", "and the garage too"}, want: done(dialogHome, 1, 7)},
	{kind: "follow-up", given: dialogHome, say: []string{"delete task 4", "and the bike"}, want: gone(dialogHome, 4, 5)},

	// A correction whose value is a request carries the request out; only
	// a value that reads as a title renames.
	{kind: "correct", given: dialogHome, say: []string{"rename task 4 to call dad", "no I meant delete it"}, want: gone(dialogHome, 4)},
	{kind: "correct", given: dialogHome, say: []string{"add buy milk", "sorry I meant show my list"},
		want: append(clone(dialogHome), "Buy milk"), calls: "list_tasks(all)"},
	{kind: "correct", given: dialogHome, say: []string{"add buy milk", "no I meant delete task 5"}, want: append(gone(dialogHome, 5), "Buy milk")},
	{kind: "correct", given: dialogHome, say: []string{"delete task 3", "no, I meant keep it"}, want: gone(dialogHome, 3), calls: "none"},
	{kind: "correct", given: dialogHome, say: []string{"add buy milk", "no I meant keep it"}, want: append(clone(dialogHome), "Buy milk"), calls: "none"},
	{kind: "correct", given: dialogHome, say: []string{"add buy milk", "no I meant buy eggs"}, want: append(clone(dialogHome), "Buy eggs")},
	{kind: "correct", given: dialogHome, say: []string{"rename task 4 to call dad", "no, I meant call grandma"}, want: with(dialogHome, 4, "Call grandma")},
	{kind: "correct", given: dialogHome, say: []string{"add buy milk", "actually make that buy oat milk"}, want: append(clone(dialogHome), "Buy oat milk")},

	// A yes said with a doubt, or followed by a no, deletes nothing; the
	// question is asked again. A no after requests in the same message
	// takes them back.
	{kind: "confirm", given: dialogHome, say: []string{"delete everything", "ok? no wait"}, calls: "none"},
	{kind: "confirm", given: dialogHome, say: []string{"delete everything", "yes? what would that do"}, calls: "none"},
	{kind: "confirm", given: dialogHome, say: []string{"delete everything", "yes? wait, which ones"}, calls: "none"},
	{kind: "confirm", given: dialogHome, say: []string{"delete everything", "sure. hmm, are you sure that's right?"}, calls: "none"},
	{kind: "confirm", given: dialogHome, say: []string{"delete everything", "yes? wait, which ones", "yes"}, want: gone(dialogHome, 1, 2, 3, 4, 5, 6, 7)},
	{kind: "confirm", given: dialogHome, say: []string{"delete everything", "yes. do it"}, want: gone(dialogHome, 1, 2, 3, 4, 5, 6, 7)},
	{kind: "confirm", given: dialogHome, say: []string{"delete everything", "yes!"}, want: gone(dialogHome, 1, 2, 3, 4, 5, 6, 7)},
	{kind: "confirm", given: dialogHome, say: []string{"delete everything", "no. keep it"}, calls: "none"},
	{kind: "confirm", given: dialogHome, say: []string{"buy stamps", "ok? what would that do"}, calls: "none"},
	{kind: "confirm", given: dialogHome, say: []string{"buy stamps", "ok. thanks"}, want: append(clone(dialogHome), "Buy stamps")},
	{kind: "confirm", given: dialogHome, say: []string{"delete task 3. no wait, keep it"}, calls: "none"},
	{kind: "confirm", given: dialogHome, say: []string{"add buy milk. no wait"}, calls: "none"},
	{kind: "confirm", given: dialogHome, say: []string{"delete task 4. no wait. delete task 5"}, want: gone(dialogHome, 5)},

	// "the 2nd task" with no list shown is asked about when task numbers
	// have gaps there: the second task and task 2 differ.
	{kind: "numbers", given: review4Gaps, say: []string{"delete task 2", newConversation, "delete the 2nd task"},
		want: gone(review4Gaps, 2), calls: "list_tasks(all)"},
	{kind: "numbers", given: review4Gaps, say: []string{"delete task 1", newConversation, "mark the third task done"},
		want: gone(review4Gaps, 1), calls: "list_tasks(all)"},
	{kind: "numbers", given: review4Gaps, say: []string{"delete task 2", newConversation, "delete the 2nd task", "4"}, want: gone(review4Gaps, 2, 4)},
	{kind: "numbers", given: review4Gaps, say: []string{"delete task 2", newConversation, "delete the first task"}, want: gone(review4Gaps, 1, 2)},
	{kind: "numbers", given: review4Gaps, say: []string{"delete task 4", newConversation, "delete the 2nd task"}, want: gone(review4Gaps, 2, 4)},
	{kind: "numbers", given: review4Gaps, say: []string{"delete task 2", newConversation, "complete the last task"}, want: done(gone(review4Gaps, 2), 4)},
	{kind: "numbers", given: review4Gaps, say: []string{"delete task 2", newConversation, "show my tasks", "delete the 2nd one"}, want: gone(review4Gaps, 2, 3)},

	// A reason ends at the next request; what goes on about "it" is still
	// the reason.
	{kind: "several", given: dialogHome, say: []string{"delete the bike task because I sold it, and add buy a helmet"},
		want: append(gone(dialogHome, 5), "Buy a helmet")},
	{kind: "several", given: dialogHome, say: []string{"complete task 4 since I called her, then show my list"},
		want: done(dialogHome, 4), calls: "complete_task(4) list_tasks(all)"},
	{kind: "several", given: dialogHome, say: []string{"delete task 3 because it's done and I don't need it"}, want: gone(dialogHome, 3)},
	{kind: "several", given: dialogHome, say: []string{"complete task 1 because I bought everything and then some"}, want: done(dialogHome, 1)},
	{kind: "several", given: dialogHome, say: []string{"delete task 5, its done anyway"}, want: gone(dialogHome, 5)},

	// "but" before a request of its own splits there; before tasks it
	// leaves them out.
	{kind: "except", given: dialogHome, say: []string{"mark all done but add buy milk"},
		want: append(done(dialogHome, 1, 3, 4, 5, 7), "Buy milk")},
	{kind: "except", given: dialogHome, say: []string{"no but delete task 1"}, want: gone(dialogHome, 1)},
	{kind: "except", given: dialogHome, say: []string{"delete the completed ones but add call the bank"},
		want: append(gone(dialogHome, 2, 6), "Call the bank")},
	{kind: "except", given: dialogHome, say: []string{"tick off everything but tasks 3 and 4 as done"}, want: done(dialogHome, 1, 5, 7)},
	{kind: "except", given: dialogHome, say: []string{"complete everything but the dentist one"}, want: done(dialogHome, 1, 4, 5, 7)},
	{kind: "except", given: dialogHome, say: []string{"mark everything done but the bike"}, want: done(dialogHome, 1, 3, 4, 7)},
	// "should be" says what a task should say only in quotes; otherwise it
	// says how the task ought to end up, and renames nothing.
	{kind: "update", given: review3Home, say: []string{"task 2 should be 'Call the plumber before 10'"}, want: with(review3Home, 2, "Call the plumber before 10")},
	{kind: "update", given: review3Home, say: []string{"the fence task should be called fix the back fence"}, want: with(review3Home, 4, "Fix the back fence")},
	{kind: "update", given: review3Home, say: []string{"the fence should be fixed by friday"}, calls: "none"},
	{kind: "update", given: review3Home, say: []string{"task 1 should be paid by monday"}, calls: "none"},
	// A no after a comma takes back what was asked before it.
	{kind: "confirm", given: review3Home, say: []string{"delete task 3, no wait"}, calls: "none"},
	{kind: "confirm", given: review3Home, say: []string{"delete task 4, no wait, delete task 5"}, want: gone(review3Home, 5)},
	{kind: "confirm", given: review3Home, say: []string{"mark task 2 done, never mind"}, calls: "none"},
	{kind: "confirm", given: review3Home, say: []string{"add buy bread, no crust"}, want: append(clone(review3Home), "Buy bread, no crust")},
}

// review4Gaps is a list whose cases delete a task first, leaving a gap
// in its numbers.
var review4Gaps = []string{"Buy groceries", "Old task", "Call mom", "Fix the bike"}
