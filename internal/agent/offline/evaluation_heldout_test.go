package offline

// heldOutCases are a held-out set of realistic messages, written without
// reading the parser, in the same notation as evaluationCases.
var heldOutCases = []evalCase{
	// Adding.
	{kind: "add", say: []string{"add renew the tv licence"}, want: []string{"Renew the tv licence"}},
	{kind: "add", say: []string{"can u add book a dentist checkup pls"}, want: []string{"Book a dentist checkup"}},
	{kind: "add", say: []string{"i need to return the parcel to amazon"}, want: []string{"Return the parcel to amazon"}},
	{kind: "add", say: []string{"new task - order new passport photos"}, want: []string{"Order new passport photos"}},
	{kind: "add", say: []string{"remind me to text Jess about saturday"}, want: []string{"Text Jess about saturday"}},
	{kind: "add", say: []string{"Could you add a task: call the insurance company"}, want: []string{"Call the insurance company"}},
	{kind: "add", say: []string{"add sort out the garage to my to do list"}, want: []string{"Sort out the garage"}},
	{kind: "add", say: []string{"create a task called Submit timesheet"}, want: []string{"Submit timesheet"}},
	{kind: "add", say: []string{"I've got to pick up the kids from football at 5"}, want: []string{"Pick up the kids from football at 5"}},
	{kind: "add", given: heldOutHome, say: []string{"add hoover the stairs"}, want: append(clone(heldOutHome), "Hoover the stairs")},

	// Titles stay clean.
	{kind: "titles", say: []string{"pls add buy toothpaste thx"}, want: []string{"Buy toothpaste"}},
	{kind: "titles", say: []string{"could you add a task for me to renew my gym membership?"}, want: []string{"Renew my gym membership"}},
	{kind: "titles", say: []string{"Add a task to Update the CV, please."}, want: []string{"Update the CV"}},
	{kind: "titles", say: []string{"add read chapter 3 of 'Dune'"}, want: []string{"Read chapter 3 of 'Dune'"}},
	{kind: "titles", say: []string{"Add a task to buy a gift for mum, thank you!"}, want: []string{"Buy a gift for mum"}},
	{kind: "titles", say: []string{"add a task to thank Sarah for the flowers"}, want: []string{"Thank Sarah for the flowers"}},
	{kind: "titles", say: []string{"add a task to ask Tom if he can help me move"}, want: []string{"Ask Tom if he can help me move"}},
	{kind: "titles", say: []string{"add a task to cancel the netflix subscription"}, want: []string{"Cancel the netflix subscription"}},
	{kind: "titles", say: []string{"Please add: Mark the exam papers"}, want: []string{"Mark the exam papers"}},
	{kind: "titles", say: []string{"add finish reading the book"}, want: []string{"Finish reading the book"}},

	// Listing.
	{kind: "list", given: heldOutHome, say: []string{"show me my todos"}, calls: "list_tasks(all)"},
	{kind: "list", given: heldOutHome, say: []string{"what's still open?"}, calls: "list_tasks(pending)"},
	{kind: "list", given: heldOutHome, say: []string{"what have i ticked off so far"}, calls: "list_tasks(completed)"},
	{kind: "list", given: heldOutHome, say: []string{"list everything pls"}, calls: "list_tasks(all)"},
	{kind: "list", given: heldOutHome, say: []string{"what's outstanding?"}, calls: "list_tasks(pending)"},
	{kind: "list", given: heldOutHome, say: []string{"can I see the finished ones?"}, calls: "list_tasks(completed)"},
	{kind: "list", given: heldOutHome, say: []string{"whats on my to do list"}, calls: "list_tasks(all)"},
	{kind: "list", given: heldOutHome, say: []string{"show me what I haven't done yet"}, calls: "list_tasks(pending)"},
	{kind: "list", given: heldOutHome, say: []string{"could you pull up my task list?"}, calls: "list_tasks(all)"},
	{kind: "list", given: heldOutHome, say: []string{"which ones have I already done?"}, calls: "list_tasks(completed)"},

	// Completing.
	{kind: "complete", given: heldOutHome, say: []string{"mark 2 as done"}, want: done(heldOutHome, 2)},
	{kind: "complete", given: heldOutHome, say: []string{"task 5 complete"}, want: done(heldOutHome, 5)},
	{kind: "complete", given: heldOutHome, say: []string{"i've emailed the landlord"}, want: done(heldOutHome, 2)},
	{kind: "complete", given: heldOutHome, say: []string{"booked the car service!"}, want: done(heldOutHome, 1)},
	{kind: "complete", given: heldOutHome, say: []string{"the bathroom is clean now"}, want: done(heldOutHome, 5)},
	{kind: "complete", given: heldOutHome, say: []string{"please tick off the birthday card one"}, want: done(heldOutHome, 4)},
	{kind: "complete", given: heldOutHome, say: []string{"mark #1 and #4 as complete"}, want: done(heldOutHome, 1, 4)},
	{kind: "complete", given: heldOutHome, say: []string{"got the birthday card for Anna"}, want: done(heldOutHome, 4)},
	{kind: "complete", given: heldOutWork, say: []string{"complete 1, 2 and 4"}, want: done(heldOutWork, 1, 2, 4)},
	{kind: "complete", given: heldOutHome, say: []string{"mark the landlord task done pls"}, want: done(heldOutHome, 2)},

	// Deleting.
	{kind: "delete", given: heldOutWork, say: []string{"delete #4"}, want: gone(heldOutWork, 4)},
	{kind: "delete", given: heldOutWork, say: []string{"remove the offsite task"}, want: gone(heldOutWork, 6)},
	{kind: "delete", given: heldOutWork, say: []string{"pls delete task 1 thx"}, want: gone(heldOutWork, 1)},
	{kind: "delete", given: heldOutWork, say: []string{"get rid of the roadmap one"}, want: gone(heldOutWork, 4)},
	{kind: "delete", given: heldOutWork, say: []string{"the offsite got cancelled, remove it from my list"}, want: gone(heldOutWork, 6)},
	{kind: "delete", given: heldOutWork, say: []string{"take task 2 off the list"}, want: gone(heldOutWork, 2)},
	{kind: "delete", given: heldOutWork, say: []string{"delete tasks 4 and 6"}, want: gone(heldOutWork, 4, 6)},
	{kind: "delete", given: heldOutWork, say: []string{"I don't need to review Tom's pull request anymore"}, want: gone(heldOutWork, 2)},
	{kind: "delete", given: heldOutWork, say: []string{"remove the accountant task"}, want: gone(heldOutWork, 5)},
	{kind: "delete", given: heldOutWork, say: []string{"bin the invoice task"}, want: gone(heldOutWork, 1)},

	// Changing a title or a description, and notes.
	{kind: "update", given: heldOutHome, say: []string{"change task 2 to email the landlord about the deposit"}, want: with(heldOutHome, 2, "Email the landlord about the deposit")},
	{kind: "update", given: heldOutHome, say: []string{"rename the car service task to book the MOT"}, want: with(heldOutHome, 1, "Book the MOT")},
	{kind: "update", given: heldOutNoted, say: []string{"add a note to the tap task: washer size is 15mm"}, want: with(heldOutNoted, 2, "Fix the leaking tap | washer size is 15mm")},
	{kind: "update", given: heldOutNoted, say: []string{"add a note to the paint task: 2 tins"}, want: with(heldOutNoted, 3, "Buy paint | white, matt; 2 tins")},
	{kind: "update", given: heldOutNoted, say: []string{"add a note to task 1: paid online last time"}, want: with(heldOutNoted, 1, "Pay the council tax | due 1st of the month; paid online last time")},
	{kind: "update", given: heldOutHome, say: []string{"update task 4 to buy a birthday card and a present for Anna"}, want: with(heldOutHome, 4, "Buy a birthday card and a present for Anna")},
	{kind: "update", given: heldOutHome, say: []string{"change the description of task 5 to use the new bleach"}, want: with(heldOutHome, 5, "Clean the bathroom | use the new bleach")},
	{kind: "update", given: heldOutWork, say: []string{"rename task 6 to 'Plan the Q3 offsite'"}, want: with(heldOutWork, 6, "Plan the Q3 offsite")},
	{kind: "update", given: heldOutWork, say: []string{"can you change the invoice task to send the invoice to Acme by Friday"}, want: with(heldOutWork, 1, "Send the invoice to Acme by Friday")},
	{kind: "update", given: heldOutNoted, say: []string{"set the description of the tap task to call a plumber if it's still dripping"}, want: with(heldOutNoted, 2, "Fix the leaking tap | call a plumber if it's still dripping")},

	// Follow-ups.
	{kind: "follow-up", say: []string{"add book a haircut", "actually delete that"}, want: []string{"-"}},
	{kind: "follow-up", say: []string{"add book a haircut", "change it to book a haircut for saturday"}, want: []string{"Book a haircut for saturday"}},
	{kind: "follow-up", say: []string{"remind me to call the bank", "actually I've already done that"}, want: []string{"[x] Call the bank"}},
	{kind: "follow-up", given: heldOutHome, say: []string{"what's left?", "mark the third one done"}, want: done(heldOutHome, 4)},
	{kind: "follow-up", given: heldOutHome, say: []string{"show me everything", "delete the last one"}, want: gone(heldOutHome, 5)},
	{kind: "follow-up", given: heldOutHome, say: []string{"what's pending", "the first two are done"}, want: done(heldOutHome, 1, 2)},
	{kind: "follow-up", given: heldOutWork, say: []string{"what's pending?", "remove the second one"}, want: gone(heldOutWork, 2)},
	{kind: "follow-up", given: heldOutWork, say: []string{"complete task 4", "oh and add a note to it: shared with the team"}, want: with(heldOutWork, 4, "[x] Update the project roadmap | shared with the team")},
	{kind: "follow-up", given: heldOutDoctors, say: []string{"delete the doctor task", "the prescription one"}, want: gone(heldOutDoctors, 3)},
	{kind: "follow-up", given: heldOutDoctors, say: []string{"mark the doctor one done", "the appointment one"}, want: done(heldOutDoctors, 2)},
	{kind: "follow-up", given: heldOutDoctors, say: []string{"delete the doctor task", "both of them"}, want: gone(heldOutDoctors, 2, 3)},
	{kind: "follow-up", given: heldOutDoctors, say: []string{"delete the doctor task", "actually, forget it"}},
	{kind: "follow-up", say: []string{"add water the plants", "and put the bins out"}, want: []string{"Water the plants", "Put the bins out"}},
	{kind: "follow-up", given: heldOutHome, say: []string{"add a task to buy wrapping paper", "mark it as done", "actually delete it"}, want: append(clone(heldOutHome), "-")},
	{kind: "follow-up", given: heldOutHome, say: []string{"is the bathroom done?", "ok mark it done"}, want: done(heldOutHome, 5)},
	{kind: "follow-up", say: []string{"add call grandma", "add a note to that: her new number is in my phone"}, want: []string{"Call grandma | her new number is in my phone"}},

	// Bulk requests.
	{kind: "bulk", given: heldOutWork, say: []string{"delete all completed tasks"}, want: gone(heldOutWork, 3, 5)},
	{kind: "bulk", given: heldOutWork, say: []string{"get rid of everything that's finished"}, want: gone(heldOutWork, 3, 5)},
	{kind: "bulk", given: heldOutWork, say: []string{"mark all my tasks as done"}, want: done(heldOutWork, 1, 2, 4, 6)},
	{kind: "bulk", given: heldOutHome, say: []string{"i've done everything on my list!"}, want: done(heldOutHome, 1, 2, 4, 5)},
	{kind: "bulk", given: heldOutWork, say: []string{"wipe my whole list"}},
	{kind: "bulk", given: heldOutWork, say: []string{"wipe my whole list", "yes please"}, want: gone(heldOutWork, 1, 2, 3, 4, 5, 6)},
	{kind: "bulk", given: heldOutWork, say: []string{"delete everything", "no wait"}},
	{kind: "bulk", given: heldOutHome, say: []string{"remove all tasks", "yep"}, want: gone(heldOutHome, 1, 2, 3, 4, 5)},
	{kind: "bulk", given: evalMeetings, say: []string{"mark every meeting task as done"}, want: done(evalMeetings, 2, 3, 4)},
	{kind: "bulk", given: heldOutDoctors, say: []string{"remove all the doctor tasks"}, want: gone(heldOutDoctors, 2, 3)},
	{kind: "bulk", given: heldOutWork, say: []string{"show me what's still open", "tick them all off"}, want: done(heldOutWork, 1, 2, 4, 6)},
	{kind: "bulk", given: heldOutHome, say: []string{"mark everything pending as complete"}, want: done(heldOutHome, 1, 2, 4, 5)},

	// Several requests in one message.
	{kind: "several", given: heldOutHome, say: []string{"add buy milk and delete task 5"}, want: append(gone(heldOutHome, 5), "Buy milk")},
	{kind: "several", given: heldOutHome, say: []string{"mark task 1 done, then delete task 3"}, want: gone(done(heldOutHome, 1), 3)},
	{kind: "several", say: []string{"add 3 tasks: hoover, dust, mop"}, want: []string{"Hoover", "Dust", "Mop"}},
	{kind: "several", given: heldOutHome, say: []string{"finish task 2 and show me what's left"}, want: done(heldOutHome, 2), calls: "complete_task(2) list_tasks(pending)"},
	{kind: "several", given: heldOutWork, say: []string{"delete the roadmap task and mark the offsite as done"}, want: gone(done(heldOutWork, 6), 4)},
	{kind: "several", say: []string{"add call the vet. add buy cat food."}, want: []string{"Call the vet", "Buy cat food"}},
	{kind: "several", given: heldOutHome, say: []string{"I emailed the landlord and cleaned the bathroom"}, want: done(heldOutHome, 2, 5)},
	{kind: "several", given: heldOutHome, say: []string{"rename task 4 to buy a card for Anna and mark task 1 done"}, want: done(with(heldOutHome, 4, "Buy a card for Anna"), 1)},
	{kind: "several", say: []string{"add book the venue, then add send the invitations"}, want: []string{"Book the venue", "Send the invitations"}},
	{kind: "several", given: heldOutHome, say: []string{"add renew the parking permit, and add a note to it: online at the council site"}, want: append(clone(heldOutHome), "Renew the parking permit | online at the council site")},
	{kind: "several", given: heldOutWork, say: []string{"show my pending tasks then delete task 3"}, want: gone(heldOutWork, 3), calls: "list_tasks(pending) delete_task(3)"},
	{kind: "several", given: heldOutWork, say: []string{"delete task 20 and add call Acme"}, want: append(clone(heldOutWork), "Call Acme")},

	// Honesty: ask when unsure, answer questions without changing anything.
	{kind: "honesty", given: heldOutDoctors, say: []string{"delete the doctor task"}, calls: "list_tasks(all)"},
	{kind: "honesty", given: heldOutHome, say: []string{"mark the dishwasher task done"}, calls: "list_tasks(all)"},
	{kind: "honesty", given: heldOutHome, say: []string{"did I email the landlord yet?"}, calls: "list_tasks(all)"},
	{kind: "honesty", given: heldOutHome, say: []string{"have I returned the library books?"}, calls: "list_tasks(all)"},
	{kind: "honesty", given: heldOutHome, say: []string{"remove it"}, calls: "none"},
	{kind: "honesty", given: heldOutHome, say: []string{"rename it to call the garage"}, calls: "none"},
	{kind: "honesty", given: heldOutHome, say: []string{"complete"}, calls: "none"},
	{kind: "honesty", given: heldOutHome, say: []string{"the bathroom one"}, calls: "none"},
	{kind: "honesty", given: heldOutWork, say: []string{"is the expense report done?"}, calls: "list_tasks(all)"},
	{kind: "honesty", given: heldOutHome, say: []string{"ok"}, calls: "none"},

	// Outside the list, and small talk.
	{kind: "outside", given: heldOutHome, say: []string{"how do I make pancakes?"}, calls: "none"},
	{kind: "outside", given: heldOutHome, say: []string{"what's 15% of 80"}, calls: "none"},
	{kind: "outside", given: heldOutHome, say: []string{"hi there!"}, calls: "none"},
	{kind: "outside", given: heldOutHome, say: []string{"who are you?"}, calls: "none"},
	{kind: "outside", given: heldOutHome, say: []string{"what's the capital of Australia?"}, calls: "none"},
	{kind: "outside", given: heldOutHome, say: []string{"cheers"}, calls: "none"},
	{kind: "outside", given: heldOutHome, say: []string{"recommend a good book"}, calls: "none"},
	{kind: "outside", given: heldOutHome, say: []string{"set an alarm for 7am"}, calls: "none"},
	{kind: "outside", given: heldOutHome, say: []string{"how are you doing today?"}, calls: "none"},
	{kind: "outside", given: heldOutHome, say: []string{"write me a poem about cats"}, calls: "none"},
}

// The lists the held-out cases start from.
var (
	heldOutHome = []string{
		"Book the car service",
		"Email the landlord",
		"[x] Return library books",
		"Buy a birthday card for Anna",
		"Clean the bathroom",
	}
	heldOutWork = []string{
		"Send the invoice to Acme",
		"Review Tom's pull request",
		"[x] Submit expense report",
		"Update the project roadmap",
		"[x] Call the accountant",
		"Plan the offsite",
	}
	heldOutDoctors = []string{
		"Call the vet",
		"Book doctor appointment",
		"Pick up prescription from the doctor",
		"Water the plants",
	}
	heldOutNoted = []string{
		"Pay the council tax | due 1st of the month",
		"Fix the leaking tap",
		"Buy paint | white, matt",
	}
)
