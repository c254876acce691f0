package chat_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/agent/agenttest"
	"github.com/taskchat/taskchat/internal/agent/offline"
	"github.com/taskchat/taskchat/internal/chat"
	"github.com/taskchat/taskchat/internal/store/storetest"
)

// recorder is a model that keeps every request it is sent. It unwraps, as
// telemetry's observer does, so that the offline model under it still
// writes its summaries itself.
type recorder struct {
	agent.Model
	mu   sync.Mutex
	reqs []agent.Request
}

func (r *recorder) Stream(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	return r.Model.Stream(ctx, req, onText)
}

func (r *recorder) Unwrap() agent.Model { return r.Model }

// requests returns the requests sent since the last call.
func (r *recorder) requests() []agent.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	reqs := r.reqs
	r.reqs = nil
	return reqs
}

// history is the part of a request before its turn's message.
func history(req agent.Request) []agent.Message {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == agent.RoleUser {
			return req.Messages[:i]
		}
	}
	return nil
}

const earlier = "## Earlier in this conversation"

// A 200-turn conversation on the offline model: every request the model
// gets stays within the history window, and once the conversation passed
// it, carries a summary that still names the task the first turn added,
// and what the person said in passing. It is compacted every few turns,
// not on every one.
func TestALongConversationIsCompacted(t *testing.T) {
	t.Parallel()
	const (
		turns         = 200
		historyLimit  = 20
		historyTokens = 3000
	)
	model := &recorder{Model: offline.New()}
	env := mustEngineWith(t, model, nil, func(c *chat.Config) { c.HistoryLimit, c.HistoryTokens = historyLimit, historyTokens })
	user := storetest.UserID(t)
	says := []string{
		"add a task to water the garden",
		"show my pending tasks",
		"by the way, my neighbour Tom lends me his ladder on Saturdays",
		"add a task to read a book",
		"what have I completed?",
	}
	var conv int64
	for i := range turns {
		msg := says[i%len(says)]
		if i == 0 {
			msg = "Add a task to buy oat milk"
		}
		out, err := env.engine.Run(context.Background(), chat.Request{UserID: user, ConversationID: conv, Message: msg}, nil)
		if err != nil {
			t.Fatalf("turn %d (%q): %v", i, msg, err)
		}
		conv = out.ConversationID
		for _, req := range model.requests() {
			h := history(req)
			users, size := 0, 0
			for _, m := range h {
				if m.Role == agent.RoleUser {
					users++
				}
				size += agent.EstimateTokens(m.Content)
				for _, c := range m.ToolCalls {
					size += agent.EstimateTokens(c.Arguments)
				}
			}
			if users > historyLimit/2 || size > historyTokens {
				t.Fatalf("turn %d: the model was sent %d earlier messages of the person's, %d tokens of history; the window is %d messages, %d tokens",
					i, users, size, historyLimit, historyTokens)
			}
			if i >= historyLimit && (!strings.Contains(req.System, earlier) || !strings.Contains(req.System, "#1 Buy oat milk")) {
				t.Fatalf("turn %d: the model's system prompt does not carry a summary naming task 1:\n%s", i, req.System)
			}
		}
	}
	c, err := env.convs.Conversation(context.Background(), user, conv)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the summary after %d turns:\n%s", turns, c.Summary.Text)
	t.Run("the summary keeps what the person said", func(t *testing.T) {
		if c.Summary == nil || !strings.Contains(c.Summary.Text, "neighbour Tom") {
			t.Fatalf("summary = %+v", c.Summary)
		}
	})
	t.Run("it is compacted every few turns, not on every one", func(t *testing.T) {
		n := strings.Count(env.logs.String(), `"msg":"compacted conversation"`)
		t.Logf("compacted %d times", n)
		if n < turns/historyLimit || n > turns/3 {
			t.Fatalf("compacted %d times in %d turns", n, turns)
		}
	})
	env.mustNotLogErrors(t)
}

// A compaction the model fails leaves the turn with what it had: the turn
// is answered, and the next one compacts.
func TestAFailedCompactionDoesNotFailTheTurn(t *testing.T) {
	t.Parallel()
	failing := true
	var mu sync.Mutex
	model := agenttest.ModelFunc(func(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
		mu.Lock()
		defer mu.Unlock()
		if !strings.Contains(req.System, earlier) && strings.HasPrefix(req.System, "You keep the running summary") {
			if failing {
				return agent.Response{Usage: agent.Usage{PromptTokens: 50, TotalTokens: 50}}, &agent.ModelError{Kind: agent.ErrModelServer, Status: 500}
			}
			return agent.Response{Text: "They talk about chores.", Usage: agent.Usage{PromptTokens: 40, CompletionTokens: 6, TotalTokens: 46}}, nil
		}
		onText("OK.")
		return agent.Response{Text: "OK."}, nil
	})
	env := mustEngineWith(t, model, nil, func(c *chat.Config) { c.HistoryLimit = 4 })
	user := storetest.UserID(t)
	var conv int64
	run := func(msg string) {
		t.Helper()
		out, err := env.engine.Run(context.Background(), chat.Request{UserID: user, ConversationID: conv, Message: msg}, nil)
		if err != nil || out.Reply != "OK." {
			t.Fatalf("turn %q: %q, %v", msg, out.Reply, err)
		}
		conv = out.ConversationID
	}
	for _, msg := range []string{"one", "two", "three", "four"} {
		run(msg)
	}
	c, _ := env.convs.Conversation(context.Background(), user, conv)
	if c.Summary != nil {
		t.Fatalf("summary %+v after a failed compaction", c.Summary)
	}
	mu.Lock()
	failing = false
	mu.Unlock()
	run("five")
	c, _ = env.convs.Conversation(context.Background(), user, conv)
	if c.Summary == nil || c.Summary.Text != "They talk about chores." {
		t.Fatalf("summary = %+v", c.Summary)
	}
	t.Run("every summary call's tokens count, the failed one's too", func(t *testing.T) {
		days, err := env.engine.Usage(context.Background(), user, c.CreatedAt, c.CreatedAt)
		if err != nil {
			t.Fatal(err)
		}
		// The turns' own calls report no usage: the offline estimate
		// stands in for it (agent.EstimateUsage), so only a lower bound
		// is exact here.
		if u := days[0].Usage; u.InputTokens < 50+40 || u.OutputTokens < 6 {
			t.Fatalf("usage = %+v", u)
		}
	})
}

// A compaction whose model hangs has half the turn's time: the turn
// answers in the other half, rather than fail at its deadline.
func TestAHangingCompactionDoesNotFailTheTurn(t *testing.T) {
	t.Parallel()
	model := agenttest.ModelFunc(func(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
		if strings.HasPrefix(req.System, "You keep the running summary") {
			<-ctx.Done()
			return agent.Response{}, ctx.Err()
		}
		if err := ctx.Err(); err != nil {
			return agent.Response{}, err // as an HTTP model would
		}
		onText("OK.")
		return agent.Response{Text: "OK."}, nil
	})
	env := mustEngineWith(t, model, nil, func(c *chat.Config) { c.HistoryLimit = 4; c.Limits.TurnTimeout = 2 * time.Second })
	user := storetest.UserID(t)
	var conv int64
	for _, msg := range []string{"one", "two", "three", "four", "five"} {
		out, err := env.engine.Run(context.Background(), chat.Request{UserID: user, ConversationID: conv, Message: msg}, nil)
		if err != nil || out.Reply != "OK." {
			t.Fatalf("turn %q: %q, %v", msg, out.Reply, err)
		}
		conv = out.ConversationID
	}
}
