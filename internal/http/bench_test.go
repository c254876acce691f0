package http

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/agent/agenttest"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/telemetry"
)

// BenchmarkChatTurn measures the service's own work for one JSON chat turn
// with one add_task call: the handler on real PostgreSQL, with an instant
// in-process model, so no model time and no network are in the figure.
func BenchmarkChatTurn(b *testing.B) { benchmarkChatTurn(b) }

// BenchmarkChatTurnObserved is BenchmarkChatTurn with what an operator may
// turn on: the metrics (METRICS_ADDR), the metrics and spans (an OTLP
// endpoint; here the spans are batched to an exporter that drops them),
// or a daily token budget, checked as each turn starts.
func BenchmarkChatTurnObserved(b *testing.B) {
	b.Run("metrics", func(b *testing.B) {
		benchmarkChatTurn(b, observedBy(telemetry.New(prometheus.NewRegistry(), nil)))
	})
	b.Run("metrics+spans", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
		b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
		benchmarkChatTurn(b, observedBy(telemetry.New(prometheus.NewRegistry(), tp)))
	})
	b.Run("budget", func(b *testing.B) {
		benchmarkChatTurn(b, func(c *serverConfig) { c.chat.DailyTokenBudget = 1 << 50 })
	})
}

func benchmarkChatTurn(b *testing.B, adjust ...func(*serverConfig)) {
	model := agenttest.ModelFunc(func(_ context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
		if last := req.Messages[len(req.Messages)-1]; last.Role == agent.RoleTool {
			onText("Added the task.")
			return agent.Response{Text: "Added the task."}, nil
		}
		return agent.Response{ToolCalls: []agent.ToolCall{{ID: "c1", Name: "add_task", Arguments: `{"title":"Benchmark"}`}}}, nil
	})
	s := mustServer(b, model, adjust...)
	h := s.Config.Handler
	user := storetest.UserID(b)
	tok := mustToken(b, user)
	b.ReportAllocs()
	cpu := processCPU()
	for b.Loop() {
		req := httptest.NewRequest("POST", "/api/"+user+"/chat", strings.NewReader(`{"message":"Add a task to benchmark"}`))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
	}
	// The process's CPU time a turn: the service's own work, without the
	// waits on PostgreSQL that fill most of ns/op (PostgreSQL's own CPU is
	// another process's), and less sensitive than wall time to what else
	// the machine is doing.
	b.ReportMetric(float64(processCPU()-cpu)/float64(b.N)/1e3, "cpu-µs/op")
}

// processCPU is the process's user plus system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
