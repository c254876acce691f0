package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/taskchat/taskchat/internal/store"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/tasks"
)

func newConversations(tb testing.TB) *store.Conversations {
	tb.Helper()
	return store.NewConversations(storetest.Pool(tb))
}

// mustMessages reads the whole conversation, in one page.
func mustMessages(tb testing.TB, s *store.Conversations, user string, convID int64) []tasks.Message {
	tb.Helper()
	page, err := s.Messages(context.Background(), user, convID, 1000, 1<<30, "")
	if err != nil {
		tb.Fatalf("messages of conversation %d: %v", convID, err)
	}
	return page.Items
}

func mustDeleteConversation(tb testing.TB, s *store.Conversations, user string, convID int64) {
	tb.Helper()
	if err := s.DeleteConversation(context.Background(), user, convID); err != nil {
		tb.Fatalf("delete conversation %d: %v", convID, err)
	}
}

func TestConversationsOfAnotherUser(t *testing.T) {
	t.Parallel()
	turns, s, alice, bob := newTurns(t), newConversations(t), storetest.UserID(t), storetest.UserID(t)
	ctx := context.Background()
	turn := mustStart(t, turns, alice, 0, "alice's secret")
	mustFinish(t, turns, turn, "noted")
	id := turn.Conversation.ID

	if _, err := turns.StartTurn(ctx, tasks.TurnStart{UserID: bob, ConversationID: id, Message: "x", ClaimFor: time.Minute}); !errors.Is(err, tasks.ErrNotFound) {
		t.Errorf("bob continues alice's conversation: %v", err)
	}
	if _, err := s.Messages(ctx, bob, id, 10, 1<<30, ""); !errors.Is(err, tasks.ErrNotFound) {
		t.Errorf("bob reads alice's messages: %v", err)
	}
	if err := s.DeleteConversation(ctx, bob, id); !errors.Is(err, tasks.ErrNotFound) {
		t.Errorf("bob deletes alice's conversation: %v", err)
	}
	if page, _ := s.ListConversations(ctx, bob, 10, ""); len(page.Items) != 0 {
		t.Errorf("bob lists %+v", page.Items)
	}
	if page, err := s.Messages(ctx, alice, id, 10, 1<<30, ""); err != nil || len(page.Items) != 2 {
		t.Errorf("alice's messages after bob's attempts: %v, %v", page.Items, err)
	}
}

// Deleting a conversation deletes the chat, not the record of what its
// tools did to the user's tasks: the calls stay, detached from it.
func TestDeleteConversationKeepsItsToolCalls(t *testing.T) {
	t.Parallel()
	turns, s, ts := newTurns(t), newConversations(t), newTasks(t)
	ctx := context.Background()

	t.Run("of a finished turn", func(t *testing.T) {
		user := storetest.UserID(t)
		turn := mustStart(t, turns, user, 0, "Add milk")
		milk := mustCreate(t, ts, user, "Buy milk", recordOf(turn, 0, "add_task", `{"title":"Buy milk"}`))
		mustFinish(t, turns, turn, "Added.",
			call("call_0", "add_task", `{"title":"Buy milk"}`, `{}`), call("call_1", "list_tasks", `{}`, `{"tasks":[]}`))
		before := mustAuditRows(t, user, turn.ID())
		key := conversationKey(t, user, turn.Conversation.ID)
		if n := storetest.Count(t, `SELECT count(*) FROM messages WHERE conversation_id = $1`, key); n != 2 {
			t.Fatalf("%d messages before delete, want the turn's 2", n)
		}

		mustDeleteConversation(t, s, user, turn.Conversation.ID)
		if n := storetest.Count(t, `SELECT count(*) FROM messages WHERE conversation_id = $1`, key); n != 0 {
			t.Fatalf("%d messages left after delete", n)
		}
		after := mustAuditRows(t, user, turn.ID())
		if len(after) != 2 {
			t.Fatalf("tool calls after delete = %+v, want both kept", after)
		}
		for i, r := range after {
			if r.ConversationID != nil || r.MessageID != nil {
				t.Errorf("call %d still points at conversation %v, message %v", i, r.ConversationID, r.MessageID)
			}
			b := before[i]
			if r.UserID != user || r.TurnID != turn.ID() || r.Tool != b.Tool || r.CallID != b.CallID ||
				!storetest.SameJSON(r.Arguments, b.Arguments) || !storetest.SameJSON(r.Result, b.Result) {
				t.Errorf("call %d = %+v after delete, was %+v", i, r, b)
			}
		}
		if list := mustList(t, ts, user); len(list) != 1 || list[0].ID != milk.ID {
			t.Errorf("tasks after delete = %+v, want the task the chat added", list)
		}
		if _, err := s.Messages(ctx, user, turn.Conversation.ID, 10, 1<<30, ""); !errors.Is(err, tasks.ErrNotFound) {
			t.Errorf("messages of a deleted conversation: %v", err)
		}
	})

	t.Run("while its turn runs", func(t *testing.T) {
		user := storetest.UserID(t)
		turn := mustStart(t, turns, user, 0, "Add milk")
		mustCreate(t, ts, user, "Buy milk", recordOf(turn, 0, "add_task", `{"title":"Buy milk"}`))
		mustDeleteConversation(t, s, user, turn.Conversation.ID)

		_, err := turns.FinishTurn(ctx, turnEnd(turn, "Added.", call("call_0", "add_task", `{"title":"Buy milk"}`, `{}`)))
		if !errors.Is(err, tasks.ErrNotFound) {
			t.Fatalf("finishing the turn of a deleted conversation: %v, want not found", err)
		}
		rows := mustAuditRows(t, user, turn.ID())
		if len(rows) != 1 || rows[0].ConversationID != nil || rows[0].MessageID != nil || rows[0].Tool != "add_task" {
			t.Fatalf("tool calls = %+v, want the recorded call kept, detached", rows)
		}
	})
}

