package agent

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/taskchat/taskchat/internal/tasks"
)

// A turn run again (a regenerated reply) starts from the calls its earlier
// run made: the model sees them after the message, they begin the result,
// and a new call is numbered after them, also when the earlier run recorded
// only some of its calls (here positions 0 and 2, in rounds 0 and 1).
func TestRunResumesEarlierCalls(t *testing.T) {
	t.Parallel()
	model := &scripted{script: []Response{callTool("c9", "list_tasks", `{}`), answer("Milk and eggs are on your list.")}}
	earlier := []tasks.ToolCall{
		{CallID: "c1", Tool: "add_task", Arguments: json.RawMessage(`{"title":"Buy milk"}`), Result: json.RawMessage(`{"task_id":1}`), Round: 0, Seq: 0},
		{CallID: "c3", Tool: "add_task", Arguments: json.RawMessage(`"{\"title\":"`), Result: json.RawMessage(`{"error":"bad"}`), IsError: true, Round: 1, Seq: 2},
	}
	rec := &recorder{}
	res, err := Run(context.Background(), Input{Limits: testLimits(), Model: model, Tools: SessionTools(mustTaskTools(t)),
		Message: "add milk and eggs", Resumed: earlier, Observer: rec.observe})
	if err != nil {
		t.Fatal(err)
	}
	first := model.requests[0].Messages
	if len(first) != 5 || first[0].Role != RoleUser || first[1].ToolCalls[0].ID != "c1" || first[2].ToolCallID != "c1" ||
		first[3].ToolCalls[0].Arguments != `{"title":` || first[4].Content != `{"error":"bad"}` {
		t.Fatalf("the model saw %+v, want the message, then each earlier round with its result", first)
	}
	if len(res.Calls) != 3 || res.Calls[0].ID != "c1" || res.Calls[1].ID != "c3" || string(res.Calls[1].Arguments) != `{"title":` {
		t.Fatalf("calls = %+v, want the earlier two as the model wrote them, then the new one", res.Calls)
	}
	if c := res.Calls[2]; c.ID != "c9" || c.Seq != 3 || c.Round != 2 {
		t.Fatalf("new call = %+v, want position 3 in round 2", c)
	}
	if len(rec.events) != 5 || rec.events[0] != "call:list_tasks{}" || rec.events[1] != "result:list_tasks:false" {
		t.Fatalf("events = %q, want only the new call observed, then the reply", rec.events)
	}
}
