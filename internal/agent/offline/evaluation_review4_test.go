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
}