func TestListConversationsPaginates(t *testing.T) {
	t.Parallel()
	turns, s, user := newTurns(t), newConversations(t), storetest.UserID(t)
	ctx := context.Background()
	var ids []int64
	for i := range 5 {
		turn := mustStart(t, turns, user, 0, fmt.Sprintf("conversation %d", i))
		mustFinish(t, turns, turn, "ok")
		ids = append(ids, turn.Conversation.ID)
	}
	var got []int64
	cursor := ""
	for pages := 0; ; pages++ {
		page, err := s.ListConversations(ctx, user, 2, cursor)
		if err != nil || pages > 3 {
			t.Fatalf("page %d: %v", pages, err)
		}
		for _, c := range page.Items {
			got = append(got, c.ID)
		}
		if cursor = page.Next; cursor == "" {
			break
		}
	}
	want := []int64{ids[4], ids[3], ids[2], ids[1], ids[0]}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("pages = %v, want newest first %v", got, want)
	}
	if _, err := s.ListConversations(ctx, user, 2, "not-a-cursor"); !errors.Is(err, tasks.ErrInvalid) {
		t.Fatalf("bad cursor: %v", err)
	}
}

// Reading a conversation finishes a turn of it that was cut short, so the
// thread shows what the turn did; it does so once, however many read it.
func TestMessagesFinishesATurnCutShort(t *testing.T) {
	t.Parallel()
	turns, s, ts := newTurns(t), newConversations(t), newTasks(t)
	ctx := context.Background()
	crashed := func(t *testing.T, user string) tasks.Turn {
		t.Helper()
		turn := mustStart(t, turns, user, 0, "Add milk")
		mustCreate(t, ts, user, "Buy milk", recordOf(turn, 0, "add_task", `{"title":"Buy milk"}`))
		return turn
	}
	wantFinished := func(t *testing.T, msgs []tasks.Message, turn tasks.Turn) {
		t.Helper()
		if roles(msgs) != "user assistant(interrupted)" || msgs[0].ID != turn.ID() || msgs[1].Content != "" ||
			len(msgs[1].ToolCalls) != 1 || msgs[1].ToolCalls[0].Tool != "add_task" {
			t.Fatalf("messages = %s %+v, want the turn finished by one empty interrupted reply holding its call", roles(msgs), msgs)
		}
	}

	t.Run("not while the turn holds its conversation", func(t *testing.T) {
		user := storetest.UserID(t)
		turn := crashed(t, user)
		if msgs := mustMessages(t, s, user, turn.Conversation.ID); roles(msgs) != "user" {
			t.Fatalf("messages of a running turn = %s, want only its user message", roles(msgs))
		}
	})

	t.Run("once its claim ran out", func(t *testing.T) {
		user := storetest.UserID(t)
		turn := crashed(t, user)
		mustLapse(t, user, turn.Conversation.ID)
		first := mustMessages(t, s, user, turn.Conversation.ID)
		wantFinished(t, first, turn)
		again := mustMessages(t, s, user, turn.Conversation.ID)
		wantFinished(t, again, turn)
		if again[1].ID != first[1].ID {
			t.Fatalf("the second read made another reply: %d, then %d", first[1].ID, again[1].ID)
		}
	})

	t.Run("once it was abandoned", func(t *testing.T) {
		user := storetest.UserID(t)
		turn := crashed(t, user)
		if err := turns.AbandonTurn(ctx, user, turn.Conversation.ID, turn.ClaimToken); err != nil {
			t.Fatal(err)
		}
		wantFinished(t, mustMessages(t, s, user, turn.Conversation.ID), turn)
	})

	t.Run("by one of many concurrent reads", func(t *testing.T) {
		for range 10 {
			user := storetest.UserID(t)
			turn := crashed(t, user)
			mustLapse(t, user, turn.Conversation.ID)
			var (
				wg    sync.WaitGroup
				start = make(chan struct{})
				errs  = make([]error, 4)
			)
			for i := range errs {
				wg.Go(func() {
					<-start
					_, errs[i] = s.Messages(ctx, user, turn.Conversation.ID, 10, 1<<30, "")
				})
			}
			close(start)
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
			wantFinished(t, mustMessages(t, s, user, turn.Conversation.ID), turn)
		}
	})

	t.Run("by a read racing the next turn", func(t *testing.T) {
		for range 10 {
			user := storetest.UserID(t)
			turn := crashed(t, user)
			mustLapse(t, user, turn.Conversation.ID)
			var (
				wg    sync.WaitGroup
				start = make(chan struct{})
				next  tasks.Turn
				errs  = make([]error, 3)
			)
			wg.Go(func() {
				<-start
				next, errs[0] = turns.StartTurn(ctx, tasks.TurnStart{UserID: user, ConversationID: turn.Conversation.ID,
					Message: "Did that work?", HistoryLimit: 10, ClaimFor: time.Minute})
			})
			for i := 1; i < len(errs); i++ {
				wg.Go(func() {
					<-start
					_, errs[i] = s.Messages(ctx, user, turn.Conversation.ID, 10, 1<<30, "")
				})
			}
			close(start)
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
			if roles(next.History) != "user assistant(interrupted)" {
				t.Fatalf("next turn's history = %s, want the crashed turn finished", roles(next.History))
			}
			msgs := mustMessages(t, s, user, turn.Conversation.ID)
			wantFinished(t, msgs[:2], turn)
			if roles(msgs) != "user assistant(interrupted) user" {
				t.Fatalf("messages = %s, want the crashed turn finished once, before the next", roles(msgs))
			}
		}
	})
}
