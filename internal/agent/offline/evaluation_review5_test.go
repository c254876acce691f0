package offline

// review5Cases are from the fifth review (2026-11-26), of rules that
// interact: each defect it found, its variants, and the messages the
// fixes must not take.
var review5Cases = []evalCase{
	// A reason ends where more tasks for the request follow it: "and
	// task 7" goes on with the request, not with the reason. Words that
	// go on with the reason name no task of their own.
	{kind: "reason", given: dialogHome, say: []string{"delete task 5 because I sold it and task 7"}, want: gone(dialogHome, 5, 7)},
	{kind: "reason", given: dialogHome, say: []string{"delete the bike task because I sold it and the garage task"}, want: gone(dialogHome, 5, 7)},
	{kind: "reason", given: dialogHome, say: []string{"complete task 3 because I went and task 4"}, want: done(dialogHome, 3, 4)},
	{kind: "reason", given: dialogHome, say: []string{"complete task 4 since she called and the dentist"}, want: done(dialogHome, 3, 4)},
	{kind: "reason", given: dialogHome, say: []string{"delete task 5 because I sold it, and the garage one too"}, want: gone(dialogHome, 5, 7)},
	{kind: "reason", given: dialogHome, say: []string{"delete task 5 because I sold it and 7"}, want: gone(dialogHome, 5, 7)},
	{kind: "reason", given: dialogHome, say: []string{"delete task 5 because it broke and the new one is better"}, want: gone(dialogHome, 5)},
	{kind: "reason", given: dialogHome, say: []string{"complete task 4 because she called and the kids said hi too"}, want: done(dialogHome, 4)},
	{kind: "reason", given: dialogHome, say: []string{"delete task 5 because I sold it and it was old"}, want: gone(dialogHome, 5)},
	{kind: "reason", given: dialogHome, say: []string{"delete task 5 because I sold it, and add buy a helmet"}, want: append(gone(dialogHome, 5), "Buy a helmet")},

	// A mark that says a task is not done never vanishes from a list of
	// tasks marked done: what it stands before is not completed. A check
	// mark asked about ("task 3 ✅?") asks, as "task 3 done?" does.
	{kind: "complete", given: dialogHome, say: []string{"✅ 3, ❌ 5"}, calls: "none"},
	{kind: "complete", given: dialogHome, say: []string{"✅ 1, 🚫 5"}, calls: "none"},
	{kind: "complete", given: dialogHome, say: []string{"✅ 1 ⏳ 5"}, calls: "none"},
	{kind: "complete", given: dialogHome, say: []string{"✅ 1 ✖ 5"}, calls: "none"},
	{kind: "complete", given: dialogHome, say: []string{"✅ 1 🙂 5"}, calls: "list_tasks(all)"},
	{kind: "complete", given: dialogHome, say: []string{"✅ call mom, ✅ dentist, ❌ garage"}, want: done(dialogHome, 4)},
	{kind: "complete", given: dialogHome, say: []string{"task 3 ✅?"}, calls: "list_tasks(all)"},
	{kind: "complete", given: dialogHome, say: []string{"task 3 done?"}, calls: "list_tasks(all)"},
	{kind: "complete", given: dialogHome, say: []string{"task 3 ✅"}, want: done(dialogHome, 3)},
	{kind: "complete", given: dialogHome, say: []string{"✅ 3, 5"}, want: done(dialogHome, 3, 5)},
	{kind: "complete", given: dialogHome, say: []string{"task 4 done 🎉"}, want: done(dialogHome, 4)},
	{kind: "complete", given: dialogHome, say: []string{"task 3 is done"}, want: done(dialogHome, 3)},
	{kind: "complete", given: dialogHome, say: []string{"add buy 🎂 for mom"}, want: append(clone(dialogHome), "Buy 🎂 for mom")},
	{kind: "complete", given: dialogHome, say: []string{"mark task 4 ✅ and task 5 ❌"}},

	// A question that offered a change takes a yes or a no, or the tasks
	// it offered; "and task 4" is asked about, never made.
	{kind: "confirm", given: dialogHome, say: []string{"need to finish task 3", "and task 4"}, calls: "none"},
	{kind: "confirm", given: dialogHome, say: []string{"need to finish task 3", "also task 5"}, calls: "none"},
	{kind: "confirm", given: dialogHome, say: []string{"need to finish task 3", "and the garage"}},
	{kind: "confirm", given: dialogHome, say: []string{"need to finish task 3", "no, and task 4 too"}, calls: "none"},
	{kind: "confirm", given: dialogHome, say: []string{"need to finish task 3", "task 4"}, calls: "none"},
	{kind: "confirm", given: dialogHome, say: []string{"need to finish task 3", "and task 4", "yes"}, want: done(dialogHome, 4)},
	{kind: "confirm", given: dialogHome, say: []string{"need to finish task 3", "and task 4", "no"}, calls: "none"},
	{kind: "confirm", given: dialogHome, say: []string{"need to finish task 3", "task 3"}, want: done(dialogHome, 3)},
	{kind: "confirm", given: dialogHome, say: []string{"need to finish task 3", "the dentist one"}, want: done(dialogHome, 3)},
	{kind: "confirm", given: dialogHome, say: []string{"delete everything", "and task 4"}, calls: "none"},
	{kind: "confirm", given: dialogHome, say: []string{"need to finish task 3", "task 3 too"}, calls: "none"},
	{kind: "confirm", given: dialogHome, say: []string{"need to finish task 3", "no, delete task 5"}, want: gone(dialogHome, 5)},
	{kind: "confirm", given: dialogHome, say: []string{"need to finish task 3", "yes, and task 4 too"}, calls: "none"},

	// A modal with no task of its own ("I have to", "gotta do it") says
	// something is still to do: asked whether a task is done, it leaves
	// the task open; to an offer it is the yes it was said with. It is
	// never a task called "To".
	{kind: "modal", given: dialogHome, say: []string{"need to finish task 3", "yeah I have to"}, calls: "none"},
	{kind: "modal", given: dialogHome, say: []string{"need to finish task 3", "ok I have to"}, calls: "none"},
	{kind: "modal", given: dialogHome, say: []string{"need to finish task 3", "yes I want to"}, calls: "none"},
	{kind: "modal", given: dialogHome, say: []string{"need to finish task 3", "yes, gotta do it"}, calls: "none"},
	{kind: "modal", given: dialogHome, say: []string{"need to finish task 3", "yes, I need to do it today"}, calls: "none"},
	{kind: "modal", given: dialogHome, say: []string{"need to finish task 3", "I have to"}, calls: "none"},
	{kind: "modal", given: dialogHome, say: []string{"need to finish task 3", "no, I have to"}, calls: "none"},
	{kind: "modal", given: dialogHome, say: []string{"need to finish task 3", "yeah I have to", "yes"}, calls: "none"},
	{kind: "modal", given: dialogHome, say: []string{"I have to"}, calls: "none"},
	{kind: "modal", given: dialogHome, say: []string{"gotta do it"}, calls: "none"},
	{kind: "modal", given: dialogHome, say: []string{"buy stamps", "yes I want to"}, want: append(clone(dialogHome), "Buy stamps")},
	{kind: "modal", given: dialogHome, say: []string{"delete everything", "I want to"}, calls: "none"},
	{kind: "modal", given: dialogHome, say: []string{"need to finish task 3", "yes"}, want: done(dialogHome, 3)},
	{kind: "modal", given: dialogHome, say: []string{"I have to do the taxes"}, want: append(clone(dialogHome), "Do the taxes")},

	// "I meant …" renames the task just added or renamed only to words
	// that read as a title; a reference, a place or a time, a request to
	// add, or the name of another task is asked about.
	{kind: "correct", given: dialogHome, say: []string{"rename task 4 to call dad", "no I meant the garage"}, want: with(dialogHome, 4, "Call dad"), calls: "none"},
	{kind: "correct", given: dialogHome, say: []string{"add fix the sink", "I meant the bike"}, want: append(clone(dialogHome), "Fix the sink"), calls: "none"},
	{kind: "correct", given: dialogHome, say: []string{"add buy milk", "sorry I meant the other list"}, want: append(clone(dialogHome), "Buy milk"), calls: "none"},
	{kind: "correct", given: dialogHome, say: []string{"add buy milk", "I meant for tomorrow"}, want: append(clone(dialogHome), "Buy milk"), calls: "none"},
	{kind: "correct", given: dialogHome, say: []string{"add milk", "I meant in the groceries one"}, want: append(clone(dialogHome), "Milk"), calls: "none"},
	{kind: "correct", given: dialogHome, say: []string{"add buy milk", "I meant add it to the groceries task"}, want: append(clone(dialogHome), "Buy milk"), calls: "none"},
	{kind: "correct", given: dialogHome, say: []string{"add buy milk", "no I meant clean the garage"}, want: append(clone(dialogHome), "Buy milk")},
	{kind: "correct", given: dialogHome, say: []string{"add buy milk", "no I meant buy oat milk"}, want: append(clone(dialogHome), "Buy oat milk")},
	{kind: "correct", given: dialogHome, say: []string{"add fix the sink", "I meant fix the kitchen sink"}, want: append(clone(dialogHome), "Fix the kitchen sink")},
	{kind: "correct", given: dialogHome, say: []string{"rename task 4 to call dad", "no I meant call mom and dad"}, want: with(dialogHome, 4, "Call mom and dad")},
	{kind: "correct", given: dialogHome, say: []string{"delete the bike task", "no I meant the garage"}, want: gone(dialogHome, 5, 7)},

	// "yes except the bike" to a question that offered a change on
	// several tasks offers it again on all of them but those; the words
	// after the exception never feed a "did you mean".
	{kind: "except", given: dialogHome, say: []string{"delete everything", "yes except the bike"}, calls: "none"},
	{kind: "except", given: dialogHome, say: []string{"delete everything", "yes except the bike", "yes"}, want: gone(dialogHome, 1, 2, 3, 4, 6, 7)},
	{kind: "except", given: dialogHome, say: []string{"delete everything", "yes except the bike", "no"}, calls: "none"},
	{kind: "except", given: dialogHome, say: []string{"all done", "yes except the garage", "yes"}, want: done(dialogHome, 1, 3, 4, 5)},
	{kind: "except", given: dialogHome, say: []string{"delete everything", "sure, but not task 5", "yes"}, want: gone(dialogHome, 1, 2, 3, 4, 6, 7)},
	{kind: "except", given: dialogHome, say: []string{"delete everything", "yes except the zebra"}, calls: "none"},
	{kind: "except", given: dialogHome, say: []string{"delete everything", "yes except the zebra", "yes"}, want: gone(dialogHome, 1, 2, 3, 4, 5, 6, 7)},
	{kind: "except", given: dialogHome, say: []string{"delete everything", "except the bike"}, calls: "none"},
	{kind: "except", given: dialogHome, say: []string{"delete everything", "except the bike", "yes"}, want: gone(dialogHome, 1, 2, 3, 4, 6, 7)},
	{kind: "except", given: dialogHome, say: []string{"except the bike"}, calls: "none"},
	{kind: "except", given: dialogHome, say: []string{"mark all done, except the dentist"}, want: done(dialogHome, 1, 4, 5, 7)},
	{kind: "except", given: dialogHome, say: []string{"tick off everything, apart from the garage"}, want: done(dialogHome, 1, 3, 4, 5)},
	{kind: "except", given: dialogHome, say: []string{"delete everything", "yes but delete task 5 first"}},

	// A no after a completion or a deletion in the same message takes it
	// back; a task named alone after the no, by number or as "the …", is
	// the one that was meant. Other words name no task to change.
	{kind: "correct", given: dialogHome, say: []string{"delete task 3 and 4. no wait, just 4"}, want: gone(dialogHome, 4)},
	{kind: "correct", given: dialogHome, say: []string{"complete task 3, no, task 4"}, want: done(dialogHome, 4)},
	{kind: "correct", given: dialogHome, say: []string{"delete task 3, no not that one, task 5"}, want: gone(dialogHome, 5)},
	{kind: "correct", given: dialogHome, say: []string{"delete task 3, no wait, the garage"}, want: gone(dialogHome, 7)},
	{kind: "correct", given: dialogHome, say: []string{"delete task 3, no, delete task 4"}, want: gone(dialogHome, 4)},
	{kind: "correct", given: dialogHome, say: []string{"delete task 3. no wait, buy milk"}},
	{kind: "correct", given: dialogHome, say: []string{"delete task 3. no, no, keep it"}, calls: "none"},
	{kind: "correct", given: dialogHome, say: []string{"no wait, just 4"}, calls: "none"},
	{kind: "correct", given: dialogHome, say: []string{"add buy milk, no wait, task 4"}, calls: "none"},

	// What was done, said just before a change about "it" other than a
	// completion, names the task and completes nothing.
	{kind: "update", given: dialogHome, say: []string{"I moved the dentist appointment, update it"}},
	{kind: "update", given: dialogHome, say: []string{"I moved the dentist appointment, update it", "Dentist appointment on Friday"},
		want: with(dialogHome, 3, "Dentist appointment on Friday")},
	{kind: "update", given: dialogHome, say: []string{"called mom, delete it"}, want: gone(dialogHome, 4)},
	{kind: "update", given: dialogHome, say: []string{"called mom, mark it done"}, want: done(dialogHome, 4)},
	{kind: "update", given: dialogHome, say: []string{"called mom"}, want: done(dialogHome, 4)},
	{kind: "update", given: dialogHome, say: []string{"called mom. rename it to call dad"}, want: with(done(dialogHome, 4), 4, "[x] Call dad")},
	// A no takes back the request just before it; those before that stand.
	{kind: "confirm", given: review3Home, say: []string{"add buy milk, delete task 3, no, task 4"}, want: append(gone(review3Home, 4), "Buy milk")},
	{kind: "confirm", given: review3Home, say: []string{"mark 1 done and delete task 3, no, task 5"}, want: gone(done(review3Home, 1), 5)},
	{kind: "confirm", given: review3Home, say: []string{"add call the vet and complete task 1, no wait"}, want: append(clone(review3Home), "Call the vet")},
	{kind: "confirm", given: review3Home, say: []string{"add buy milk. complete task 1, no, task 2"}, want: append(done(review3Home, 2), "Buy milk")},
	// An emoji is decoration unless marks say which task is done.
	{kind: "delete", given: review3Home, say: []string{"delete 3, 4 👍 and 5"}, want: gone(review3Home, 3, 4, 5)},
	{kind: "complete", given: review3Home, say: []string{"complete 1 🙏 and 2"}, want: done(review3Home, 1, 2)},
	// What a correction says was meant renames only when it reads as a
	// whole title: not a time, nor a word or a quantity of it.
	{kind: "correct", given: review3Home, say: []string{"add buy milk", "I meant tonight"}, want: append(clone(review3Home), "Buy milk"), calls: "none"},
	{kind: "correct", given: review3Home, say: []string{"add buy milk", "no I meant oat"}, want: append(clone(review3Home), "Buy milk"), calls: "none"},
	{kind: "correct", given: review3Home, say: []string{"add buy milk", "sorry I meant 2 liters"}, want: append(clone(review3Home), "Buy milk"), calls: "none"},
	{kind: "correct", given: review3Home, say: []string{"add buy milk", "I meant tomorrow morning"}, want: append(clone(review3Home), "Buy milk"), calls: "none"},
	{kind: "correct", given: review3Home, say: []string{"add milk", "no I meant bread"}, want: append(clone(review3Home), "Bread")},
	// A task said to have reached a state is done only if the state is
	// its verb's, or one that finishes any task ("clean", "paid").
	{kind: "complete", given: []string{"Dentist appointment on Tuesday", "Wash the car"}, say: []string{"the dentist appointment got moved"}},
	{kind: "complete", given: []string{"Dentist appointment on Tuesday", "Wash the car"}, say: []string{"delete task 1, no, the appointment got moved"}},
	{kind: "complete", given: []string{"Dentist appointment on Tuesday", "Wash the car"}, say: []string{"the car got washed"}, want: []string{"Dentist appointment on Tuesday", "[x] Wash the car"}},
	{kind: "complete", given: []string{"Clean the garage", "Pay rent"}, say: []string{"the rent is paid"}, want: []string{"Clean the garage", "[x] Pay rent"}},
	// Each no takes back the request still standing just before it; "no,
	// neither" and "forget all of that" take back every one.
	{kind: "confirm", given: review3Home, say: []string{"delete task 3, no, task 4, no wait"}},
	{kind: "confirm", given: review3Home, say: []string{"delete task 3, no wait, delete task 4, no, delete task 5"}, want: gone(review3Home, 5)},
	{kind: "confirm", given: review3Home, say: []string{"complete task 1, no, task 2, no, task 4"}},
	{kind: "confirm", given: review3Home, say: []string{"add buy milk, no, add oat milk, no, add almond milk"}, want: append(clone(review3Home), "Almond milk")},
	{kind: "confirm", given: review3Home, say: []string{"delete task 5, delete task 6, no, neither"}},
	{kind: "confirm", given: review3Home, say: []string{"complete 1, complete 4, no, don't do any of that"}},
	// An emoji that says no or doubt is no decoration: nothing is done
	// on the tasks around it.
	{kind: "delete", given: review3Home, say: []string{"delete 5 🤔 6"}},
	{kind: "delete", given: review3Home, say: []string{"delete 5 👎 6"}},
}
