package results

import (
	"encoding/json"
	"fmt"

	"github.com/taskchat/taskchat/internal/agent"
)

// The task tools the offline model calls, as the MCP server names them.
const (
	ToolAddTask      = "add_task"
	ToolListTasks    = "list_tasks"
	ToolCompleteTask = "complete_task"
	ToolDeleteTask   = "delete_task"
	ToolUpdateTask   = "update_task"
)

// Round is an assistant message's calls and the tool messages that
// answered them, by call id.
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
}

// callArgs decodes what it can; arguments that do not decode read as zero.
func callArgs(call agent.ToolCall) callArguments {
	var a callArguments
	_ = json.Unmarshal([]byte(call.Arguments), &a)
	return a
}

// LastTouched is what a turn made by another model was about: the tasks
// its last round changed or listed.
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
