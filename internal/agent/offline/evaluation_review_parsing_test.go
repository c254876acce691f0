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
