package agent

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/taskchat/taskchat/internal/tasks"
)

// BenchmarkRunOneToolCall measures one turn with one add_task call through
// the loop: an instant scripted model, the real MCP tools, real PostgreSQL.
// Building the user's MCP server and session is included, as in a request.
func BenchmarkRunOneToolCall(b *testing.B) {
	svcTools := mustTaskTools(b) // warms the schema cache and the pool
	_ = svcTools
	model := &instant{script: []Response{
		callTool("c1", "add_task", `{"title":"Buy milk"}`),
		answer("Added task: Buy milk."),
	}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		model.n = 0
		cs := mustTaskTools(b)
		res, err := Run(ctx, Input{Limits: testLimits(), Model: model, Tools: SessionTools(cs), Message: "add buy milk"})
		if err != nil || len(res.Calls) != 1 || res.Calls[0].IsError {
			b.Fatal(err, res)
		}
		cs.Close()
	}
}

// instant is a scripted model without recording or locking, so the
// benchmark measures the loop rather than its test double.
type instant struct {
	script []Response
	n      int
}

func (m *instant) Name() string { return "instant" }

func (m *instant) Stream(_ context.Context, _ Request, onText func(string)) (Response, error) {
	r := m.script[m.n%len(m.script)]
	m.n++
	if r.Text != "" {
		onText(r.Text)
	}
	return r, nil
}

// BenchmarkHistory measures turning a stored history of 50 messages (every
// other reply with a tool call) into the model's messages, as each turn
// does before its first model call.
func BenchmarkHistory(b *testing.B) {
	var stored []tasks.Message
	for i := range 25 {
		stored = append(stored, tasks.Message{Role: tasks.RoleUser, Content: "add milk to my list please"})
		reply := tasks.Message{Role: tasks.RoleAssistant, Content: "Added task 3: Buy milk."}
		if i%2 == 0 {
			reply.ToolCalls = []tasks.ToolCall{{CallID: "call_1", Tool: "add_task", Arguments: json.RawMessage(`{"title":"Buy milk"}`),
				Result: json.RawMessage(`{"task_id":3,"status":"created","title":"Buy milk"}`)}}
		}
		stored = append(stored, reply)
	}
	b.ReportAllocs()
	for b.Loop() {
		if len(History(stored, 8000)) == 0 {
			b.Fatal("no history")
		}
	}
}
