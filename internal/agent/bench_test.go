package agent

import (
	"context"
	"testing"
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
