package offline

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/taskchat/taskchat/internal/agent"
)

// This file writes the replies: what each tool call did, read from its
// result, and the fixed texts.

// toolOutcome is any task tool's result, or its error. Text is what the
// loop passes on from a tool that returned no structured result.
type toolOutcome struct {
	Error  string       `json:"error"`
	Text   string       `json:"text"`
	TaskID int64        `json:"task_id"`
	Title  string       `json:"title"`
	Tasks  []listedTask `json:"tasks"`
	// NextCursor is set when a listing has a page after this one.
	NextCursor string `json:"next_cursor"`
}

// listedTask is one task of a list_tasks result.
type listedTask struct {
	ID          int64  `json:"id"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Completed   bool   `json:"completed"`
	// deleted marks a task the conversation deleted since: still what "it"
	// or "the second one" points at, never a task to act on or offer.
	deleted bool
}

// outcome decodes the result of call; a result that is not JSON is taken
// as an error sentence, and a missing one as a failure to report.
func (r toolRound) outcome(call agent.ToolCall) toolOutcome {
	content, ok := r.results[call.ID]
	if !ok {
		return toolOutcome{Error: fmt.Sprintf("I got no answer from %s; please try again.", call.Name)}
	}
	var out toolOutcome
	if err := json.Unmarshal([]byte(content), &out); err != nil {
		return toolOutcome{Error: content}
	}
	return out
}

// confirmRound says what each call of the round did, one line per call:
// the reply when a round holds calls the steps did not expect.
func confirmRound(r toolRound) string {
	lines := make([]string, 0, len(r.calls))
	for _, call := range r.calls {
		lines = append(lines, confirmCall(call, r.outcome(call)))
	}
	return strings.Join(lines, "\n")
}

func confirmCall(call agent.ToolCall, out toolOutcome) string {
	switch {
	case out.Error != "":
		return describeToolError(call, out.Error)
	case out.Text != "" && out.TaskID == 0 && out.Tasks == nil:
		return sentence(out.Text)
	}
	switch call.Name {
	case toolAddTask:
		return sentence(fmt.Sprintf("Added task %d: %s", out.TaskID, out.Title))
	case toolListTasks:
		return describeList(callArgs(call).Status, out.Tasks, out.NextCursor != "")
	case toolCompleteTask:
		return sentence(fmt.Sprintf("Marked task %d as complete: %s", out.TaskID, out.Title))
	case toolDeleteTask:
		return sentence(fmt.Sprintf("Deleted task %d: %s", out.TaskID, out.Title))
	case toolUpdateTask:
		return sentence(fmt.Sprintf("Updated task %d: %s", out.TaskID, out.Title))
	}
	return fmt.Sprintf("Done (%s).", call.Name)
}

// describeToolError says a missing task plainly and passes any other error
// sentence on as the tool wrote it.
func describeToolError(call agent.ToolCall, msg string) string {
	id := callArgs(call).TaskID
	if id > 0 && strings.Contains(strings.ToLower(msg), "not found") {
		return taskNotFound(id)
	}
	return sentence(msg)
}

// callArguments are the arguments of any task tool the replies need.
type callArguments struct {
	TaskID int64  `json:"task_id"`
	Status string `json:"status"`
}

// callArgs decodes what it can; arguments that do not decode read as zero.
func callArgs(call agent.ToolCall) callArguments {
	var a callArguments
	_ = json.Unmarshal([]byte(call.Arguments), &a)
	return a
}

// describeList writes one task per line with its id and state. more says
// the listing has tasks after these.
func describeList(status string, tasks []listedTask, more bool) string {
	n := len(tasks)
	var head string
	switch {
	case more:
		noun := map[string]string{"pending": "pending task", "completed": "completed task"}[status]
		if noun == "" {
			noun = "task"
		}
		head = fmt.Sprintf("You have more than %s; here are the first %d:", plural(n, noun), n)
	case status == "pending" && n == 0:
		return "You have no pending tasks — all caught up!"
	case status == "completed" && n == 0:
		return "You haven't completed any tasks yet."
	case n == 0:
		return `You have no tasks yet. Try "Add a task to buy groceries".`
	case status == "pending":
		head = fmt.Sprintf("You have %s:", plural(n, "pending task"))
	case status == "completed":
		head = fmt.Sprintf("You have completed %s:", plural(n, "task"))
	default:
		head = fmt.Sprintf("You have %s:", plural(n, "task"))
	}
	lines := []string{head}
	for _, t := range tasks {
		lines = append(lines, taskLine(t))
	}
	return strings.Join(lines, "\n")
}

// taskLine is a task as a Markdown checklist item: "- [x] #3 Call mom".
func taskLine(t listedTask) string {
	box := "[ ]"
	if t.Completed {
		box = "[x]"
	}
	line := strings.TrimRight(fmt.Sprintf("- %s #%d %s", box, t.ID, t.Title), " ") // a task known by its number only
	if t.Description != "" {
		line += " — " + t.Description
	}
	return line
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// sentence ends s with a full stop unless it already ends a sentence.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasSuffix(s, ".") || strings.HasSuffix(s, "!") || strings.HasSuffix(s, "?") {
		return s
	}
	return s + "."
}

// taskNotFound says plainly that a task number names no task.
func taskNotFound(id int64) string {
	return fmt.Sprintf("I couldn't find task %d — want to see your list?", id)
}
