package evaltest

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/taskchat/taskchat/internal/tasks"
)

// Judge says what a conversation did otherwise than c wants, or "": the
// list afterwards, and, when c says them, the last message's tool calls.
// It never reads a reply: a case is judged by what was done.
func Judge(c Case, lastCalls []Call, list []tasks.Task) string {
	var problems []string
	if c.Calls != "" {
		if got := DescribeCalls(lastCalls); got != c.Calls {
			problems = append(problems, fmt.Sprintf("calls: got %s, want %s", got, c.Calls))
		}
	}
	want := c.Want
	if want == nil {
		want = c.Given
	}
	if got, wantList := describeList(list), describeWant(want); got != wantList {
		problems = append(problems, fmt.Sprintf("list: got\n    %s\n  want\n    %s", indent(got), indent(wantList)))
	}
	return strings.Join(problems, "\n")
}

func indent(s string) string { return strings.ReplaceAll(s, "\n", "\n    ") }

// task is a task in the notation of the case files.
type task struct {
	title, description string
	done               bool
}

// parseTask reads "[x] Title | description".
func parseTask(line string) task {
	var t task
	if rest, ok := strings.CutPrefix(line, "[x] "); ok {
		t.done, line = true, rest
	}
	t.title, t.description, _ = strings.Cut(line, " | ")
	return t
}

// describeWant writes a want list with the numbers its tasks must have.
func describeWant(lines []string) string {
	var out []string
	for i, line := range lines {
		if line == gone {
			continue
		}
		out = append(out, describeTask(int64(i+1), parseTask(line)))
	}
	return strings.Join(out, "\n")
}

func describeList(list []tasks.Task) string {
	out := make([]string, len(list))
	for i, t := range list {
		out[i] = describeTask(t.ID, task{title: t.Title, description: t.Description, done: t.Completed})
	}
	return strings.Join(out, "\n")
}

func describeTask(id int64, t task) string {
	box := "[ ]"
	if t.done {
		box = "[x]"
	}
	s := fmt.Sprintf("%d %s %s", id, box, t.title)
	if t.description != "" {
		s += " | " + t.description
	}
	return s
}

// DescribeCalls writes calls as the case files do: "none", or
// list_tasks(pending), complete_task(3), add_task(Buy milk),
// update_task(2, Call mom), set apart by spaces.
func DescribeCalls(calls []Call) string {
	if len(calls) == 0 {
		return "none"
	}
	parts := make([]string, len(calls))
	for i, c := range calls {
		var args struct {
			TaskID      int64  `json:"task_id"`
			Status      string `json:"status"`
			Title       string `json:"title"`
			Description string `json:"description"`
		}
		_ = json.Unmarshal(c.Arguments, &args)
		var fields []string
		if args.TaskID != 0 {
			fields = append(fields, fmt.Sprint(args.TaskID))
		}
		for _, f := range []string{args.Status, args.Title, args.Description} {
			if f != "" {
				fields = append(fields, f)
			}
		}
		parts[i] = fmt.Sprintf("%s(%s)", c.Tool, strings.Join(fields, ", "))
	}
	return strings.Join(parts, " ")
}
