package results

import (
	"fmt"
	"strings"

	"github.com/taskchat/taskchat/internal/agent/offline/grammar"
)

// This file words the questions and offers a reply makes and the examples
// they give. A task number in an example stays grammar.AnyTask until the
// executor knows one of the person's own tasks to name: "Change task 3"
// would point at a task that may not exist.

// Stays says that the change a turn made on t stays made.
func Stays(a grammar.Action, t Task) string {
	switch a {
	case grammar.ActDelete:
		return fmt.Sprintf("Task %d, %s, stays deleted: I can't bring a deleted task back, but I can add it again.", t.ID, t.Title)
	case grammar.ActComplete:
		return fmt.Sprintf("Task %d, %s, stays complete: I can't reopen a task.", t.ID, t.Title)
	}
	return fmt.Sprintf("Okay — task %d, %s, stays on your list as it is.", t.ID, t.Title)
}

// OfferText asks whether to make change a on tasks, nothing done yet.
func OfferText(a grammar.Action, tasks []Task) string {
	return fmt.Sprintf("I haven't changed anything yet. A \"yes\" would %s:\n%s\nSay \"yes\" to go ahead, or \"no\" to leave your list as it is.",
		ActionVerbs[a], TaskLines(tasks))
}

func OfferAddText(items []grammar.Item) string {
	if len(items) == 1 {
		return fmt.Sprintf("Should I add %q to your list? Say \"yes\" to add it.", items[0].Title)
	}
	titles := make([]string, len(items))
	for i, it := range items {
		titles[i] = fmt.Sprintf("- %s", it.Title)
	}
	return fmt.Sprintf("Should I add these %d tasks to your list?\n%s\nSay \"yes\" to add them all.", len(items), strings.Join(titles, "\n"))
}

// ActionVerbs and actionExamples word the questions about each action.
var (
	ActionVerbs = map[grammar.Action]string{
		grammar.ActComplete: "mark as complete", grammar.ActDelete: "delete", grammar.ActUpdate: "change", grammar.ActNote: "add the note to", grammar.ActQuery: "check",
	}
	actionExamples = map[grammar.Action]string{
		grammar.ActComplete: "Complete task %d", grammar.ActDelete: "Delete task %d", grammar.ActUpdate: "Change task %d to 'Call mom tonight'",
		grammar.ActNote: "Task %d", grammar.ActQuery: "Is task %d done?",
	}
)

// Example is the Example of asking for act on task id, or on whichever
// task the reply can name when id is 0.
func Example(a grammar.Action, id int64) string {
	number := grammar.AnyTask
	if id > 0 {
		number = fmt.Sprint(id)
	}
	return strings.Replace(actionExamples[a], "%d", number, 1)
}

func WhatToDoText(targets []Task) string {
	switch {
	case len(targets) == 0:
		return `What should I do? For example: "Mark task ` + grammar.AnyTask + ` as complete", "Delete task ` + grammar.AnyTask + `" or "What's pending?"`
	case targets[0].Title == "": // known by number only
		ids := make([]int64, len(targets))
		for i, t := range targets {
			ids[i] = t.ID
		}
		return fmt.Sprintf("What should I do with %s? For example: \"Mark task %d as complete\" or \"Delete task %d\".", TaskNumbers(ids), ids[0], ids[0])
	case len(targets) == 1:
		return fmt.Sprintf("What should I do with task %d, %s? For example: \"Mark it as complete\" or \"Delete it\".", targets[0].ID, targets[0].Title)
	}
	return fmt.Sprintf("What should I do with these %d tasks?\n%s\nFor example: \"Mark them as complete\" or \"Delete them\".", len(targets), TaskLines(targets))
}

func NothingToDo(a grammar.Action, status string) string {
	what := map[string]string{"all": "no tasks", "pending": "no open tasks", "completed": "no completed tasks"}[status]
	return fmt.Sprintf("You have %s, so there was nothing to %s.", what, ActionVerbs[a])
}

// FillExamples names known tasks, one after another, in text's examples;
// with none known, it says what goes there.
func FillExamples(text string, known []Task) string {
	var b strings.Builder
	for i, part := range strings.Split(text, grammar.AnyTask) {
		if i > 0 {
			if len(known) == 0 {
				b.WriteString("<number>")
			} else {
				b.WriteString(fmt.Sprint(known[(i-1)%len(known)].ID))
			}
		}
		b.WriteString(part)
	}
	return b.String()
}
