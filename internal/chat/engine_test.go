package chat_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/agent/agenttest"
	"github.com/taskchat/taskchat/internal/chat"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/tasks"
)

// A turn as any front sees it: the observer hears the conversation first,
// then each call before its result, and text that adds up to the reply;
// the outcome is exactly what a later reading of the conversation shows.
func TestTurnTellsWhatHappensAsItHappens(t *testing.T) {
	t.Parallel()
	env := mustEngine(t, script(
		calls("Let me add those.", `c1 add_task {"title":"Buy milk"}`),
		calls("", `c2 add_task {"title":"Pay bills"}`, `c3 list_tasks {}`),
		say("Added Buy milk and Pay bills; you have 2 tasks."),
	))
	user := storetest.UserID(t)
	var events []chat.Event
	out, err := env.engine.Run(context.Background(), chat.Request{UserID: user, Message: "Add buy milk and pay bills"},
		func(e chat.Event) { events = append(events, e) })
	if err != nil {
		t.Fatal(err)
	}

	if len(events) == 0 || events[0].Kind != chat.EventStarted || events[0].ConversationID == 0 || events[0].ConversationID != out.ConversationID {
		t.Fatalf("the first event must start conversation %d: %+v", out.ConversationID, events)
	}
	var shape []string
	var text strings.Builder
	results := 0
	for _, e := range events {
		switch e.Kind {
		case chat.EventStarted:
			shape = append(shape, "started")
		case chat.EventDelta:
			text.WriteString(e.Text)
			if shape[len(shape)-1] != "text" {
				shape = append(shape, "text")
			}
		case chat.EventToolCall:
			if e.Call.Result != nil {
				t.Fatalf("a call was announced with its result already: %s", e.Call.Result)
			}
			shape = append(shape, "call "+e.Call.ID)
		case chat.EventToolResult:
			shape = append(shape, "result "+e.Call.ID)
			if !sameCall(*e.Call, out.ToolCalls[results]) {
				t.Fatalf("result event %+v differs from the outcome's call %+v", *e.Call, out.ToolCalls[results])
			}
			results++
		}
	}
	want := "started|text|call c1|result c1|call c2|result c2|call c3|result c3|text"
	if got := strings.Join(shape, "|"); got != want {
		t.Fatalf("events\n got %s\nwant %s", got, want)
	}
	if text.String() != out.Reply || !strings.HasSuffix(out.Reply, "you have 2 tasks.") {
		t.Fatalf("the deltas add up to %q, the reply is %q", text.String(), out.Reply)
	}

	msgs := env.mustMessages(t, user, out.ConversationID)
	if len(msgs) != 2 || msgs[0].Content != "Add buy milk and pay bills" || msgs[1].Content != out.Reply || msgs[1].Interrupted {
		t.Fatalf("stored messages = %+v", msgs)
	}
	if len(msgs[1].ToolCalls) != len(out.ToolCalls) || len(out.ToolCalls) != 3 {
		t.Fatalf("stored %d calls, the outcome has %d, want 3", len(msgs[1].ToolCalls), len(out.ToolCalls))
	}
	for i, c := range msgs[1].ToolCalls {
		mustSameCall(t, c, out.ToolCalls[i])
	}
	if got := env.mustTasks(t, user); len(got) != 2 || got[0].Title != "Buy milk" || got[1].Title != "Pay bills" {
		t.Fatalf("tasks = %+v", got)
	}
}

// A configuration missing anything is refused when the engine is built,
// naming the field that is wrong (cmd/server says which environment
// variable filled it), rather than failing turn after turn.
func TestNewRefusesAnIncompleteConfig(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		adjust func(*chat.Config)
		want   string
	}{
		{"no model", func(c *chat.Config) { c.Model = nil }, "Model is required"},
		{"zero tool calls", func(c *chat.Config) { c.Limits.MaxToolCalls = 0 }, "Limits.MaxToolCalls must be positive, got 0"},
		{"zero turn timeout", func(c *chat.Config) { c.Limits.TurnTimeout = 0 }, "Limits.TurnTimeout must be positive, got 0s"},
		{"negative tokens", func(c *chat.Config) { c.Limits.MaxTokens = -1 }, "Limits.MaxTokens must be positive, got -1"},
		{"zero history", func(c *chat.Config) { c.HistoryLimit = 0 }, "HistoryLimit must be positive"},
		{"zero history tokens", func(c *chat.Config) { c.HistoryTokens = 0 }, "HistoryTokens must be positive"},
		{"zero key lifetime", func(c *chat.Config) { c.IdempotencyTTL = 0 }, "IdempotencyTTL must be positive"},
		{"negative token budget", func(c *chat.Config) { c.DailyTokenBudget = -1 }, "DailyTokenBudget must not be negative"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cfg := testConfig(script(say("hi")))
			c.adjust(&cfg)
			engine, err := chat.New(nil, nil, nil, cfg)
			if err == nil || engine != nil {
				t.Fatalf("New accepted %+v", cfg)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q does not name %s", err, c.want)
			}
		})
	}
	t.Run("everything missing", func(t *testing.T) {
		t.Parallel()
		_, err := chat.New(nil, nil, nil, chat.Config{})
		for _, want := range []string{"Model", "Limits.", "HistoryLimit"} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("error %v does not name %s: every problem is reported at once", err, want)
			}
		}
	})
}

