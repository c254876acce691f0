package http

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/agent/agenttest"
	"github.com/taskchat/taskchat/internal/agent/offline"
	"github.com/taskchat/taskchat/internal/agent/openaitest"
	"github.com/taskchat/taskchat/internal/store/storetest"
)

// settledGoroutines waits for the goroutine count to come back to at most
// want plus a small slack (the HTTP client's idle connections), and fails
// if it does not: a request must not leave goroutines behind.
func settledGoroutines(tb testing.TB, want int) {
	tb.Helper()
	var n int
	for range 400 {
		if n = runtime.NumGoroutine(); n <= want+4 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	buf := make([]byte, 1<<20)
	tb.Fatalf("goroutines = %d, want at most %d:\n%s", n, want+4, buf[:runtime.Stack(buf, true)])
}

// TestDatabaseOutage runs alone, not in parallel, as every test of this
// file does: it cuts the package's database, and counts the process's
// goroutines.
func TestDatabaseOutage(t *testing.T) {
	s := mustServer(t, offline.New())
	user := storetest.UserID(t)
	tok := mustToken(t, user)
	if r := s.chat(t, user, 0, "Add a task to survive the outage"); r.status != 200 {
		t.Fatalf("before the outage: %d", r.status)
	}
	s.Client().CloseIdleConnections()
	before := runtime.NumGoroutine()

	restore := storetest.CutDatabase(t)
	mustProblem(t, s.do(t, call{method: "GET", path: "/readyz"}), 503, "unavailable")
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			r := s.chat(t, user, 0, fmt.Sprint("message during the outage ", i))
			mustProblem(t, r, 503, "unavailable")
		})
	}
	wg.Wait()
	mustProblem(t, s.do(t, call{method: "GET", path: "/api/" + user + "/tasks", token: tok}), 503, "unavailable")
	if r := s.do(t, call{method: "GET", path: "/healthz"}); r.status != 200 {
		t.Fatalf("healthz during the outage = %d; the process is up", r.status)
	}
	s.Client().CloseIdleConnections()
	settledGoroutines(t, before)

	restore()
	waitFor(t, "readiness after the outage", func() bool { return s.do(t, call{method: "GET", path: "/readyz"}).status == 200 })
	if r := s.chat(t, user, 0, "Show me all my tasks"); r.status != 200 {
		t.Fatalf("after the outage: %d %s", r.status, r.body)
	}
}

// StartTurn commits without waiting for the disk; the write that releases
// a failed turn's claim makes the message durable. When that write fails
// too, the client must hear that the database failed, not the model's
// "your message was saved". It cuts the package's database, so it runs
// alone.
func TestModelFailureDuringADatabaseOutageIsNotCalledSaved(t *testing.T) {
	model := agenttest.ModelFunc(func(context.Context, agent.Request, func(string)) (agent.Response, error) {
		storetest.CutDatabase(t) // restored when the test ends
		return agent.Response{}, &agent.ModelError{Kind: agent.ErrModelServer, Status: 500}
	})
	s := mustServer(t, model)
	mustProblem(t, s.chat(t, storetest.UserID(t), 0, "Add a task to keep this"), 503, "unavailable")
}

// TestModelOutagesAreBoundedByTheTurnDeadline counts the process's
// goroutines after each case, so it and its cases run alone.
func TestModelOutagesAreBoundedByTheTurnDeadline(t *testing.T) {
	cases := []struct {
		name string
		step openaitest.Step
	}{
		{"hung before the first byte", openaitest.Step{Wait: make(chan struct{})}},
		{"hung mid-stream", openaitest.Step{Text: "I was saying ", Hang: true}},
		{"5xx storm", openaitest.Step{Status: 503}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fake := newFakeOpenAI(t, c.step)
			s := mustServer(t, fake.Model(), func(cfg *serverConfig) { cfg.chat.Limits.TurnTimeout = 300 * time.Millisecond })
			user := storetest.UserID(t)
			s.Client().CloseIdleConnections()
			before := runtime.NumGoroutine()

			start := time.Now()
			r := s.chat(t, user, 0, "Add a task to fix the model")
			mustProblem(t, r, 502, "llm_unavailable")
			if took := time.Since(start); took > 5*time.Second {
				t.Fatalf("the turn took %s despite a 300ms deadline", took)
			}
			convs := s.do(t, call{method: "GET", path: "/api/" + user + "/conversations", token: mustToken(t, user)}).json(t)["conversations"].([]any)
			id := int64(convs[0].(map[string]any)["id"].(float64))
			msgs := s.do(t, call{method: "GET", path: fmt.Sprintf("/api/%s/conversations/%d/messages", user, id), token: mustToken(t, user)}).json(t)["messages"].([]any)
			if msgs[0].(map[string]any)["content"] != "Add a task to fix the model" {
				t.Fatalf("the user message was not kept: %v", msgs)
			}
			s.Client().CloseIdleConnections()
			fake.Client().CloseIdleConnections()
			fake.CloseClientConnections()
			settledGoroutines(t, before)
		})
	}
}

var _ = context.Background
