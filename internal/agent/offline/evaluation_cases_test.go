package offline

// evaluationCases are realistic messages and short conversations, by kind.
// See evalCase for the notation.
var evaluationCases = []evalCase{
	// The product's own examples.
	{kind: "spec", say: []string{"Add a task to buy groceries"}, want: []string{"Buy groceries"}},
	{kind: "spec", say: []string{"I need to remember to pay bills"}, want: []string{"Pay bills"}},
	{kind: "spec", given: evalList, say: []string{"Show me all my tasks"}, calls: "list_tasks(all)"},
	{kind: "spec", given: evalList, say: []string{"What's pending?"}, calls: "list_tasks(pending)"},
	{kind: "spec", given: evalList, say: []string{"What have I completed?"}, calls: "list_tasks(completed)"},
	{kind: "spec", given: evalList, say: []string{"Mark task 3 as complete"}, want: done(evalList, 3)},
	{kind: "spec", given: evalList, say: []string{"Delete the meeting task"}, want: gone(evalList, 4)},
	{kind: "spec", given: evalList, say: []string{"Change task 1 to 'Call mom tonight'"}, want: with(evalList, 1, "Call mom tonight")},

	// Adding, said in many ways.
	{kind: "add", say: []string{"add buy milk"}, want: []string{"Buy milk"}},
	{kind: "add", say: []string{"Add a task to call the plumber"}, want: []string{"Call the plumber"}},
	{kind: "add", say: []string{"Please remind me to call the dentist."}, want: []string{"Call the dentist"}},
	{kind: "add", say: []string{"remind me to water the plants tomorrow"}, want: []string{"Water the plants tomorrow"}},
	{kind: "add", say: []string{"Create a task: book flights"}, want: []string{"Book flights"}},
	{kind: "add", say: []string{"new task: finish the report"}, want: []string{"Finish the report"}},
	{kind: "add", say: []string{"Add a new task called Clean garage"}, want: []string{"Clean garage"}},
	{kind: "add", say: []string{"I have to renew my passport"}, want: []string{"Renew my passport"}},
	{kind: "add", say: []string{"I need to buy new shoes"}, want: []string{"Buy new shoes"}},
	{kind: "add", say: []string{"I must send the invoice by Friday"}, want: []string{"Send the invoice by Friday"}},
	{kind: "add", say: []string{"I should really clean the fridge"}, want: []string{"Really clean the fridge"}},
	{kind: "add", say: []string{"don't let me forget to pick up the kids"}, want: []string{"Pick up the kids"}},
	{kind: "add", say: []string{"Don't forget to call grandma on Sunday"}, want: []string{"Call grandma on Sunday"}},
	{kind: "add", say: []string{"todo: renew car insurance"}, want: []string{"Renew car insurance"}},
	{kind: "add", say: []string{"put call the bank on my list"}, want: []string{"Call the bank"}},
	{kind: "add", say: []string{"put on my list: get a haircut"}, want: []string{"Get a haircut"}},
	{kind: "add", say: []string{"Remember to delete old emails"}, want: []string{"Delete old emails"}},
	{kind: "add", say: []string{`Add "renew passport" to my list`}, want: []string{"Renew passport"}},
	{kind: "add", say: []string{"add 'Water the plants'"}, want: []string{"Water the plants"}},
	{kind: "add", say: []string{"jot down: email Sarah about the offsite"}, want: []string{"Email Sarah about the offsite"}},
	{kind: "add", say: []string{"I'm going to need to book a vet appointment"}, want: []string{"Book a vet appointment"}},
	{kind: "add", say: []string{"make a reminder to take out the recycling"}, want: []string{"Take out the recycling"}},
	{kind: "add", say: []string{"add buy milk with description two litres, semi-skimmed"}, want: []string{"Buy milk | two litres, semi-skimmed"}},
	{kind: "add", say: []string{"Add call bob: description about the 3pm meeting"}, want: []string{"Call bob | about the 3pm meeting"}},
	{kind: "add", say: []string{"I gotta fix the bike"}, want: []string{"Fix the bike"}},
	{kind: "add", say: []string{"make sure I book the restaurant"}, want: []string{"Book the restaurant"}},
	{kind: "add", say: []string{"note to self: back up the laptop"}, want: []string{"Back up the laptop"}},
	{kind: "add", say: []string{"can you add pay rent to my todo list?"}, want: []string{"Pay rent"}},
	{kind: "add", say: []string{"add to my list: pick up dry cleaning"}, want: []string{"Pick up dry cleaning"}},
	{kind: "add", say: []string{"I need to buy bread and butter"}, want: []string{"Buy bread and butter"}},
	{kind: "add", say: []string{"add a task to read and review the contract"}, want: []string{"Read and review the contract"}},
	{kind: "add", say: []string{"remind me about the parent-teacher meeting"}, want: []string{"Parent-teacher meeting"}},
	{kind: "add", say: []string{"I want to learn Spanish"}, want: []string{"Learn Spanish"}},
	{kind: "add", given: evalList, say: []string{"add prepare slides for Monday"}, want: append(clone(evalList), "Prepare slides for Monday")},

	// Titles stay clean: no politeness, no frame, nothing cut from the middle.
	{kind: "titles", say: []string{"please add buy groceries, thanks!"}, want: []string{"Buy groceries"}},
	{kind: "titles", say: []string{"can you add a task to call mom for me please"}, want: []string{"Call mom"}},
	{kind: "titles", say: []string{"Could you please remind me to pay the electricity bill? Thanks"}, want: []string{"Pay the electricity bill"}},
	{kind: "titles", say: []string{"hey, add walk the dog"}, want: []string{"Walk the dog"}},
	{kind: "titles", say: []string{"ok so add get new tyres for the car"}, want: []string{"Get new tyres for the car"}},
	{kind: "titles", say: []string{"add buy a new phone charger please"}, want: []string{"Buy a new phone charger"}},
	{kind: "titles", say: []string{"I need to buy a new mattress, thanks"}, want: []string{"Buy a new mattress"}},
	{kind: "titles", say: []string{"Add a task to complete the tax return"}, want: []string{"Complete the tax return"}},
	{kind: "titles", say: []string{"add a task to remove the old fence"}, want: []string{"Remove the old fence"}},
	{kind: "titles", say: []string{"add task: change the oil"}, want: []string{"Change the oil"}},
	{kind: "titles", say: []string{"Add 'Pick up: keys'"}, want: []string{"Pick up: keys"}},
	{kind: "titles", say: []string{"add a reminder to show the house to the buyers"}, want: []string{"Show the house to the buyers"}},
	{kind: "titles", say: []string{"ADD A TASK TO BUY GROCERIES!"}, want: []string{"BUY GROCERIES"}},
	{kind: "titles", say: []string{"add call mom asap"}, want: []string{"Call mom asap"}},
	{kind: "titles", say: []string{"kindly add schedule the team lunch to my to-do list"}, want: []string{"Schedule the team lunch"}},
	{kind: "titles", say: []string{"Hi! Please add a task to water the garden, thank you"}, want: []string{"Water the garden"}},
	{kind: "titles", say: []string{"add Mark's birthday present"}, want: []string{"Mark's birthday present"}},
	{kind: "titles", say: []string{"add list the old bikes for sale"}, want: []string{"List the old bikes for sale"}},
	{kind: "titles", say: []string{"add 3 eggs to the list"}, want: []string{"3 eggs"}},
	{kind: "titles", say: []string{"add two new tasks: eggs and flour"}, want: []string{"Eggs", "Flour"}},

	// Listing.
	{kind: "list", given: evalList, say: []string{"list my tasks"}, calls: "list_tasks(all)"},
	{kind: "list", given: evalList, say: []string{"my tasks"}, calls: "list_tasks(all)"},
	{kind: "list", given: evalList, say: []string{"What are my tasks?"}, calls: "list_tasks(all)"},
	{kind: "list", given: evalList, say: []string{"what's on my list?"}, calls: "list_tasks(all)"},
	{kind: "list", given: evalList, say: []string{"anything left?"}, calls: "list_tasks(pending)"},
	{kind: "list", given: evalList, say: []string{"what's left to do?"}, calls: "list_tasks(pending)"},
	{kind: "list", given: evalList, say: []string{"what do I still have to do"}, calls: "list_tasks(pending)"},
	{kind: "list", given: evalList, say: []string{"pending?"}, calls: "list_tasks(pending)"},
	{kind: "list", given: evalList, say: []string{"Which tasks are not done yet?"}, calls: "list_tasks(pending)"},
	{kind: "list", given: evalList, say: []string{"show completed tasks"}, calls: "list_tasks(completed)"},
	{kind: "list", given: evalList, say: []string{"what did I finish?"}, calls: "list_tasks(completed)"},
	{kind: "list", given: evalList, say: []string{"how many tasks do I have?"}, calls: "list_tasks(all)"},
	{kind: "list", given: evalList, say: []string{"show me everything"}, calls: "list_tasks(all)"},
	{kind: "list", given: evalList, say: []string{"todo list?"}, calls: "list_tasks(all)"},
	{kind: "list", given: evalList, say: []string{"can you show me my open tasks please"}, calls: "list_tasks(pending)"},
	{kind: "list", given: evalList, say: []string{"I'd like to see my list"}, calls: "list_tasks(all)"},
	{kind: "list", given: evalList, say: []string{"what's on my plate today?"}, calls: "list_tasks(pending)"},
	{kind: "list", given: evalList, say: []string{"do I have anything due?"}, calls: "list_tasks(pending)"},
	{kind: "list", given: evalList, say: []string{"what have I got done so far?"}, calls: "list_tasks(completed)"},
	{kind: "list", given: evalList, say: []string{"give me my to-do list"}, calls: "list_tasks(all)"},
	{kind: "list", given: evalList, say: []string{"is there anything I haven't done?"}, calls: "list_tasks(pending)"},
	{kind: "list", given: evalList, say: []string{"remaining tasks"}, calls: "list_tasks(pending)"},

	// Completing.
	{kind: "complete", given: evalList, say: []string{"complete task 3"}, want: done(evalList, 3)},
	{kind: "complete", given: evalList, say: []string{"task 3 is done"}, want: done(evalList, 3)},
	{kind: "complete", given: evalList, say: []string{"I finished task 3!"}, want: done(evalList, 3)},
	{kind: "complete", given: evalList, say: []string{"done with #3"}, want: done(evalList, 3)},
	{kind: "complete", given: evalList, say: []string{"I’m done with task 4"}, want: done(evalList, 4)},
	{kind: "complete", given: evalList, say: []string{"mark task three as done"}, want: done(evalList, 3)},
	{kind: "complete", given: evalList, say: []string{"Mark tasks 3 and 4 as complete"}, want: done(evalList, 3, 4)},
	{kind: "complete", given: evalList, say: []string{"Mark the groceries task as done"}, want: done(evalList, 1)},
	{kind: "complete", given: evalList, say: []string{"check off the dentist task"}, want: done(evalList, 3)},
	{kind: "complete", given: evalList, say: []string{"tick off #5"}, want: done(evalList, 5)},
	{kind: "complete", given: evalList, say: []string{"cross off call the dentist"}, want: done(evalList, 3)},
	{kind: "complete", given: evalList, say: []string{"I already called the dentist"}, want: done(evalList, 3)},
	{kind: "complete", given: evalList, say: []string{"I bought the groceries"}, want: done(evalList, 1)},
	{kind: "complete", given: evalList, say: []string{"just finished the quarterly report"}, want: done(evalList, 5)},
	{kind: "complete", given: evalList, say: []string{"the report is done"}, want: done(evalList, 5)},
	{kind: "complete", given: evalList, say: []string{"groceries done"}, want: done(evalList, 1)},
	{kind: "complete", given: evalList, say: []string{"I've done the team meeting prep"}, want: done(evalList, 4)},
	{kind: "complete", given: evalList, say: []string{"finally wrote the quarterly report"}, want: done(evalList, 5)},
	{kind: "complete", given: evalList, say: []string{"I went to the gym"}, want: done(evalList, 6)},
	{kind: "complete", given: evalList, say: []string{"Please mark #4 complete, thanks"}, want: done(evalList, 4)},
	{kind: "complete", given: evalList, say: []string{"finish task 6"}, want: done(evalList, 6)},
	{kind: "complete", given: evalList, say: []string{"set task 5 to done"}, want: done(evalList, 5)},
	{kind: "complete", given: evalList, say: []string{"I need to mark task 4 as done"}, want: done(evalList, 4)},
	{kind: "complete", given: evalList, say: []string{"the gym task is finished"}, want: done(evalList, 6)},

	// Deleting.
	{kind: "delete", given: evalList, say: []string{"Delete task 2"}, want: gone(evalList, 2)},
	{kind: "delete", given: evalList, say: []string{"remove task #2"}, want: gone(evalList, 2)},
	{kind: "delete", given: evalList, say: []string{"cancel task 2, please"}, want: gone(evalList, 2)},
	{kind: "delete", given: evalList, say: []string{"get rid of #2 and #5"}, want: gone(evalList, 2, 5)},
	{kind: "delete", given: evalList, say: []string{"remove the groceries task"}, want: gone(evalList, 1)},
	{kind: "delete", given: evalList, say: []string{"scratch the gym"}, want: gone(evalList, 6)},
	{kind: "delete", given: evalList, say: []string{"I don't need to go to the gym anymore"}, want: gone(evalList, 6)},
	{kind: "delete", given: evalList, say: []string{"forget about the quarterly report"}, want: gone(evalList, 5)},
	{kind: "delete", given: evalList, say: []string{"take the dentist off my list"}, want: gone(evalList, 3)},
	{kind: "delete", given: evalList, say: []string{"no need to buy groceries anymore"}, want: gone(evalList, 1)},
	{kind: "delete", given: evalList, say: []string{"the gym task is no longer needed"}, want: gone(evalList, 6)},
	{kind: "delete", given: evalList, say: []string{"drop task 6"}, want: gone(evalList, 6)},
	{kind: "delete", given: evalList, say: []string{"erase the meeting prep"}, want: gone(evalList, 4)},
	{kind: "delete", given: evalList, say: []string{"delete tasks 1, 2 and 3"}, want: gone(evalList, 1, 2, 3)},
	{kind: "delete", given: evalList, say: []string{"I no longer need to pay the bills"}, want: gone(evalList, 2)},
	{kind: "delete", given: evalList, say: []string{"please remove task two"}, want: gone(evalList, 2)},
	{kind: "delete", given: evalList, say: []string{"delete the milk and the gym tasks"}, want: gone(evalList, 6)},

	// Changing a title or a description, and notes.
	{kind: "update", given: evalList, say: []string{"rename task 1 to call mom tonight"}, want: with(evalList, 1, "Call mom tonight")},
	{kind: "update", given: evalList, say: []string{"edit task 5 to say 'Pick up: keys'"}, want: with(evalList, 5, "Pick up: keys")},
	{kind: "update", given: evalList, say: []string{"update task 1 title to Buy groceries and wine"}, want: with(evalList, 1, "Buy groceries and wine")},
	{kind: "update", given: evalList, say: []string{"update task 1 description to bring the photos"}, want: with(evalList, 1, "Buy groceries | bring the photos")},
	{kind: "update", given: evalList, say: []string{"Change the description of task #4 to: two dozen"}, want: with(evalList, 4, "Prepare the team meeting | two dozen")},
	{kind: "update", given: evalList, say: []string{"rename the groceries task to buy fruit"}, want: with(evalList, 1, "Buy fruit")},
	{kind: "update", given: evalList, say: []string{"change the gym task to go running"}, want: with(evalList, 6, "Go running")},
	{kind: "update", given: evalList, say: []string{"add a note to the dentist task: bring the insurance card"}, want: with(evalList, 3, "Call the dentist | bring the insurance card")},
	{kind: "update", given: evalList, say: []string{"add a note to task 2 saying the gas one is overdue"}, want: with(evalList, 2, "[x] Pay bills | the gas one is overdue")},
	{kind: "update", given: evalNotes, say: []string{"add a note to the groceries task: also eggs"}, want: with(evalNotes, 1, "Buy groceries | milk, bread; also eggs")},
	{kind: "update", given: evalList, say: []string{"set the description of the report task to Q3 numbers"}, want: with(evalList, 5, "Write the quarterly report | Q3 numbers")},
	{kind: "update", given: evalList, say: []string{"task 6 should say go swimming"}, want: with(evalList, 6, "Go swimming")},
	{kind: "update", given: evalList, say: []string{"please change task 3 to call the dentist at 9am"}, want: with(evalList, 3, "Call the dentist at 9am")},
	{kind: "update", given: evalList, say: []string{"rename it"}, calls: "none"},

	// Follow-ups that refer to the previous turn.
	{kind: "follow-up", say: []string{"add buy milk", "actually, remove it"}, want: []string{"-"}},
	{kind: "follow-up", say: []string{"add buy milk", "rename it to buy oat milk"}, want: []string{"Buy oat milk"}},
	{kind: "follow-up", say: []string{"add buy milk", "mark it done"}, want: []string{"[x] Buy milk"}},
	{kind: "follow-up", say: []string{"add buy milk", "scratch that"}, want: []string{"-"}},
	{kind: "follow-up", say: []string{"add buy milk", "that one is done"}, want: []string{"[x] Buy milk"}},
	{kind: "follow-up", say: []string{"add buy milk", "add a note to it: the organic one"}, want: []string{"Buy milk | the organic one"}},
	{kind: "follow-up", given: evalList, say: []string{"what's pending?", "the second one is done"}, want: done(evalList, 3)},
	{kind: "follow-up", given: evalList, say: []string{"what's pending?", "delete the last one"}, want: gone(evalList, 6)},
	{kind: "follow-up", given: evalList, say: []string{"what's pending?", "finish the first one"}, want: done(evalList, 1)},
	{kind: "follow-up", given: evalList, say: []string{"show my tasks", "remove the third one"}, want: gone(evalList, 3)},
	{kind: "follow-up", given: evalList, say: []string{"what's pending?", "finish all of those"}, want: done(evalList, 1, 3, 4, 5, 6)},
	{kind: "follow-up", given: evalList, say: []string{"mark task 3 as done", "actually, delete it"}, want: gone(evalList, 3)},
	{kind: "follow-up", given: evalList, say: []string{"Delete the meeting task"}, want: gone(evalList, 4)},
	{kind: "follow-up", given: evalMeetings, say: []string{"Delete the meeting task", "the second one"}, want: gone(evalMeetings, 3)},
	{kind: "follow-up", given: evalMeetings, say: []string{"Delete the meeting task", "4"}, want: gone(evalMeetings, 4)},
	{kind: "follow-up", given: evalTwoMeetings, say: []string{"Delete the meeting task", "both"}, want: gone(evalTwoMeetings, 2, 3)},
	{kind: "honesty", given: evalMeetings, say: []string{"Delete the meeting task", "both"}, calls: "none"},
	{kind: "follow-up", given: evalMeetings, say: []string{"finish the meeting task", "the budget one"}, want: done(evalMeetings, 3)},
	{kind: "follow-up", given: evalMeetings, say: []string{"complete the meeting task", "all of them"}, want: done(evalMeetings, 2, 3, 4)},
	{kind: "follow-up", given: evalMeetings, say: []string{"Delete the meeting task", "never mind"}},
	{kind: "follow-up", given: evalList, say: []string{"add call the bank and pay the rent", "mark them done"}, want: append(clone(evalList), "[x] Call the bank", "[x] Pay the rent")},
	{kind: "follow-up", given: evalList, say: []string{"add buy salt and pepper", "mark it done"}, want: append(clone(evalList), "[x] Buy salt and pepper")},
	{kind: "follow-up", say: []string{"add three tasks: eggs, flour and sugar", "delete both of the last two"}, want: []string{"Eggs", "-", "-"}},
	{kind: "follow-up", given: evalList, say: []string{"what's pending?", "mark the first two as done"}, want: done(evalList, 1, 3)},
	{kind: "follow-up", say: []string{"remind me to call mom and to pay rent", "mark both done"}, want: []string{"[x] Call mom", "[x] Pay rent"}},
	{kind: "follow-up", say: []string{"remind me to call mom and to pay rent", "delete them"}, want: []string{"-", "-"}},
	{kind: "follow-up", say: []string{"remind me to call mom and to pay rent", "delete it"}, want: []string{"Call mom", "Pay rent"}, calls: "none"},
	{kind: "follow-up", given: evalList, say: []string{"did I finish the report?", "mark it done then"}, want: done(evalList, 5)},
	{kind: "follow-up", given: evalList, say: []string{"add a task", "buy stamps"}, want: append(clone(evalList), "Buy stamps")},
	{kind: "follow-up", given: evalList, say: []string{"buy stamps", "yes"}, want: append(clone(evalList), "Buy stamps")},
	{kind: "follow-up", given: evalList, say: []string{"buy stamps", "no"}},
	{kind: "follow-up", given: evalList, say: []string{"change task 1", "buy groceries and flowers"}, want: with(evalList, 1, "Buy groceries and flowers")},
	{kind: "follow-up", given: evalList, say: []string{"delete", "task 6"}, want: gone(evalList, 6)},
	{kind: "follow-up", given: evalList, say: []string{"show my tasks", "thanks", "delete the first one"}, want: gone(evalList, 1)},
	{kind: "follow-up", given: evalList, say: []string{"add walk the dog", "and also feed the cat"}, want: append(clone(evalList), "Walk the dog", "Feed the cat")},
	{kind: "follow-up", given: evalList, say: []string{"what's pending?", "the second one", "delete it"}, want: gone(evalList, 3)},
	{kind: "follow-up", given: evalList, say: []string{"what's pending?", "all of them", "mark them done"}, want: done(evalList, 1, 3, 4, 5, 6)},
	{kind: "follow-up", given: evalList, say: []string{"show my tasks", "delete", "the second one"}, want: gone(evalList, 2)},
	{kind: "follow-up", given: evalMeetings, say: []string{"delete the meeting task", "thanks", "the second one", "delete it"}, want: gone(evalMeetings, 3)},

	// Bulk requests.
	{kind: "bulk", given: evalList, say: []string{"delete everything I've completed"}, want: gone(evalList, 2)},
	{kind: "bulk", given: evalDone, say: []string{"clear completed tasks"}, want: gone(evalDone, 2, 4)},
	{kind: "bulk", given: evalDone, say: []string{"remove all the done ones"}, want: gone(evalDone, 2, 4)},
	{kind: "bulk", given: evalList, say: []string{"mark everything as done"}, want: done(evalList, 1, 3, 4, 5, 6)},
	{kind: "bulk", given: evalList, say: []string{"complete all my tasks"}, want: done(evalList, 1, 3, 4, 5, 6)},
	{kind: "bulk", given: evalList, say: []string{"what's left?", "finish all of those"}, want: done(evalList, 1, 3, 4, 5, 6)},
	{kind: "bulk", given: evalList, say: []string{"show pending tasks", "mark all of them done"}, want: done(evalList, 1, 3, 4, 5, 6)},
	{kind: "bulk", given: evalList, say: []string{"delete all my tasks"}, calls: "list_tasks(all)"},
	{kind: "bulk", given: evalList, say: []string{"delete all my tasks", "yes"}, want: gone(evalList, 1, 2, 3, 4, 5, 6)},
	{kind: "bulk", given: evalList, say: []string{"clear my list", "no"}},
	{kind: "bulk", given: evalMeetings, say: []string{"delete all the meeting tasks"}, want: gone(evalMeetings, 2, 3, 4)},
	{kind: "bulk", given: evalList, say: []string{"clear out everything that's done"}, want: gone(evalList, 2)},
	{kind: "bulk", given: evalList, say: []string{"what have I completed?", "delete them"}, want: gone(evalList, 2)},
	{kind: "bulk", say: []string{"delete everything I've completed"}, calls: "list_tasks(all)"},
	{kind: "bulk", given: evalList, say: []string{"tick off everything"}, want: done(evalList, 1, 3, 4, 5, 6)},

	// All but some: the exception is left alone, never acted on.
	{kind: "except", given: evalList, say: []string{"mark everything done except the dentist"}, want: done(evalList, 1, 4, 5, 6)},
	{kind: "except", given: evalList, say: []string{"complete all my tasks but the gym"}, want: done(evalList, 1, 3, 4, 5)},
	{kind: "except", given: evalList, say: []string{"complete everything other than the report"}, want: done(evalList, 1, 3, 4, 6)},
	{kind: "except", given: evalList, say: []string{"tick off everything apart from tasks 3 and 5"}, want: done(evalList, 1, 4, 6)},
	{kind: "except", given: evalList, say: []string{"show my tasks", "finish all of them except for the groceries and the gym"}, want: done(evalList, 3, 4, 5)},
	{kind: "except", given: evalList, say: []string{"delete everything but the dentist"}, calls: "list_tasks(all)"},
	{kind: "except", given: evalList, say: []string{"delete everything but the dentist", "yes"}, want: gone(evalList, 1, 2, 4, 5, 6)},
	{kind: "except", given: evalList, say: []string{"delete all tasks except buy groceries", "yes"}, want: gone(evalList, 2, 3, 4, 5, 6)},
	{kind: "except", given: evalDone, say: []string{"clear the completed ones apart from the bills"}, want: gone(evalDone, 4)},
	{kind: "except", given: evalList, say: []string{"remove everything besides the meeting", "yes"}, want: gone(evalList, 1, 2, 3, 5, 6)},
	{kind: "except", given: evalList, say: []string{"mark everything done except the yoga class"}, calls: "list_tasks(all)"},
	{kind: "except", given: evalList, say: []string{"delete everything except the yoga class", "yes"}},

	// Several task numbers, said as people say them.
	{kind: "numbers", given: evalList, say: []string{"mark 1, 3 and 4 done"}, want: done(evalList, 1, 3, 4)},
	{kind: "numbers", given: evalList, say: []string{"complete #3,#4"}, want: done(evalList, 3, 4)},
	{kind: "numbers", given: evalList, say: []string{"complete tasks 3, 4, 5"}, want: done(evalList, 3, 4, 5)},
	{kind: "numbers", given: evalList, say: []string{"delete tasks 3 through 5"}, want: gone(evalList, 3, 4, 5)},
	{kind: "numbers", given: evalList, say: []string{"delete 4-6"}, want: gone(evalList, 4, 5, 6)},
	{kind: "numbers", given: evalList, say: []string{"mark tasks 3 to 5 as done"}, want: done(evalList, 3, 4, 5)},

	// Contractions.
	{kind: "contractions", given: evalList, say: []string{"let's delete task 3"}, want: gone(evalList, 3)},
	{kind: "contractions", say: []string{"let's add fix the leaking tap"}, want: []string{"Fix the leaking tap"}},
	{kind: "contractions", given: evalList, say: []string{"let's see my list"}, calls: "list_tasks(all)"},
	{kind: "contractions", given: evalList, say: []string{"there's no need to go to the gym anymore"}, want: gone(evalList, 6)},
	{kind: "contractions", given: evalList, say: []string{"delete all my tasks", "that's right"}, want: gone(evalList, 1, 2, 3, 4, 5, 6)},

	// Titles lose the name of the list they go on, and thanks.
	{kind: "titles", say: []string{"Add buy stamps to my shopping list"}, want: []string{"Buy stamps"}},
	{kind: "titles", say: []string{`add "read chapter 3" to my reading list`}, want: []string{"Read chapter 3"}},
	{kind: "titles", say: []string{`Please add "Renew gym membership" thanks so much!`}, want: []string{"Renew gym membership"}},
	{kind: "titles", say: []string{"put pick up the parcel on the errands list"}, want: []string{"Pick up the parcel"}},
	{kind: "titles", say: []string{"add print the guest list"}, want: []string{"Print the guest list"}},

	// What the tools cannot do is said, not offered as a task.
	{kind: "honesty", given: evalList, say: []string{"reopen task 2"}, calls: "none"},
	{kind: "honesty", given: evalList, say: []string{"reopen task 2", "yes"}, calls: "none"},
	{kind: "honesty", given: evalList, say: []string{"mark task 2 as not done", "yes"}, calls: "none"},
	{kind: "honesty", given: evalList, say: []string{"set the due date of task 3 to friday", "yes"}, calls: "none"},
	{kind: "honesty", given: evalList, say: []string{"change the priority of task 3 to high", "yes"}, calls: "none"},
	{kind: "add", say: []string{"add deadline for the grant application"}, want: []string{"Deadline for the grant application"}},

	// A place in a list is the list last shown; what was deleted is gone.
	{kind: "follow-up", given: evalList, say: []string{"show my tasks", "add buy bread", "delete the second one"}, want: append(gone(evalList, 2), "Buy bread")},
	{kind: "follow-up", given: evalList, say: []string{"show my tasks", "delete the second one", "delete the third one"}, want: gone(evalList, 2, 3)},
	{kind: "follow-up", given: evalMeetings, say: []string{"delete the budget meeting", "delete the second one"}, want: gone(evalMeetings, 3), calls: "none"},
	{kind: "follow-up", given: evalList, say: []string{"delete task 3", "delete it"}, want: gone(evalList, 3), calls: "none"},

	// Two tasks joined by "and" are two when the second starts with what to do.
	{kind: "titles", say: []string{"remind me to email Bob and book a table"}, want: []string{"Email Bob", "Book a table"}},
	{kind: "titles", say: []string{"I need to buy eggs and call mom"}, want: []string{"Buy eggs", "Call mom"}},
	{kind: "titles", say: []string{"add pick up dry cleaning and also walk the dog"}, want: []string{"Pick up dry cleaning", "Walk the dog"}},
	{kind: "titles", say: []string{"add email Bob, book a table"}, want: []string{"Email Bob", "Book a table"}},
	{kind: "titles", say: []string{"Add 'Call mom' and 'Pay rent'"}, want: []string{"Call mom", "Pay rent"}},
	{kind: "titles", say: []string{"Add a task to buy groceries and also add one to call the bank"}, want: []string{"Buy groceries", "Call the bank"}},
	{kind: "titles", say: []string{"add buy salt and pepper"}, want: []string{"Buy salt and pepper"}},
	{kind: "titles", say: []string{"add wash and dry the dishes"}, want: []string{"Wash and dry the dishes"}},
	{kind: "titles", say: []string{"add call the plumber and ask about the leak"}, want: []string{"Call the plumber and ask about the leak"}},
	{kind: "titles", say: []string{"add call mom and text her the address"}, want: []string{"Call mom and text her the address"}},
	{kind: "titles", say: []string{"add clean the kitchen and the bathroom"}, want: []string{"Clean the kitchen and the bathroom"}},
	{kind: "titles", say: []string{"add call mom and dad"}, want: []string{"Call mom and dad"}},
	{kind: "titles", say: []string{"add research and write the report"}, want: []string{"Research and write the report"}},
	{kind: "titles", say: []string{"add buy a book and read it"}, want: []string{"Buy a book and read it"}},

	// From the review of the rules above: what they must not take.
	{kind: "except", given: evalList, say: []string{"complete everything except task 9"}, calls: "list_tasks(all)"},
	{kind: "except", given: evalList, say: []string{"delete all but task 9", "yes"}},
	{kind: "update", given: evalList, say: []string{"change task 1 to call mom about the deadline"}, want: with(evalList, 1, "Call mom about the deadline")},
	{kind: "update", given: evalList, say: []string{"rename task 1 to submit before the deadline"}, want: with(evalList, 1, "Submit before the deadline")},
	{kind: "add", say: []string{"I need to set up a meeting about the deadline"}, want: []string{"Set up a meeting about the deadline"}},
	{kind: "titles", say: []string{"add buy cat food and water bowl"}, want: []string{"Buy cat food and water bowl"}},
	{kind: "titles", say: []string{"add buy paper and print cartridges"}, want: []string{"Buy paper and print cartridges"}},
	{kind: "titles", say: []string{"remind me to buy stamps and post cards"}, want: []string{"Buy stamps and post cards"}},
	{kind: "titles", say: []string{"add buy snacks and water the plants"}, want: []string{"Buy snacks", "Water the plants"}},
	{kind: "titles", say: []string{"add put Bob on the guest list"}, want: []string{"Put Bob on the guest list"}},
	{kind: "titles", say: []string{"add get on the waiting list"}, want: []string{"Get on the waiting list"}},
	{kind: "titles", say: []string{"remind me to add Sam to the mailing list"}, want: []string{"Add Sam to the mailing list"}},
	{kind: "titles", say: []string{"add milk to my grocery list"}, want: []string{"Milk"}},
	{kind: "follow-up", given: evalList, say: []string{"show my tasks", "add buy bread", "delete the first one"}, want: append(gone(evalList, 1), "Buy bread")},
	{kind: "follow-up", given: evalList, say: []string{"add buy milk and buy eggs", "delete the last one"}, want: append(clone(evalList), "Buy milk")},

	// What is there to do, with a day said.
	{kind: "list", given: evalList, say: []string{"what do I need to do today?"}, calls: "list_tasks(pending)"},
	{kind: "list", given: evalList, say: []string{"what have I got to do today?"}, calls: "list_tasks(pending)"},
	{kind: "list", given: evalList, say: []string{"what do I have to do tomorrow?"}, calls: "list_tasks(pending)"},

	// Several requests in one message.
	{kind: "several", given: evalList, say: []string{"add call the bank and mark task 3 done"}, want: append(done(evalList, 3), "Call the bank")},
	{kind: "several", given: evalList, say: []string{"delete 4 then add call the bank"}, want: append(gone(evalList, 4), "Call the bank")},
	{kind: "several", say: []string{"add three tasks: buy eggs, call bob and walk the dog"}, want: []string{"Buy eggs", "Call bob", "Walk the dog"}},
	{kind: "several", say: []string{"remind me to call mom and to pay rent"}, want: []string{"Call mom", "Pay rent"}},
	{kind: "several", say: []string{"add these tasks: laundry; dishes; vacuum"}, want: []string{"Laundry", "Dishes", "Vacuum"}},
	{kind: "several", given: evalList, say: []string{"add buy stamps, then show my list"}, want: append(clone(evalList), "Buy stamps"), calls: "add_task(Buy stamps) list_tasks(all)"},
	{kind: "several", given: evalList, say: []string{"complete task 3 and delete task 6"}, want: gone(done(evalList, 3), 6)},
	{kind: "several", given: evalList, say: []string{"Mark task 1 done. Add book a table for Friday."}, want: append(done(evalList, 1), "Book a table for Friday")},
	{kind: "several", given: evalList, say: []string{"add call mom and mark task 99 done"}, want: append(clone(evalList), "Call mom"), calls: "add_task(Call mom) complete_task(99)"},
	{kind: "several", given: evalList, say: []string{"delete the gym task and add go swimming"}, want: append(gone(evalList, 6), "Go swimming")},
	{kind: "several", given: evalList, say: []string{"add milk and eggs"}, want: append(clone(evalList), "Milk and eggs")},
	{kind: "several", given: evalList, say: []string{"finish the report and the dentist"}, want: done(evalList, 3, 5)},
	{kind: "several", given: evalList, say: []string{"add pick up parcel\nadd return library books"}, want: append(clone(evalList), "Pick up parcel", "Return library books")},
	{kind: "several", given: evalList, say: []string{"I called the dentist and I went to the gym"}, want: done(evalList, 3, 6)},
	{kind: "several", given: evalList, say: []string{"rename task 1 to buy fruit and delete task 2"}, want: gone(with(evalList, 1, "Buy fruit"), 2)},
	{kind: "several", given: evalList, say: []string{"add buy stamps and then mark it done"}, want: append(clone(evalList), "[x] Buy stamps")},
	{kind: "several", given: evalList, say: []string{"add 2 tasks: call the vet, order dog food"}, want: append(clone(evalList), "Call the vet", "Order dog food")},
	{kind: "several", given: evalList, say: []string{"delete task 6, also what's left?"}, want: gone(evalList, 6), calls: "delete_task(6) list_tasks(pending)"},
	{kind: "several", given: evalList, say: []string{"show my completed tasks and my pending ones"}, calls: "list_tasks(completed) list_tasks(pending)", limit: "a second listing joined by and is read as part of the first"},

	// Honesty: when it cannot tell, it says what it understood and asks.
	{kind: "honesty", given: evalMeetings, say: []string{"Delete the meeting task"}, calls: "list_tasks(all)"},
	{kind: "honesty", given: evalList, say: []string{"remove the dentist appointment thing"}, calls: "list_tasks(all)"},
	{kind: "honesty", given: evalList, say: []string{"remove the dentist appointment thing", "yes"}, want: gone(evalList, 3)},
	{kind: "honesty", given: evalList, say: []string{"delete the yoga task"}, calls: "list_tasks(all)"},
	{kind: "honesty", given: evalList, say: []string{"delete"}, calls: "none"},
	{kind: "honesty", given: evalList, say: []string{"mark it done"}, calls: "none"},
	{kind: "honesty", given: evalList, say: []string{"add a task"}, calls: "none"},
	{kind: "honesty", given: evalList, say: []string{"I'm done"}, calls: "none"},
	{kind: "honesty", given: evalList, say: []string{"complete task 42"}, calls: "complete_task(42)"},
	{kind: "honesty", given: evalList, say: []string{"buy stamps"}, calls: "none"},
	{kind: "honesty", given: evalList, say: []string{"3"}, calls: "none"},
	{kind: "honesty", given: evalList, say: []string{"the second one"}, calls: "none"},
	{kind: "honesty", given: evalList, say: []string{"actually, delete the report task"}, want: gone(evalList, 5)},
	{kind: "honesty", given: evalList, say: []string{"did I finish the report?"}, calls: "list_tasks(all)"},
	{kind: "honesty", given: evalList, say: []string{"is task 2 done?"}, calls: "list_tasks(all)"},
	{kind: "honesty", given: evalList, say: []string{"yes"}, calls: "none"},
	{kind: "honesty", given: evalList, say: []string{"no"}, calls: "none"},
	{kind: "honesty", given: evalList, say: []string{"rename task 1"}, calls: "none"},
	{kind: "honesty", given: evalList, say: []string{"I did it"}, calls: "none"},
	// A reference alone, with no question open, is asked about: it was read
	// as "complete", so "all of them" after a listing completed everything.
	{kind: "honesty", given: evalList, say: []string{"what's pending?", "all of them"}, calls: "none"},
	{kind: "honesty", given: evalList, say: []string{"what's pending?", "the second one"}, calls: "none"},
	{kind: "honesty", given: evalList, say: []string{"add buy milk", "it"}, want: append(clone(evalList), "Buy milk"), calls: "none"},
	{kind: "honesty", given: evalList, say: []string{"everything"}, calls: "none"},
	// Only the last reply's question is open: a "yes" after another reply
	// does not confirm a deletion asked about before it.
	{kind: "honesty", given: evalList, say: []string{"delete all my tasks", "what can you do?", "yes"}, calls: "none"},
	{kind: "honesty", given: evalList, say: []string{"buy stamps", "tell me a joke", "ok"}, calls: "none"},
	// A question is never cut into requests: "5 done?" completed task 5.
	{kind: "honesty", given: evalList, say: []string{"are tasks 3 and 5 done?"}, calls: "list_tasks(all)"},
	{kind: "honesty", given: evalList, say: []string{"is the gym and the report done?"}, calls: "list_tasks(all)"},
	{kind: "honesty", given: evalList, say: []string{"has the dentist been called?", "yes"}, calls: "none"},
	// A denial completes nothing, not even after "yes".
	{kind: "honesty", given: evalList, say: []string{"the report isn't done", "yes"}, calls: "none"},
	{kind: "honesty", given: evalList, say: []string{"mark task 3 as not done"}, calls: "none"},
	{kind: "honesty", given: evalList, say: []string{"don't delete task 3", "yes"}, calls: "none"},
	// A name with more words than a title is asked about, not acted on.
	{kind: "honesty", given: []string{"Gym", "Buy milk"}, say: []string{"delete the gym bag task"}, calls: "list_tasks(all)"},
	{kind: "honesty", given: []string{"Gym", "Buy milk"}, say: []string{"delete the gym bag task", "yes"}, want: []string{"-", "Buy milk"}},
	{kind: "honesty", given: evalList, say: []string{"mark as done"}, calls: "none"},
	{kind: "honesty", given: evalList, say: []string{"complete task 3", "undo that", "yes"}, want: done(evalList, 3), calls: "none"},

	// Outside the list, and small talk.
	{kind: "outside", given: evalList, say: []string{"what's the weather?"}, calls: "none"},
	{kind: "outside", given: evalList, say: []string{"tell me a joke"}, calls: "none"},
	{kind: "outside", given: evalList, say: []string{"who won the game last night?"}, calls: "none"},
	{kind: "outside", given: evalList, say: []string{"what is the meaning of life, the universe and everything, and how do I bake bread"}, calls: "none"},
	{kind: "outside", given: evalList, say: []string{"how tall is Mount Everest?"}, calls: "none"},
	{kind: "outside", given: evalList, say: []string{"what time is it"}, calls: "none"},
	{kind: "outside", given: evalList, say: []string{"hello"}, calls: "none"},
	{kind: "outside", given: evalList, say: []string{"thanks!"}, calls: "none"},
	{kind: "outside", given: evalList, say: []string{"help"}, calls: "none"},
	{kind: "outside", given: evalList, say: []string{"What can you do?"}, calls: "none"},
	{kind: "outside", given: evalList, say: []string{"good morning"}, calls: "none"},
	{kind: "outside", given: evalList, say: []string{"can you book me a flight to Paris?"}, calls: "none"},
	{kind: "outside", given: evalList, say: []string{"translate hello into French"}, calls: "none"},
	{kind: "outside", given: evalList, say: []string{"lol"}, calls: "none"},
}

