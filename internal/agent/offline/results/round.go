package results

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/tasks"
)

// The task tools the offline model calls (tasks names them).
const (
	ToolAddTask      = tasks.ToolAddTask
	ToolListTasks    = tasks.ToolListTasks
	ToolCompleteTask = tasks.ToolCompleteTask
	ToolDeleteTask   = tasks.ToolDeleteTask
	ToolUpdateTask   = tasks.ToolUpdateTask
)

// Round is an assistant message's calls and their results, by call id.
type Round struct {
	Calls   []agent.ToolCall
	results map[string]string
}

// RoundAt reads the round of the assistant message at i.
func RoundAt(msgs []agent.Message, i int) Round {
	r := Round{Calls: msgs[i].ToolCalls, results: map[string]string{}}
	for _, m := range msgs[i+1:] {
		if m.Role != agent.RoleTool {
			break
		}
		r.results[m.ToolCallID] = m.Content
	}
	return r
}

// Outcome is any task tool's result, or its error. Text is what the
// loop passes on from a tool that returned no structured result.
type Outcome struct {
	// Status is a change's, or says the call waits for its person or was
	// declined by them (tasks.AwaitingStatus, tasks.DeclinedStatus).
	Status string `json:"status"`
	Error  string `json:"error"`
	Text   string `json:"text"`
	TaskID int64  `json:"task_id"`
	Title  string `json:"title"`
	Tasks  []Task `json:"tasks"`
	// NextCursor is set when a listing has a page after this one.
	NextCursor string `json:"next_cursor"`
}

// Outcome decodes the result of call; a result that is not JSON is taken
// as an error sentence, and a missing one as a failure to report.
func (r Round) Outcome(call agent.ToolCall) Outcome {
	content, ok := r.results[call.ID]
	if !ok {
		return Outcome{Error: fmt.Sprintf("I got no answer from %s; please try again.", call.Name)}
	}
	var out Outcome
	if err := json.Unmarshal([]byte(content), &out); err != nil {
		return Outcome{Error: content}
	}
	return out
}

// callArguments are the arguments of any task tool the replies need.
type callArguments struct {
	TaskID int64  `json:"task_id"`
	Status string `json:"status"`
	Title  string `json:"title"`
}

// callArgs decodes what it can; arguments that do not decode read as zero.
func callArgs(call agent.ToolCall) callArguments {
	var a callArguments
	_ = json.Unmarshal([]byte(call.Arguments), &a)
	return a
}

// LastTouched is the tasks another model's last round changed or listed.
func LastTouched(rounds []Round) []Task {
	for i := len(rounds) - 1; i >= 0; i-- {
		var focus []Task
		for _, call := range rounds[i].Calls {
			out := rounds[i].Outcome(call)
			switch {
			case out.Error != "":
			case call.Name == ToolListTasks:
				focus = append(focus, out.Tasks...)
			case out.TaskID > 0:
				focus = append(focus, Task{ID: out.TaskID, Title: out.Title})
			}
		}
		if len(focus) > 0 {
			return focus
		}
	}
	return nil
}

// Planned is a tool call before it gets an id.
type Planned struct {
	Tool string
	Args map[string]any
}

// Holds reports whether c is the call p plans: the same tool and
// arguments (a listing's page size aside).
func (p Planned) Holds(c agent.ToolCall) bool {
	var got, want map[string]any
	planned, _ := json.Marshal(p.Args)
	_ = json.Unmarshal(planned, &want)
	if c.Name != p.Tool || json.Unmarshal([]byte(c.Arguments), &got) != nil {
		return false
	}
	if p.Tool == ToolListTasks {
		delete(got, "limit")
		delete(want, "limit")
	}
	return reflect.DeepEqual(got, want)
}

// Call is the call p plans, its id numbered n.
func (p Planned) Call(n int) agent.ToolCall {
	args, _ := json.Marshal(p.Args) // a map of strings and numbers always marshals
	return agent.ToolCall{ID: fmt.Sprintf("call_%d", n), Name: p.Tool, Arguments: string(args)}
}

// ListPage is how many tasks the model asks list_tasks for at once, the
// most it answers. Each later call reads a page again, so a list read whole
// costs tokens as the square of its pages (docs/models.md, "Long lists").
const ListPage = tasks.MaxTaskPage

// ListCall is the first call of a listing of the tasks with status.
func ListCall(status string) Planned {
	return Planned{Tool: ToolListTasks, Args: map[string]any{"status": status, "limit": ListPage}}
}

// Task is one task of a list_tasks result.
type Task struct {
	ID          int64  `json:"id"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Completed   bool   `json:"completed"`
	// Deleted marks a task the conversation deleted since: still what "it"
	// or "the second one" points at, never a task to act on or offer.
	Deleted bool `json:"-"`
}

// WithoutDeleted returns the tasks of list the conversation has not deleted.
func WithoutDeleted(list []Task) []Task {
	return TasksWhere(list, func(t Task) bool { return !t.Deleted })
}

// TasksWhere returns the tasks of ts that keep says to keep.
func TasksWhere(ts []Task, keep func(Task) bool) []Task {
	var out []Task
	for _, t := range ts {
		if keep(t) {
			out = append(out, t)
		}
	}
	return out
}

// IDTasks are the tasks numbered ids, known by number only.
func IDTasks(ids []int64) []Task {
	out := make([]Task, len(ids))
	for i, id := range ids {
		out[i] = Task{ID: id}
	}
	return out
}

// WithStatus returns the tasks of ts in status: "all", "completed", else
// pending.
func WithStatus(ts []Task, status string) []Task {
	return TasksWhere(ts, func(t Task) bool { return status == "all" || t.Completed == (status == "completed") })
}

// Titled replaces the targets known by number only with those tasks of list.
func Titled(targets, list []Task) {
	for i, t := range targets {
		if found, ok := FindTask(list, t.ID); ok && t.Title == "" {
			targets[i] = found
		}
	}
}

// FindTask finds task id in ts.
func FindTask(ts []Task, id int64) (Task, bool) {
	if i := slices.IndexFunc(ts, func(t Task) bool { return t.ID == id }); i >= 0 {
		return ts[i], true
	}
	return Task{}, false
}
