package offline

// reviewParsingCases are messages from the second held-out review
// (2026-11-26) about reading one message: numbers, lists, exceptions, add
// requests and what is not a task.
var reviewParsingCases = []evalCase{
	// A list of numbers is one list, whatever follows it: cut before
	// "5 as done", "everything except 3 and" completed the 5 it was to
	// leave out.
	{kind: "except", given: parsingHome, say: []string{"mark everything except 3 and 5 as done"}, want: done(parsingHome, 1, 4, 7)},
	{kind: "except", given: parsingHome, say: []string{"mark all except 1 and 4 as complete"}, want: done(parsingHome, 3, 5, 7)},
	{kind: "except", given: parsingHome, say: []string{"mark all my tasks except 1, 3 and 4 as finished"}, want: done(parsingHome, 5, 7)},
	{kind: "except", given: parsingHome, say: []string{"tick off everything but tasks 3 & 4 as done"}, want: done(parsingHome, 1, 5, 7)},
	{kind: "except", given: parsingHome, say: []string{"delete everything except 3 and 5 as done"}},
	{kind: "numbers", given: parsingHome, say: []string{"mark tasks one and three as done"}, want: done(parsingHome, 1, 3)},
	{kind: "numbers", given: parsingHome, say: []string{"complete one and four"}, want: done(parsingHome, 1, 4)},
	{kind: "numbers", given: parsingHome, say: []string{"delete two, four and five"}, want: gone(parsingHome, 2, 4, 5)},
	{kind: "numbers", given: parsingHome, say: []string{"mark 3 and 4 as done please"}, want: done(parsingHome, 3, 4)},

	// What the tools cannot do, said of a task, is said so, never added
	// as a task; "yes" after it adds nothing. The same words said of no
	// task may still be a task.
	{kind: "honesty", given: parsingHome, say: []string{"make task 5 high priority"}, calls: "none"},
	{kind: "honesty", given: parsingHome, say: []string{"remind me about task 3 tomorrow at 9"}, calls: "none"},
	{kind: "honesty", given: parsingHome, say: []string{"move task 3 to the top", "yes"}},
	{kind: "honesty", given: parsingHome, say: []string{"restore the task I deleted", "yes"}},
	{kind: "honesty", given: parsingHome, say: []string{"flag #4 as urgent", "yes"}},
	{kind: "honesty", given: parsingHome, say: []string{"remind me about the dentist task on monday", "yes"}},
	{kind: "honesty", given: parsingHome, say: []string{"put the bike task at the top of my list", "yes"}},
	{kind: "honesty", given: parsingHome, say: []string{"schedule task 4 for friday at 5pm", "yes"}},
	{kind: "add", say: []string{"make a task 5 minute plank"}, want: []string{"5 minute plank"}},
	{kind: "add", say: []string{"remind me to move the car tomorrow"}, want: []string{"Move the car tomorrow"}},
	{kind: "add", say: []string{"add the task to call mom"}, want: []string{"Call mom"}},
	{kind: "add", say: []string{"put the task to call mom on my list"}, want: []string{"Call mom"}},
	// Thanks, goodbyes and questions typed as in a chat are answered.
	{kind: "outside", given: parsingHome, say: []string{"whats the weather like tmrw", "yes"}},
	{kind: "outside", given: parsingHome, say: []string{"thank u so much!! 😊", "yes"}},
	{kind: "outside", given: parsingHome, say: []string{"good night", "yes"}},
	{kind: "outside", given: parsingHome, say: []string{"ok thanks, bye!", "yes"}},
	{kind: "outside", given: parsingHome, say: []string{"thanks for all your help", "yes"}},
	{kind: "outside", given: parsingHome, say: []string{"hows ur day going", "yes"}},
	{kind: "outside", given: parsingHome, say: []string{"thanks, gotta go", "yes"}},
	{kind: "outside", say: []string{"ok i have to go now"}, calls: "none"},
	{kind: "add", say: []string{"need to go to the bank"}, want: []string{"Go to the bank"}},

	// Task numbers written as people write them.
	{kind: "numbers", given: parsingHome, say: []string{"Task 4: done ✅"}, want: done(parsingHome, 4)},
	{kind: "numbers", given: parsingHome, say: []string{"#5: finished"}, want: done(parsingHome, 5)},
	{kind: "numbers", given: parsingHome, say: []string{"task 7 - done"}, want: done(parsingHome, 7)},
	{kind: "numbers", given: parsingHome, say: []string{"finish no.3"}, want: done(parsingHome, 3)},
	{kind: "numbers", given: parsingHome, say: []string{"mark task no. 4 complete"}, want: done(parsingHome, 4), calls: "complete_task(4)"},
	{kind: "numbers", given: parsingHome, say: []string{"delete nr. 2"}, want: gone(parsingHome, 2)},
	// "The 3rd task" with nothing shown is the third of the list; after a
	// listing, the third of what was shown.
	{kind: "numbers", given: parsingHome, say: []string{"mark the 3rd task complete"}, want: done(parsingHome, 3)},
	{kind: "numbers", given: parsingHome, say: []string{"remove the 5th task"}, want: gone(parsingHome, 5)},
	{kind: "numbers", given: parsingHome, say: []string{"tick off the first task"}, want: done(parsingHome, 1)},
	{kind: "numbers", given: parsingHome, say: []string{"delete the last task on my list"}, want: gone(parsingHome, 7)},
	{kind: "numbers", given: parsingHome, say: []string{"mark the 9th task done"}, calls: "list_tasks(all)"},
	{kind: "numbers", given: parsingHome, say: []string{"what's pending?", "delete the 2nd task"}, want: gone(parsingHome, 3)},

	// Adds without "I", with a typo in the frame, in chat spelling, with
	// unusual frames, and numbered.
	{kind: "add", say: []string{"need to call the landlord"}, want: []string{"Call the landlord"}},
	{kind: "add", say: []string{"gotta buy a birthday present for Sam"}, want: []string{"Buy a birthday present for Sam"}},
	{kind: "add", say: []string{"have to pick up the dry cleaning"}, want: []string{"Pick up the dry cleaning"}},
	{kind: "add", say: []string{"got to renew the car insurance"}, want: []string{"Renew the car insurance"}},
	{kind: "add", say: []string{"must haves for the trip", "yes"}, want: []string{"Must haves for the trip"}},
	{kind: "delete", given: parsingHome, say: []string{"need to delete task 3"}, want: gone(parsingHome, 3)},
	{kind: "add", say: []string{"remnd me to call the vet"}, want: []string{"Call the vet"}},
	{kind: "add", say: []string{"remeber to water the plants"}, want: []string{"Water the plants"}},
	{kind: "add", say: []string{"creat a task to book the hotel"}, want: []string{"Book the hotel"}},
	{kind: "add", say: []string{"crate the dog", "yes"}, want: []string{"Crate the dog"}},
	{kind: "add", say: []string{"adding: return the library books"}, want: []string{"Return the library books"}},
	{kind: "add", say: []string{"add a to do: update my linkedin profile"}, want: []string{"Update my linkedin profile"}},
	{kind: "add", say: []string{"add to do: wash the car"}, want: []string{"Wash the car"}},
	{kind: "add", say: []string{"I need to 1) call the bank 2) email HR"}, want: []string{"Call the bank", "Email HR"}},
	{kind: "add", say: []string{"add 1) milk, 2) eggs and 3) bread"}, want: []string{"Milk", "Eggs", "Bread"}},
	{kind: "add", say: []string{"add buy 2) things"}, want: []string{"Buy 2) things"}},
	{kind: "list", given: parsingHome, say: []string{"wat do i have to do"}, calls: "list_tasks(pending)"},
	{kind: "list", given: parsingHome, say: []string{"wat's left"}, calls: "list_tasks(pending)"},

	// Phrasing: "instead" ends no title, "set {task}'s title to", "first"
	// before a request, what "I did", and a task named before "it".
	{kind: "update", given: parsingHome, say: []string{"can you rename the garage task to clean the attic instead"}, want: with(parsingHome, 7, "Clean the attic")},
	{kind: "update", given: parsingHome, say: []string{"change task 4 to call dad instead"}, want: with(parsingHome, 4, "Call dad")},
	{kind: "update", given: parsingHome, say: []string{"set task 2's title to pay the gas bill"}, want: with(parsingHome, 2, "[x] Pay the gas bill")},
	{kind: "update", given: parsingHome, say: []string{"set the dentist task's name to dentist on friday"}, want: with(parsingHome, 3, "Dentist on friday")},
	{kind: "several", say: []string{"first add walk the dog, then mark it done"}, want: []string{"[x] Walk the dog"}},
	{kind: "list", given: parsingHome, say: []string{"next show my list"}, calls: "list_tasks(all)"},
	{kind: "list", given: parsingHome, say: []string{"show me the stuff i already did"}, calls: "list_tasks(completed)"},
	{kind: "list", given: parsingHome, say: []string{"list the things we did"}, calls: "list_tasks(completed)"},
	{kind: "delete", given: parsingHome, say: []string{"nevermind the bike, delete it"}, want: gone(parsingHome, 5)},
	{kind: "delete", given: parsingHome, say: []string{"as for task 7, delete it"}, want: gone(parsingHome, 7)},
	{kind: "complete", given: parsingHome, say: []string{"the dentist one, mark it done"}, want: done(parsingHome, 3)},
	{kind: "delete", given: parsingCalls, say: []string{"buy milk, then delete it"}},

	// A reason said with a request names no task; a range said to be
	// done leaves alone what was done already, and says so.
	{kind: "delete", given: parsingHome, say: []string{"pls delete the passport one, its done anyway"}, want: gone(parsingHome, 6), calls: "list_tasks(all) delete_task(6)"},
	{kind: "delete", given: parsingHome, say: []string{"delete task 3 because I don't need it"}, want: gone(parsingHome, 3), calls: "delete_task(3)"},
	{kind: "complete", given: parsingHome, say: []string{"mark the bike done, since I fixed it yesterday"}, want: done(parsingHome, 5)},
	{kind: "add", say: []string{"remind me to call mom since it's her birthday"}, want: []string{"Call mom since it's her birthday"}},
	{kind: "complete", given: parsingHome, say: []string{"complete tasks 1 thru 4"}, want: done(parsingHome, 1, 3, 4),
		calls: "list_tasks(all) complete_task(1) complete_task(3) complete_task(4)"},
	{kind: "complete", given: parsingHome, say: []string{"finish 5-7"}, want: done(parsingHome, 5, 7), calls: "list_tasks(all) complete_task(5) complete_task(7)"},
	{kind: "complete", given: parsingHome, say: []string{"mark the passport task as done", "delete it"}, want: gone(parsingHome, 6)},
}

var (
	// parsingHome is a home list with two tasks done.
	parsingHome = []string{
		"Buy groceries",
		"[x] Pay the electricity bill",
		"Dentist appointment on Tuesday",
		"Call mom",
		"Fix the bike",
		"[x] Renew passport",
		"Clean the garage",
	}
	// parsingCalls has two tasks that start alike.
	parsingCalls = []string{"Call the plumber", "Call the bank", "Buy milk"}
)