// The lists the cases start from.
var (
	evalList = []string{
		"Buy groceries",
		"[x] Pay bills",
		"Call the dentist",
		"Prepare the team meeting",
		"Write the quarterly report",
		"Go to the gym",
	}
	evalMeetings = []string{
		"Buy groceries",
		"Team meeting at 10",
		"Budget meeting with finance",
		"Meeting notes for Monday",
	}
	evalTwoMeetings = []string{
		"Buy groceries",
		"Team meeting at 10",
		"Budget meeting with finance",
	}
	evalDone = []string{
		"Buy groceries",
		"[x] Pay bills",
		"Call the dentist",
		"[x] Renew passport",
	}
	evalNotes = []string{
		"Buy groceries | milk, bread",
		"Call the dentist",
	}
)

func clone(list []string) []string { return append([]string(nil), list...) }

// done returns list with the tasks numbered ns completed.
func done(list []string, ns ...int) []string {
	out := clone(list)
	for _, n := range ns {
		if out[n-1] != "-" && !hasDonePrefix(out[n-1]) {
			out[n-1] = "[x] " + out[n-1]
		}
	}
	return out
}

func hasDonePrefix(s string) bool { return len(s) > 4 && s[:4] == "[x] " }

// gone returns list with the tasks numbered ns deleted.
func gone(list []string, ns ...int) []string {
	out := clone(list)
	for _, n := range ns {
		out[n-1] = "-"
	}
	return out
}

// with returns list with task n replaced.
func with(list []string, n int, task string) []string {
	out := clone(list)
	out[n-1] = task
	return out
}
