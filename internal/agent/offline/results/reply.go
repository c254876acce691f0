package results

import (
	"fmt"
	"strings"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/agent/offline/grammar"
	"github.com/taskchat/taskchat/internal/tasks"
)

// ConfirmRound says what each call of the round did, one line per call:
// the reply when a round holds calls the steps did not expect.
func ConfirmRound(r Round) string {
	lines := make([]string, 0, len(r.Calls))
	for _, call := range r.Calls {
		lines = append(lines, ConfirmCall(call, r.Outcome(call)))
	}
	return strings.Join(lines, "\n")
}

// ConfirmCall says what call did, read from out: a line of the reply.
func ConfirmCall(call agent.ToolCall, out Outcome) string {
	switch {
	case out.Status == tasks.AwaitingStatus:
		return fmt.Sprintf("I'll %s once you approve.", whatWaits(call, out))
	case out.Status == tasks.DeclinedStatus:
		return fmt.Sprintf("OK, I won't %s, as you declined.", whatWaits(call, out))
	case out.Error != "":
		if id := callArgs(call).TaskID; id > 0 && strings.Contains(strings.ToLower(out.Error), "not found") {
			return TaskNotFound(id) // said plainly
		}
		return Sentence(out.Error)
	case out.Text != "" && out.TaskID == 0 && out.Tasks == nil:
		return Sentence(out.Text)
	case call.Name == ToolListTasks:
		return describeList(callArgs(call).Status, out.Tasks, out.NextCursor != "")
	case toolWords[call.Name].done != "":
		return Sentence(fmt.Sprintf(toolWords[call.Name].done, out.TaskID, out.Title))
	}
	return fmt.Sprintf("Done (%s).", call.Name)
}

// toolWords say what a call to each tool did on one task, once made, and
// what it would do (verb) while it waits.
var toolWords = map[string]struct{ done, verb string }{
	ToolAddTask:      {"Added task %d: %s", "add"},
	ToolCompleteTask: {"Marked task %d as complete: %s", "complete"},
	ToolDeleteTask:   {"Deleted task %d: %s", "delete"},
	ToolUpdateTask:   {"Updated task %d: %s", "change"},
	ToolListTasks:    {verb: "list"},
}

// whatWaits says what a call that waits for its person would do: "delete
// task 3 (Buy milk)".
func whatWaits(call agent.ToolCall, out Outcome) string {
	verb := toolWords[call.Name].verb
	switch id := callArgs(call).TaskID; {
	case verb == "":
		return "run " + call.Name
	case out.Title != "" && id > 0:
		return fmt.Sprintf("%s task %d (%s)", verb, id, out.Title)
	case id > 0:
		return fmt.Sprintf("%s task %d", verb, id)
	case call.Name == ToolAddTask:
		return fmt.Sprintf("add %q", callArgs(call).Title)
	}
	return verb + " your tasks"
}

// ShownTasks is how many tasks a reply lists at most: a longer listing
// shows its first ShownTasks and says how to see the others. They are the
// tasks a listing's record keeps with their titles (tasks.SummaryTasks), so
// that "the second one" in a later message reads the same in the history.
const ShownTasks = tasks.SummaryTasks

// describeList writes a listing's tasks a line each, the first ShownTasks
// of a longer one; more says more follow than were listed.
func describeList(status string, ts []Task, more bool) string {
	n := len(ts)
	noun := "task"
	if status == "pending" || status == "completed" {
		noun = status + " task"
	}
	var head string
	switch {
	case more:
		head = fmt.Sprintf("You have more than %s; here are the first %d:", Plural(n, noun), min(n, ShownTasks))
	case n > ShownTasks:
		head = fmt.Sprintf("You have %s; here are the first %d:", Plural(n, noun), ShownTasks)
	case status == "pending" && n == 0:
		return "You have no pending tasks — all caught up!"
	case status == "completed" && n == 0:
		return "You haven't completed any tasks yet."
	case n == 0:
		return `You have no tasks yet. Try "Add a task to buy groceries".`
	case status == "completed":
		head = fmt.Sprintf("You have completed %s:", Plural(n, "task"))
	default:
		head = fmt.Sprintf("You have %s:", Plural(n, noun))
	}
	return head + "\n" + PageLines(ts) // a page with a cursor holds a task or more
}

// PageLines is TaskLines of ts when they are ShownTasks or fewer; of more,
// the first ShownTasks by their titles only, so that the page stays short
// enough to be read and to stay in the history a later message sees, and
// how to see the others in words the offline model understands: a range of
// task numbers (at most 20), a word of a title, or one task.
func PageLines(ts []Task) string {
	if len(ts) <= ShownTasks {
		return TaskLines(ts)
	}
	page := make([]Task, ShownTasks)
	for i, t := range ts[:ShownTasks] {
		page[i] = Task{ID: t.ID, Title: t.Title, Completed: t.Completed}
	}
	next := ts[ShownTasks].ID
	return TaskLines(page) + "\n" + fmt.Sprintf("To see more, say \"show me tasks %d to %d\", or ask about a word of a title (\"anything about groceries?\"); "+
		"\"show me task %d\" shows one with its description.", next, next+19, next)
}

