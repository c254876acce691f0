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
		// Both users have a conversation 1, each their own; only the other
		// user has a conversation 3.
		user, other, newcomer := storetest.UserID(t), storetest.UserID(t), storetest.UserID(t)
		mine := mustStart(t, turns, user, 0, "Add milk")
		var theirs []tasks.Turn
		for _, msg := range []string{"Add eggs", "Add flour", "Add sugar"} {
			theirs = append(theirs, mustStart(t, turns, other, 0, msg))
		}
		if mine.Conversation.ID != 1 || theirs[0].Conversation.ID != 1 || theirs[2].Conversation.ID != 3 {
			t.Fatalf("conversations %d and %d, %d; want each user's first numbered 1, the other's third 3",
				mine.Conversation.ID, theirs[0].Conversation.ID, theirs[2].Conversation.ID)
		}
		if got := mustChatConversation(t, turns, user, "1"); got != 1 {
			t.Fatalf(`"1" names conversation %d, want the user's 1`, got)
		}
		if got := mustMessages(t, convs, user, 1); len(got) != 1 || got[0].Content != "Add milk" {
			t.Fatalf("the user's conversation 1 = %+v, want the user's own, not the other user's", got)
		}
		if got := mustChatConversation(t, turns, user, "01"); got != 0 {
			t.Fatalf(`"01" names conversation %d, want none: only the canonical number is the conversation`, got)
		}
		if got := mustChatConversation(t, turns, user, "3"); got != 0 {
			t.Fatalf(`"3" names conversation %d, want none: only another user has a conversation 3`, got)
		}
		if got := mustChatConversation(t, turns, newcomer, "1"); got != 0 {
			t.Fatalf(`a user with no conversation: "1" names conversation %d, want none`, got)
		}
		// The number of another user's conversation is just a chat id: it
		// starts a conversation of the user's own (their second), which it
		// names after.
		started := mustStartWith(t, turns, tasks.TurnStart{UserID: user, Message: "Add bread", ChatID: "3"})
		if started.Conversation.ID != 2 {
			t.Fatalf("a chat id spelling another user's conversation 3 started conversation %d, want the user's next, 2", started.Conversation.ID)
		}
		if got := mustChatConversation(t, turns, user, "3"); got != 2 {
			t.Fatalf(`"3" names conversation %d, want the one started under it, 2`, got)
		}
		if got := mustMessages(t, convs, user, 2); len(got) != 1 || got[0].Content != "Add bread" {
			t.Fatalf("the user's conversation 2 = %+v, want the one started under the chat id", got)
		}
		if got := mustChatConversation(t, turns, other, "3"); got != 3 {
			t.Fatalf(`for the other user "3" names conversation %d, want their own 3`, got)
		}
		for i, turn := range theirs {
			if got := mustMessages(t, convs, other, turn.Conversation.ID); len(got) != 1 || got[0].ID != turn.ID() {
				t.Fatalf("the other user's conversation %d = %+v, want its own message %d only", i+1, got, turn.ID())
			}
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