// A keyed request that completed is answered again from what was stored:
// the same outcome, no model call, no tool call. The key with another
// request is a mistake the client hears about.
func TestKeyedRequestReplaysWithoutRunningAgain(t *testing.T) {
	t.Parallel()
	var modelCalls atomic.Int32
	counted := func(r round) round {
		return func(ctx context.Context, onText func(string)) (agent.Response, error) {
			modelCalls.Add(1)
			return r(ctx, onText)
		}
	}
	env := mustEngine(t, script(
		counted(calls("", `c1 add_task {"title":"Renew the passport"}`)),
		counted(say("Added: Renew the passport.")),
	))
	user := storetest.UserID(t)
	req := chat.Request{UserID: user, Message: "Add a task to renew the passport", IdempotencyKey: "key-" + user}
	ctx := context.Background()

	first, err := env.engine.Run(ctx, req, nil)
	if err != nil || first.Replayed || len(first.ToolCalls) != 1 {
		t.Fatalf("first run: %v, %s", err, describeOutcome(first))
	}
	ran := modelCalls.Load()

	var heard []chat.Event
	again, err := env.engine.Run(ctx, req, func(e chat.Event) { heard = append(heard, e) })
	if err != nil || !again.Replayed {
		t.Fatalf("retry: %v, %s; want a replay", err, describeOutcome(again))
	}
	mustSameOutcome(t, again, first)
	for _, e := range heard {
		if e.Kind == chat.EventToolCall || e.Kind == chat.EventDelta {
			t.Fatalf("a replay ran the turn again: event %+v", e)
		}
	}
	if modelCalls.Load() != ran || len(env.mustTasks(t, user)) != 1 {
		t.Fatalf("the retry ran again: %d model calls (was %d), %d tasks", modelCalls.Load(), ran, len(env.mustTasks(t, user)))
	}

	for name, other := range map[string]chat.Request{
		"another message":      {UserID: user, Message: "Add a task to buy stamps", IdempotencyKey: req.IdempotencyKey},
		"another conversation": {UserID: user, ConversationID: first.ConversationID, Message: req.Message, IdempotencyKey: req.IdempotencyKey},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := env.engine.Run(ctx, other, nil)
			if !errors.Is(err, tasks.ErrKeyMismatch) {
				t.Fatalf("the key reused with %s: err = %v, want ErrKeyMismatch", name, err)
			}
			if n := len(env.mustTasks(t, user)); n != 1 || modelCalls.Load() != ran {
				t.Fatalf("a refused request ran: %d tasks, %d model calls", n, modelCalls.Load())
			}
		})
	}
	// Another user's key of the same name is theirs alone.
	other := storetest.UserID(t)
	if out, err := env.engine.Run(ctx, chat.Request{UserID: other, Message: req.Message, IdempotencyKey: req.IdempotencyKey}, nil); err != nil || out.Replayed {
		t.Fatalf("another user's request with the same key: %v, %s", err, describeOutcome(out))
	}
	if n := len(env.mustTasks(t, other)); n != 1 {
		t.Fatalf("the other user has %d tasks, want 1", n)
	}
}

// A regenerated reply that does not complete — its model fails after
// saying part of it, or it is stopped — and changes nothing new leaves
// the old reply in place, not a fragment of the new one.
func TestARegenerationThatDoesNotCompleteKeepsTheOldReply(t *testing.T) {
	t.Parallel()
	calls := 0
	model := agenttest.ModelFunc(func(ctx context.Context, _ agent.Request, onText func(string)) (agent.Response, error) {
		calls++
		if calls == 1 {
			onText("All done.")
			return agent.Response{Text: "All done."}, nil
		}
		onText("Half of a new")
		return agent.Response{}, &agent.ModelError{Kind: agent.ErrModelServer, Status: 500}
	})
	env := mustEngine(t, model)
	user := storetest.UserID(t)
	first, err := env.engine.Run(context.Background(), chat.Request{UserID: user, Message: "hello"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = env.engine.Run(context.Background(), chat.Request{UserID: user, ConversationID: first.ConversationID, Message: "hello",
		Regenerate: true, RegenerateTurn: first.TurnID}, nil)
	if err == nil {
		t.Fatal("the failed regeneration reported no error")
	}
	msgs := env.mustMessages(t, user, first.ConversationID)
	if len(msgs) != 2 || msgs[1].Content != "All done." || msgs[1].Interrupted {
		t.Fatalf("messages = %+v, want the old reply kept", msgs)
	}
}
