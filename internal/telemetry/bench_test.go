package telemetry_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/agent/agenttest"
	"github.com/taskchat/taskchat/internal/telemetry"
)

// BenchmarkObserveTurn is what observing one chat turn costs, alone: its
// request, two model calls, one tool call and the turn's count, around
// work that takes no time. BenchmarkChatTurn (internal/http) is the turn.
func BenchmarkObserveTurn(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	for _, c := range []struct {
		name string
		tel  *telemetry.Telemetry
	}{
		{"off", nil},
		{"metrics", telemetry.New(prometheus.NewRegistry(), nil)},
		{"metrics+spans", telemetry.New(prometheus.NewRegistry(), tp)},
	} {
		b.Run(c.name, func(b *testing.B) {
			model := c.tel.Model(agenttest.ModelFunc(func(context.Context, agent.Request, func(string)) (agent.Response, error) {
				return agent.Response{Usage: agent.Usage{PromptTokens: 900, CompletionTokens: 40, TotalTokens: 940}}, nil
			}), "openai")
			req := httptest.NewRequest("POST", "/api/alice/chat", nil)
			b.ReportAllocs()
			for b.Loop() {
				r, q := c.tel.StartRequest(req)
				ctx := r.Context()
				_, _ = model.Stream(ctx, agent.Request{}, nil)
				_, end := c.tel.StartTool(ctx, "add_task", "call_1")
				end("")
				_, _ = model.Stream(ctx, agent.Request{}, nil)
				c.tel.CountTurn("completed")
				q.End("POST", "/api/{user_id}/chat", 200, 0)
			}
		})
	}
}
