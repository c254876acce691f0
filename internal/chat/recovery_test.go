package chat_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/agent/agenttest"
	"github.com/taskchat/taskchat/internal/chat"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/tasks"
)

// failFinishOnce is a turn store whose first final write fails as if the
// database had gone away, writing nothing.
type failFinishOnce struct {
	tasks.TurnStore
	failed atomic.Bool
}

func (f *failFinishOnce) FinishTurn(ctx context.Context, e tasks.TurnEnd) (tasks.Message, error) {
	if f.failed.CompareAndSwap(false, true) {
		return tasks.Message{}, tasks.ErrUnavailable
	}
	return f.TurnStore.FinishTurn(ctx, e)
}

// A turn whose final write failed after a tool changed a task: its client
// hears what was done; the conversation is free at once, and so is the
// key, whose retry replays the change instead of making it again.
func TestFailedFinalWriteFreesTheConversationAndTheKey(t *testing.T) {
	t.Parallel()
	env := mustEngineWith(t, script(calls("", `c1 add_task {"title":"Water the plants"}`), say("Added it.")),
		func(inner tasks.TurnStore) tasks.TurnStore { return &failFinishOnce{TurnStore: inner} }, nil)
	user := storetest.UserID(t)
	req := chat.Request{UserID: user, Message: "Add a task to water the plants", IdempotencyKey: "plants"}

	_, err := env.engine.Run(context.Background(), req, nil)
	var pe *chat.PartialError
	if !errors.As(err, &pe) || !errors.Is(err, tasks.ErrUnavailable) || len(pe.Done) != 1 {
		t.Fatalf("err = %v, want a partial error of an unavailable database with the add_task", err)
	}

	again, err := env.engine.Run(context.Background(), req, nil)
	if err != nil || !again.Replayed || !again.Interrupted || len(again.ToolCalls) != 1 || again.ToolCalls[0].ID != "c1" {
		t.Fatalf("retry right away: %v, %s; want an interrupted replay of the add_task", err, describeOutcome(again))
	}
	if n := len(env.mustTasks(t, user)); n != 1 {
		t.Fatalf("%d tasks; the retry made the change again", n)
	}
	if _, err := env.engine.Run(context.Background(), chat.Request{UserID: user, ConversationID: pe.ConversationID, Message: "Thanks"}, nil); err != nil {
		t.Fatalf("the next message right away: %v; the conversation must be free", err)
	}
	msgs := env.mustMessages(t, user, pe.ConversationID)
	if len(msgs) != 4 || !msgs[1].Interrupted || len(msgs[1].ToolCalls) != 1 {
		t.Fatalf("thread = %+v; want the change under an interrupted reply, then the next turn", msgs)
	}
}

// A tool call whose statement is held up past the agent's tool deadline
// runs to its outcome, and the model and the client hear that outcome: a
// change that was made is never reported as failed.
func TestToolCallOutlivesItsDeadline(t *testing.T) {
	t.Parallel()
	user := storetest.UserID(t)
	var conv atomic.Int64
	var told atomic.Value
	locked := make(chan struct{})
	model := script(
		then(func(ctx context.Context) {
			// Another transaction holds the conversation's row, as a
			// delete or a takeover would, for longer than the tool deadline.
			tx, err := storetest.Pool(t).Begin(context.Background())
			if err != nil {
				t.Error(err)
				return
			}
			if _, err := tx.Exec(context.Background(), `SELECT 1 FROM conversations WHERE user_id = $1 AND number = $2 FOR UPDATE`, user, conv.Load()); err != nil {
				t.Error(err)
			}
			close(locked)
			time.AfterFunc(400*time.Millisecond, func() { _ = tx.Rollback(context.Background()) })
		}, calls("", `c1 add_task {"title":"Renew the passport"}`)),
		func(ctx context.Context, onText func(string)) (agent.Response, error) {
			return agent.Response{Text: "Done."}, nil
		},
	)
	spy := agenttest.ModelFunc(func(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
		if last := req.Messages[len(req.Messages)-1]; last.Role == agent.RoleTool {
			told.Store(last.Content)
		}
		return model.Stream(ctx, req, onText)
	})
	env := mustEngineWith(t, spy, nil, func(c *chat.Config) { c.Limits.ToolTimeout = 100 * time.Millisecond })
	out, err := env.engine.Run(context.Background(), chat.Request{UserID: user, Message: "Add a task to renew the passport"}, func(e chat.Event) {
		if e.Kind == chat.EventStarted {
			conv.Store(e.ConversationID)
		}
	})
	<-locked
	if err != nil || len(out.ToolCalls) != 1 || out.ToolCalls[0].IsError {
		t.Fatalf("turn: %v, %s; want the add_task to succeed, late", err, describeOutcome(out))
	}
	if content, _ := told.Load().(string); !strings.Contains(content, `"created"`) {
		t.Fatalf("the model was told %q, want the created task", content)
	}
	if n := len(env.mustTasks(t, user)); n != 1 {
		t.Fatalf("%d tasks, want 1", n)
	}
	msgs := env.mustMessages(t, user, out.ConversationID)
	mustSameCall(t, msgs[1].ToolCalls[0], out.ToolCalls[0])
}
