package chat_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/chat"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/tasks"
)

// A model that fails after a tool changed tasks: the client must hear both
// the failure and the change, the conversation shows the change on an
// interrupted reply, and a retry with the key does not make it twice.
func TestModelFailureAfterAChangeIsPartial(t *testing.T) {
	t.Parallel()
	for _, key := range []string{"", "plumber"} {
		t.Run(map[string]string{"": "no key", "plumber": "key"}[key], func(t *testing.T) {
			t.Parallel()
			env := mustEngine(t, script(
				calls("", `c1 add_task {"title":"Call the plumber"}`),
				failWith(agent.ErrModelServer),
			))
			user := storetest.UserID(t)
			req := chat.Request{UserID: user, Message: "Add a task to call the plumber", IdempotencyKey: key}
			var started int64
			_, err := env.engine.Run(context.Background(), req, func(e chat.Event) {
				if e.Kind == chat.EventStarted {
					started = e.ConversationID
				}
			})

			var pe *chat.PartialError
			if !errors.As(err, &pe) || !errors.Is(err, agent.ErrModelServer) {
				t.Fatalf("err = %v (%T), want a *chat.PartialError matching ErrModelServer", err, err)
			}
			created := env.mustTasks(t, user)
			if len(created) != 1 {
				t.Fatalf("tasks = %+v, want the one added", created)
			}
			if pe.ConversationID != started || len(pe.Done) != 1 || pe.Done[0].ID != "c1" || pe.Done[0].Tool != "add_task" || pe.Done[0].IsError {
				t.Fatalf("partial error of conversation %d with %+v; want conversation %d and the add_task call", pe.ConversationID, pe.Done, started)
			}
			if want := fmt.Sprintf("Added task %d (Call the plumber).", created[0].ID); pe.Summary() != want {
				t.Fatalf("summary %q, want %q", pe.Summary(), want)
			}

			msgs := env.mustMessages(t, user, started)
			if len(msgs) != 2 || !msgs[1].Interrupted || len(msgs[1].ToolCalls) != 1 {
				t.Fatalf("stored messages = %+v, want the user's and an interrupted reply with the call", msgs)
			}
			mustSameCall(t, msgs[1].ToolCalls[0], pe.Done[0])

			// The conversation is free for the next message.
			next := mustEngine(t, script(say("Sorry, I was cut off. The plumber task is added.")))
			if _, err := next.engine.Run(context.Background(), chat.Request{UserID: user, ConversationID: started, Message: "Did it work?"}, nil); err != nil {
				t.Fatalf("the next message in the conversation: %v", err)
			}

			if key != "" {
				again, err := env.engine.Run(context.Background(), req, nil)
				if err != nil || !again.Replayed || !again.Interrupted || len(again.ToolCalls) != 1 || !sameCall(again.ToolCalls[0], pe.Done[0]) {
					t.Fatalf("keyed retry: %v, %s; want an interrupted replay of the add_task", err, describeOutcome(again))
				}
				if n := len(env.mustTasks(t, user)); n != 1 {
					t.Fatalf("the keyed retry added again: %d tasks", n)
				}
			}
		})
	}
}

// A model that fails after only reading changed nothing: its error is the
// model's, not a partial one, though the read is kept with the turn.
func TestModelFailureAfterAReadIsNotPartial(t *testing.T) {
	t.Parallel()
	env := mustEngine(t, script(
		calls("", `c1 list_tasks {}`),
		failWith(agent.ErrModelServer),
	))
	user := storetest.UserID(t)
	var started int64
	_, err := env.engine.Run(context.Background(), chat.Request{UserID: user, Message: "What's on my list?"}, func(e chat.Event) {
		if e.Kind == chat.EventStarted {
			started = e.ConversationID
		}
	})
	var pe *chat.PartialError
	var me *agent.ModelError
	if errors.As(err, &pe) || !errors.As(err, &me) || !errors.Is(err, agent.ErrModelServer) {
		t.Fatalf("err = %v (%T), want the model's error alone", err, err)
	}
	msgs := env.mustMessages(t, user, started)
	if len(msgs) != 2 || !msgs[1].Interrupted || len(msgs[1].ToolCalls) != 1 || msgs[1].ToolCalls[0].Tool != "list_tasks" {
		t.Fatalf("stored messages = %+v, want an interrupted reply with the read", msgs)
	}
}

// The person deletes the conversation while the model is answering, after
// a tool added a task: the task stays (deleting a chat is not deleting
// work), the client hears "not found" with the change, and a keyed retry
// replays what was done rather than adding the task again.
func TestConversationDeletedDuringTheTurn(t *testing.T) {
	t.Parallel()
	for _, key := range []string{"", "deleted"} {
		t.Run(map[string]string{"": "no key", "deleted": "key"}[key], func(t *testing.T) {
			t.Parallel()
			user := storetest.UserID(t)
			var conv atomic.Int64
			var env engineEnv
			deleteConversation := func(ctx context.Context) {
				if err := env.convs.DeleteConversation(ctx, user, conv.Load()); err != nil {
					t.Errorf("delete conversation %d during the turn: %v", conv.Load(), err)
				}
			}
			env = mustEngine(t, script(
				calls("", `c1 add_task {"title":"Water the plants"}`),
				then(deleteConversation, say("Added: Water the plants.")),
			))
			req := chat.Request{UserID: user, Message: "Add a task to water the plants", IdempotencyKey: key}
			_, err := env.engine.Run(context.Background(), req, func(e chat.Event) {
				if e.Kind == chat.EventStarted {
					conv.Store(e.ConversationID)
				}
			})

			var pe *chat.PartialError
			if !errors.Is(err, tasks.ErrNotFound) || !errors.As(err, &pe) {
				t.Fatalf("err = %v (%T), want a *chat.PartialError matching ErrNotFound", err, err)
			}
			if pe.ConversationID != conv.Load() || len(pe.Done) != 1 || pe.Done[0].ID != "c1" || pe.Done[0].Tool != "add_task" {
				t.Fatalf("partial error of conversation %d with %+v, want the add_task call", pe.ConversationID, pe.Done)
			}
			if n := len(env.mustTasks(t, user)); n != 1 {
				t.Fatalf("%d tasks, want the one added before the deletion", n)
			}
			if _, err := env.convs.Messages(context.Background(), user, conv.Load(), 1000, 1<<30, ""); !errors.Is(err, tasks.ErrNotFound) {
				t.Fatalf("the deleted conversation reads as %v", err)
			}
			env.mustNotLogErrors(t)

			if key == "" {
				return
			}
			var again chat.Outcome
			for range 2 {
				again, err = env.engine.Run(context.Background(), req, nil)
				if err != nil || !again.Replayed || len(again.ToolCalls) != 1 || !sameCall(again.ToolCalls[0], pe.Done[0]) {
					t.Fatalf("keyed retry: %v, %s; want a replay of the add_task", err, describeOutcome(again))
				}
				if n := len(env.mustTasks(t, user)); n != 1 {
					t.Fatalf("the keyed retry added again: %d tasks", n)
				}
			}
			// The first answer was an error: its replay must not say the
			// turn completed, any more than a model failure's does.
			if !again.Interrupted {
				t.Fatalf("the keyed retry replays a turn whose conversation was deleted as complete: %s", describeOutcome(again))
			}
		})
	}
}
