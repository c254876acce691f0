package offline

// review3Cases are conversations from the third blind review (150
// conversations written without reading the code), each with variants
// of the same cause and messages the fix must not take.
var review3Cases = []evalCase{
	// A short remark on how things stand after a request ("all done",
	// "all sorted now") is about that request, never news that every task
	// is done; said alone, completing every task is asked first.
	{kind: "complete", given: review3Home, say: []string{"called the plumber, all sorted"}, want: done(review3Home, 2)},
	{kind: "complete", given: review3Home, say: []string{"called the plumber, all done"}, want: done(review3Home, 2)},
	{kind: "complete", given: review3Home, say: []string{"fixed the fence, all sorted now"}, want: done(review3Home, 4)},
	{kind: "complete", given: review3Home, say: []string{"paid the water bill. all done!"}, want: done(review3Home, 1)},
	{kind: "complete", given: review3Home, say: []string{"tasks 1 and 2 are done, all good"}, want: done(review3Home, 1, 2)},
	{kind: "delete", given: review3Home, say: []string{"delete task 5, all done"}, want: gone(review3Home, 5)},
	{kind: "add", given: review3Home, say: []string{"add buy milk, all done"}, want: append(clone(review3Home), "Buy milk")},
	{kind: "bulk", given: review3Home, say: []string{"all done"}, calls: "list_tasks(all)"},
	{kind: "bulk", given: review3Home, say: []string{"all done", "yes"}, want: done(review3Home, 1, 2, 4, 5, 6)},
	{kind: "bulk", given: review3Home, say: []string{"all finished", "no"}, calls: "none"},
	{kind: "bulk", given: review3Home, say: []string{"everything's done!"}, want: done(review3Home, 1, 2, 4, 5, 6)},
	{kind: "complete", given: review3Home, say: []string{"called the plumber, everything's sorted"}, want: done(review3Home, 2)},
	{kind: "bulk", given: review3Home, say: []string{"what's pending?", "all done"}, calls: "list_tasks(all)"},
	{kind: "bulk", given: review3Home, say: []string{"mark all done"}, want: done(review3Home, 1, 2, 4, 5, 6)},
	{kind: "bulk", given: review3Home, say: []string{"I've finished all my tasks"}, want: done(review3Home, 1, 2, 4, 5, 6)},
	{kind: "except", given: review3Home, say: []string{"everything's done except the fence"}, want: done(review3Home, 1, 2, 5, 6)},

	// "not X, the other one" answering which task: the candidates but X.
	// X is never offered; with "not X" alone, the one left is asked about.
	{kind: "follow-up", given: review3Calls, say: []string{"delete the call task", "not the bank, the other one"}, want: gone(review3Calls, 2)},
	{kind: "follow-up", given: review3Calls, say: []string{"delete the call task", "no, not the bank, grandma"}, want: gone(review3Calls, 2)},
	{kind: "follow-up", given: review3Calls, say: []string{"mark the call task done", "not grandma, the other one"}, want: done(review3Calls, 1)},
	{kind: "follow-up", given: review3Calls, say: []string{"delete the call task", "not the bank"}, calls: "none"},
	{kind: "follow-up", given: review3Calls, say: []string{"delete the call task", "not the bank", "yes"}, want: gone(review3Calls, 2)},
	{kind: "follow-up", given: review3Calls, say: []string{"delete the call task", "not the bank", "no"}, calls: "none"},
	{kind: "follow-up", given: append(clone(review3Calls), "Call the dentist"), say: []string{"delete the call task", "not the bank, the other one"}, calls: "none"},
	{kind: "honesty", given: review3Calls, say: []string{"delete the call task, not the bank"}, calls: "list_tasks(all)"},
	{kind: "honesty", given: review3Calls, say: []string{"delete the call task", "not that one"}, calls: "none"},
	{kind: "honesty", given: review3Calls, say: []string{"not the bank"}, calls: "none"},

	// A note said of a task in other word orders is a note on that task;
	// "add a note: …" with no task is for the task just named or talked
	// about, or asked about. It is never a task of its own.
	{kind: "update", given: review3Noted, say: []string{"add to the bike task's notes: also the chain"}, want: with(review3Noted, 3, "Fix the bike | back tyre is flat; also the chain")},
	{kind: "update", given: review3Noted, say: []string{"for the party task, add a note: book the bouncy castle"}, want: with(review3Noted, 2, "Plan the birthday party | book the bouncy castle")},
	{kind: "update", given: review3Home, say: []string{"note on the fence task - need 3 new panels"}, want: with(review3Home, 4, "Fix the garden fence | need 3 new panels")},
	{kind: "update", given: review3Home, say: []string{"on task 2, add a note saying bring the key"}, want: with(review3Home, 2, "Call the plumber | bring the key")},
	{kind: "update", given: review3Home, say: []string{"add to task 1 notes - pay online"}, want: with(review3Home, 1, "Pay the water bill | pay online")},
	{kind: "update", given: review3Noted, say: []string{"add a note: check the chain", "the bike one"}, want: with(review3Noted, 3, "Fix the bike | back tyre is flat; check the chain")},
	{kind: "update", say: []string{"add email the landlord", "add a note: about the broken heater"}, want: []string{"Email the landlord | about the broken heater"}},
	{kind: "honesty", given: review3Noted, say: []string{"add a note: buy milk"}, calls: "none"},
	{kind: "honesty", given: review3Noted, say: []string{"add to the bike task's notes also the chain"}, calls: "none"},
	{kind: "add", given: review3Noted, say: []string{"add a task about the task description template"}, want: append(clone(review3Noted), "The task description template")},
	{kind: "add", say: []string{"add milk - 2 litres"}, want: []string{"Milk - 2 litres"}},
	{kind: "add", say: []string{"note to self: renew the car tax"}, want: []string{"Renew the car tax"}},

	// A statement before a request about "it" may describe the task in
	// other words: "it" is the one task it describes, or the one it
	// shares most words with is asked about. An order ("buy milk, then
	// delete it") describes none.
	{kind: "delete", given: review3Home, say: []string{"I won't be booking the table at Luigi's after all, remove it"}, want: gone(review3Home, 5)},
	{kind: "complete", given: review3Work, say: []string{"had the HR meeting scheduled, tick it off"}, want: done(review3Work, 4)},
	{kind: "complete", given: review3Work, say: []string{"we got the website updated last night, mark it done"}, want: done(review3Work, 5)},
	{kind: "delete", given: review3Home, say: []string{"we're skipping the thank you notes this year, delete it"}, calls: "list_tasks(all)"},
	{kind: "delete", given: review3Home, say: []string{"we're skipping the thank you notes this year, delete it", "yes"}, want: gone(review3Home, 6)},
	{kind: "honesty", given: review3Home, say: []string{"it's raining today, mark it done"}, calls: "list_tasks(all)"},
	{kind: "honesty", given: review3Calls, say: []string{"I won't be calling anyone today, delete it"}, calls: "list_tasks(all)"},
	{kind: "delete", given: review3Calls, say: []string{"pay the electricity bill, then delete it"}},

	// "task N" then what should be done to it: the number, not a title.
	{kind: "complete", given: review3Home, say: []string{"task #5 can be marked as done"}, want: done(review3Home, 5)},
	{kind: "complete", given: review3Home, say: []string{"task 2 needs to be marked complete"}, want: done(review3Home, 2)},
	{kind: "complete", given: review3Home, say: []string{"the fence should be ticked off"}, want: done(review3Home, 4)},
	{kind: "complete", given: review3Home, say: []string{"task 1 and 2 are done"}, want: done(review3Home, 1, 2)},
	{kind: "honesty", given: review3Home, say: []string{"task 4 can be done later"}, calls: "none"},

	// "both" and "them" after tasks added one message at a time are
	// those tasks; when they are more than "both" says, which is asked.
	{kind: "follow-up", say: []string{"add call mum", "add buy flowers", "delete both"}, want: []string{"-", "-"}},
	{kind: "follow-up", say: []string{"add call mum", "add buy flowers", "mark them done"}, want: []string{"[x] Call mum", "[x] Buy flowers"}},
	{kind: "follow-up", say: []string{"add call mum", "add buy flowers", "add bake a cake", "delete both"}, calls: "none",
		want: []string{"Call mum", "Buy flowers", "Bake a cake"}},
	{kind: "follow-up", say: []string{"add call mum", "delete both"}, calls: "none", want: []string{"Call mum"}},

	// Small tokens: a check mark says done; "lol" and "haha" at the end
	// are filler; "ad" before a verb a task starts with is "add", but
	// "and" is no typo of it.
	{kind: "complete", given: review3Home, say: []string{"task 2 ✅"}, want: done(review3Home, 2)},
	{kind: "complete", given: review3Home, say: []string{"✔ task 4"}, want: done(review3Home, 4)},
	{kind: "follow-up", say: []string{"add water the lawn", "oh and it's done already lol"}, want: []string{"[x] Water the lawn"}},
	{kind: "complete", given: review3Home, say: []string{"paid the water bill haha"}, want: done(review3Home, 1)},
	{kind: "add", say: []string{"ad buy printer ink"}, want: []string{"Buy printer ink"}},
	{kind: "add", say: []string{"addd call the bank"}, want: []string{"Call the bank"}},
	{kind: "honesty", say: []string{"and call mom"}, calls: "none", want: []string{}},
	{kind: "honesty", say: []string{"ad campaign ideas"}, calls: "none", want: []string{}},

	// A short vague question is about the list unless it says what else
	// it is about.
	{kind: "outside", given: review3Home, say: []string{"what should I have for dinner?"}, calls: "none"},
	{kind: "list", given: review3Home, say: []string{"what have I got on today?"}, calls: "list_tasks(pending)"},
	{kind: "list", given: review3Home, say: []string{"what do I have?"}, calls: "list_tasks(all)"},
}

var (
	review3Home = []string{
		"Pay the water bill",       // 1
		"Call the plumber",         // 2
		"[x] Buy dog food",         // 3
		"Fix the garden fence",     // 4
		"Book a table at Luigi's",  // 5
		"Send the thank you notes", // 6
	}
	review3Work = []string{
		"Prepare the sales presentation",      // 1
		"Email the client about the contract", // 2
		"[x] Review the budget",               // 3
		"Schedule a meeting with HR",          // 4
		"Update the website",                  // 5
	}
	review3Calls = []string{
		"Call the bank",            // 1
		"Call grandma",             // 2
		"Buy groceries",            // 3
		"Pay the electricity bill", // 4
	}
	review3Noted = []string{
		"Renew the passport | need new photos", // 1
		"Plan the birthday party",              // 2
		"Fix the bike | back tyre is flat",     // 3
	}
)