// TaskLines is tasks as a Markdown checklist: "- [x] #3 Call mom", a line each.
func TaskLines(ts []Task) string {
	lines := make([]string, len(ts))
	for i, t := range ts {
		box := "[ ]"
		if t.Completed {
			box = "[x]"
		}
		lines[i] = strings.TrimRight(fmt.Sprintf("- %s #%d %s", box, t.ID, t.Title), " ") // a task known by its number only
		if t.Description != "" {
			lines[i] += " — " + t.Description
		}
	}
	return strings.Join(lines, "\n")
}

// Plural says n of noun: "1 task", "3 tasks".
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// Sentence ends s with a full stop unless it already ends a sentence.
func Sentence(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasSuffix(s, ".") || strings.HasSuffix(s, "!") || strings.HasSuffix(s, "?") {
		return s
	}
	return s + "."
}

// TaskNotFound says plainly that a task number names no task.
func TaskNotFound(id int64) string {
	return fmt.Sprintf("I couldn't find task %d — want to see your list?", id)
}

// TaskNumbers names tasks by number: "task 3", "tasks 3, 4 and 5".
func TaskNumbers(ts []Task) string {
	if len(ts) == 1 {
		return fmt.Sprintf("task %d", ts[0].ID)
	}
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = fmt.Sprint(t.ID)
	}
	return "tasks " + strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// DescribeTargets names tasks for a question: "task 3, Call mom," or "tasks 3 and 4".
func DescribeTargets(targets []Task) string {
	if len(targets) == 1 && targets[0].Title != "" {
		return fmt.Sprintf("task %d, %s,", targets[0].ID, targets[0].Title)
	}
	return TaskNumbers(targets)
}

// Stays says that the change a turn made on t stays made.
func Stays(a grammar.Action, t Task) string {
	switch a {
	case grammar.ActDelete:
		return fmt.Sprintf("Task %d, %s, stays deleted: I can't bring a deleted task back, but I can add it again.", t.ID, t.Title)
	case grammar.ActComplete:
		return fmt.Sprintf("Task %d, %s, stays complete: I can't reopen a task from a message yet.", t.ID, t.Title)
	}
	return fmt.Sprintf("Okay — task %d, %s, stays on your list as it is.", t.ID, t.Title)
}

// OfferText asks whether to make change a on tasks, nothing done yet.
func OfferText(a grammar.Action, tasks []Task) string {
	return fmt.Sprintf("I haven't changed anything yet. A \"yes\" would %s:\n%s\nSay \"yes\" to go ahead, or \"no\" to leave your list as it is.",
		Actions[a].Verb, TaskLines(tasks))
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

// Actions word the questions about each action: what it does to tasks, to
// the one a "yes" answers about (OnIt), and a request for it (see Example).
var Actions = map[grammar.Action]struct{ Verb, OnIt, Request string }{
	grammar.ActComplete: {"mark as complete", "mark it as complete", "Complete task %d"},
	grammar.ActDelete:   {"delete", "delete it", "Delete task %d"},
	grammar.ActUpdate:   {"change", "change it", "Change task %d to 'Call mom tonight'"},
	grammar.ActNote:     {"add the note to", "add the note to it", "Task %d"},
	grammar.ActQuery:    {"check", "check it", "Is task %d done?"},
}

// Example is a request for act on task id; with id 0, on grammar.AnyTask,
// for the executor to name a task the person has, not one that may not exist.
func Example(a grammar.Action, id int64) string {
	number := grammar.AnyTask
	if id > 0 {
		number = fmt.Sprint(id)
	}
	return strings.Replace(Actions[a].Request, "%d", number, 1)
}

func WhatToDoText(targets []Task) string {
	switch {
	case len(targets) == 0:
		return `What should I do? For example: "Mark task ` + grammar.AnyTask + ` as complete", "Delete task ` + grammar.AnyTask + `" or "What's pending?"`
	case targets[0].Title == "": // known by number only
		id := targets[0].ID
		return fmt.Sprintf("What should I do with %s? For example: \"Mark task %d as complete\" or \"Delete task %d\".", TaskNumbers(targets), id, id)
	case len(targets) == 1:
		return fmt.Sprintf("What should I do with task %d, %s? For example: \"Mark it as complete\" or \"Delete it\".", targets[0].ID, targets[0].Title)
	}
	return fmt.Sprintf("What should I do with these %d tasks?\n%s\nFor example: \"Mark them as complete\" or \"Delete them\".", len(targets), TaskLines(targets))
}

// FillExamples names known tasks, one after another, in text's examples;
// with none known, it says what goes there.
func FillExamples(text string, known []Task) string {
	if len(known) == 0 {
		return strings.ReplaceAll(text, grammar.AnyTask, "<number>")
	}
	var b strings.Builder
	for i, part := range strings.Split(text, grammar.AnyTask) {
		if i > 0 {
			b.WriteString(fmt.Sprint(known[(i-1)%len(known)].ID))
		}
		b.WriteString(part)
	}
	return b.String()
}
