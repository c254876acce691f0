package store_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/taskchat/taskchat/internal/store"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/tasks"
)

// mustChatConversation returns the conversation chatID names for user,
// or 0 when it names none.
func mustChatConversation(tb testing.TB, s *store.Turns, user, chatID string) int64 {
	tb.Helper()
	id, err := s.ChatConversation(context.Background(), user, chatID)
	if errors.Is(err, tasks.ErrNotFound) {
		return 0
	}
	if err != nil {
		tb.Fatalf("chat %q: %v", chatID, err)
	}
	return id
}

func TestChatIDs(t *testing.T) {
	t.Parallel()
	turns, convs := newTurns(t), newConversations(t)

	t.Run("a chat id names the conversation started under it, for its user only", func(t *testing.T) {
		user, other := storetest.UserID(t), storetest.UserID(t)
		first := mustStartWith(t, turns, tasks.TurnStart{UserID: user, Message: "Add milk", ChatID: "aX3_kP9.q:z-1"})
		if got := mustChatConversation(t, turns, user, "aX3_kP9.q:z-1"); got != first.Conversation.ID {
			t.Fatalf("chat id names conversation %d, want %d", got, first.Conversation.ID)
		}
		if got := mustChatConversation(t, turns, other, "aX3_kP9.q:z-1"); got != 0 {
			t.Fatalf("another user's chat id names conversation %d, want none", got)
		}
		if got := mustChatConversation(t, turns, user, "aX3_kP9.q:z-2"); got != 0 {
			t.Fatalf("an unknown chat id names conversation %d, want none", got)
		}
	})

	t.Run("a number names the user's conversation, never another user's", func(t *testing.T) {
		user, other := storetest.UserID(t), storetest.UserID(t)
		mine := mustStart(t, turns, user, 0, "Add milk")
		theirs := mustStart(t, turns, other, 0, "Add eggs")
		n, m := strconv.FormatInt(mine.Conversation.ID, 10), strconv.FormatInt(theirs.Conversation.ID, 10)
		if got := mustChatConversation(t, turns, user, n); got != mine.Conversation.ID {
			t.Fatalf("%q names conversation %d, want the user's %s", n, got, n)
		}
		if got := mustChatConversation(t, turns, user, "0"+n); got != 0 {
			t.Fatalf("%q names conversation %d, want none: only the canonical number is the conversation", "0"+n, got)
		}
		if got := mustChatConversation(t, turns, user, m); got != 0 {
			t.Fatalf("%q names conversation %d, want none: it is another user's", m, got)
		}
		// The number of another user's conversation is just a chat id:
		// it starts a conversation of the user's own, which it names after.
		started := mustStartWith(t, turns, tasks.TurnStart{UserID: user, Message: "Add bread", ChatID: m})
		if started.Conversation.ID == theirs.Conversation.ID {
			t.Fatal("a chat id spelling another user's conversation continued it")
		}
		if got := mustChatConversation(t, turns, user, m); got != started.Conversation.ID {
			t.Fatalf("%q names conversation %d, want the one started under it, %d", m, got, started.Conversation.ID)
		}
		if got := mustMessages(t, convs, other, theirs.Conversation.ID); len(got) != 1 {
			t.Fatalf("the other user's conversation has %d messages, want its own 1", len(got))
		}
	})

	t.Run("first messages sent at once start one conversation", func(t *testing.T) {
		user := storetest.UserID(t)
		const n = 6
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() {
				_, errs[i] = turns.StartTurn(context.Background(), tasks.TurnStart{UserID: user, Message: "Add milk " + strconv.Itoa(i),
					ChatID: "same-chat", HistoryLimit: 50, ClaimFor: time.Minute})
			})
		}
		wg.Wait()
		started := 0
		for _, err := range errs {
			switch {
			case err == nil:
				started++
			case !errors.Is(err, tasks.ErrConversationBusy):
				t.Errorf("a first message failed with %v, want ErrConversationBusy", err)
			}
		}
		page, err := convs.ListConversations(context.Background(), user, 100, "")
		if err != nil {
			t.Fatal(err)
		}
		if started != 1 || len(page.Items) != 1 {
			t.Fatalf("%d first messages started, %d conversations exist; want 1 and 1", started, len(page.Items))
		}
		if got := mustMessages(t, convs, user, page.Items[0].ID); len(got) != 1 {
			t.Fatalf("the conversation holds %d messages, want only the winner's", len(got))
		}
	})

	t.Run("deleting the conversation forgets its chat id", func(t *testing.T) {
		user := storetest.UserID(t)
		first := mustStartWith(t, turns, tasks.TurnStart{UserID: user, Message: "Add milk", ChatID: "to-delete"})
		if err := convs.DeleteConversation(context.Background(), user, first.Conversation.ID); err != nil {
			t.Fatal(err)
		}
		if got := mustChatConversation(t, turns, user, "to-delete"); got != 0 {
			t.Fatalf("the deleted conversation's chat id still names %d", got)
		}
		again := mustStartWith(t, turns, tasks.TurnStart{UserID: user, Message: "Add eggs", ChatID: "to-delete"})
		if got := mustChatConversation(t, turns, user, "to-delete"); got != again.Conversation.ID || got == first.Conversation.ID {
			t.Fatalf("chat id names %d, want the new conversation %d", got, again.Conversation.ID)
		}
	})

	t.Run("the database refuses a chat id out of bounds", func(t *testing.T) {
		user := storetest.UserID(t)
		_, err := turns.StartTurn(context.Background(), tasks.TurnStart{UserID: user, Message: "Add milk", ChatID: "white space",
			HistoryLimit: 50, ClaimFor: time.Minute})
		if !errors.Is(err, tasks.ErrInvalid) {
			t.Fatalf("chat id with a space: %v, want ErrInvalid", err)
		}
	})
}
