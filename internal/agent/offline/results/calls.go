package results

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/tasks"
)

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

// CallIDs numbers tool calls after those already in the conversation, so
// ids stay unique across the rounds of a turn without any stored state.
type CallIDs struct{ next int }

// NewCallIDs numbers the calls after those msgs hold.
func NewCallIDs(msgs []agent.Message) *CallIDs {
	n := 0
	for _, m := range msgs {
		n += len(m.ToolCalls)
	}
	return &CallIDs{next: n + 1}
}

// Call gives p the next id.
func (c *CallIDs) Call(p Planned) agent.ToolCall {
	args, _ := json.Marshal(p.Args) // a map of strings and numbers always marshals
	id := fmt.Sprintf("call_%d", c.next)
	c.next++
	return agent.ToolCall{ID: id, Name: p.Tool, Arguments: string(args)}
}

// ListPage is how many tasks the model asks list_tasks for at once, the
// most it answers. Every later model call reads a page again, so a list
// read whole costs tokens as the square of its pages (docs/models.md,
// "Long lists").
const ListPage = tasks.MaxTaskPage

// ListCall is the first call of a listing of the tasks with status.
func ListCall(status string) Planned {
	return Planned{Tool: ToolListTasks, Args: map[string]any{"status": status, "limit": ListPage}}
}
