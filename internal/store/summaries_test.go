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

// mustTurns plays n turns of conversation convID (0: a new one), each
// "message i" answered "reply i", and returns the conversation.
func mustTurns(tb testing.TB, s *store.Turns, user string, convID int64, from, n int, in tasks.TurnStart) int64 {
	tb.Helper()
	for i := from; i < from+n; i++ {
		in.UserID, in.ConversationID, in.Message = user, convID, fmt.Sprintf("message %d", i)
		turn := mustStartWith(tb, s, in)
		mustFinish(tb, s, turn, fmt.Sprintf("reply %d", i))
		convID = turn.Conversation.ID
	}
	return convID
}

func mustSaveSummary(tb testing.TB, s *store.Turns, user string, convID int64, w tasks.SummaryWrite) tasks.Summary {
	tb.Helper()
	sum, err := s.SaveSummary(context.Background(), user, convID, w)
	if err != nil {
		tb.Fatalf("save summary through %d: %v", w.Through, err)
	}
	return sum
}

func TestATurnSaysWhenItsHistoryOutgrowsItsSummary(t *testing.T) {
	t.Parallel()
	s, user := newTurns(t), storetest.UserID(t)
	window := tasks.TurnStart{HistoryLimit: 6}
	conv := mustTurns(t, s, user, 0, 0, 3, window)

	t.Run("a history that fits its window has nothing to compact", func(t *testing.T) {
		turn := mustStartWith(t, s, tasks.TurnStart{UserID: user, ConversationID: conv, Message: "message 3", HistoryLimit: 6})
		mustFinish(t, s, turn, "reply 3")
		if turn.Compact || turn.Conversation.Summary != nil || len(turn.History) != 6 {
			t.Fatalf("compact %v, summary %+v, %d messages of history; want false, none, 6", turn.Compact, turn.Conversation.Summary, len(turn.History))
		}
	})
	turn := mustStartWith(t, s, tasks.TurnStart{UserID: user, ConversationID: conv, Message: "message 4", HistoryLimit: 6})
	mustFinish(t, s, turn, "reply 4")
	t.Run("one that passed it does", func(t *testing.T) {
		if !turn.Compact || turn.History[0].Content != "message 1" {
			t.Fatalf("compact %v, history from %q; want true, from message 1", turn.Compact, turn.History[0].Content)
		}
	})
	t.Run("until a summary covers what fell out", func(t *testing.T) {
		first := turn.History[0].ID
		saved := mustSaveSummary(t, s, user, conv, tasks.SummaryWrite{Text: "They said hello.", Through: first - 1})
		next := mustStartWith(t, s, tasks.TurnStart{UserID: user, ConversationID: conv, Message: "message 5", HistoryLimit: 6})
		mustFinish(t, s, next, "reply 5")
		got := next.Conversation.Summary
		if got == nil || got.Text != "They said hello." || got.Through != first-1 || !got.At.Equal(saved.At) {
			t.Fatalf("summary = %+v, want %+v", got, saved)
		}
		// The window moved on by a turn: message 1 and its reply fell out,
		// and the summary does not cover them.
		if !next.Compact {
			t.Fatal("the window moved past the summary, but the turn does not say so")
		}
	})
	t.Run("a reopened turn says it too", func(t *testing.T) {
		again, err := s.ReopenTurn(context.Background(), tasks.TurnStart{UserID: user, ConversationID: conv, Message: "message 5",
			HistoryLimit: 6, ClaimFor: time.Minute}, 0)
		if err != nil {
			t.Fatal(err)
		}
		mustAbandon(t, s, again)
		if !again.Compact || again.Conversation.Summary == nil {
			t.Fatalf("reopened: compact %v, summary %+v", again.Compact, again.Conversation.Summary)
		}
	})
}

func mustAbandon(tb testing.TB, s *store.Turns, turn tasks.Turn) {
	tb.Helper()
	if err := s.AbandonTurn(context.Background(), turn.Conversation.UserID, turn.Conversation.ID, turn.ClaimToken); err != nil {
		tb.Fatal(err)
	}
}

func TestASummaryOnlyMovesForward(t *testing.T) {
	t.Parallel()
	s, user := newTurns(t), storetest.UserID(t)
	conv := mustTurns(t, s, user, 0, 0, 4, tasks.TurnStart{})
	msgs, err := s.MessagesBetween(context.Background(), user, conv, 0, 1<<62, 100, 1<<20)
	if err != nil || len(msgs) != 8 {
		t.Fatalf("messages = %d, %v", len(msgs), err)
	}
	third := msgs[3].ID
	mustSaveSummary(t, s, user, conv, tasks.SummaryWrite{Text: "first", Through: msgs[1].ID})

	for name, w := range map[string]tasks.SummaryWrite{
		"from a summary it no longer has": {Text: "stale", From: 0, Through: third},
		"back to where it was":            {Text: "same", From: msgs[1].ID, Through: msgs[1].ID},
		"backwards":                       {Text: "back", From: msgs[1].ID, Through: msgs[0].ID},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := s.SaveSummary(context.Background(), user, conv, w); !errors.Is(err, tasks.ErrSummaryMoved) {
				t.Fatalf("err = %v, want ErrSummaryMoved", err)
			}
		})
	}
	t.Run("another user's conversation is not found", func(t *testing.T) {
		_, err := s.SaveSummary(context.Background(), storetest.UserID(t), conv, tasks.SummaryWrite{Text: "x", Through: third})
		if !errors.Is(err, tasks.ErrNotFound) {
			t.Fatalf("err = %v, want ErrNotFound", err)
		}
	})
	t.Run("the conversation shows the summary it kept", func(t *testing.T) {
		c, err := store.NewConversations(storetest.Pool(t)).Conversation(context.Background(), user, conv)
		if err != nil || c.Summary == nil || c.Summary.Text != "first" || c.Summary.Through != msgs[1].ID {
			t.Fatalf("conversation = %+v (summary %+v), %v", c, c.Summary, err)
		}
	})
}

// Compactions that run at once, of one span, store one summary: each
// compares the summary it started from, and only the first finds it.
func TestConcurrentCompactionsStoreOneSummary(t *testing.T) {
	t.Parallel()
	s, user := newTurns(t), storetest.UserID(t)
	conv := mustTurns(t, s, user, 0, 0, 3, tasks.TurnStart{})
	msgs, err := s.MessagesBetween(context.Background(), user, conv, 0, 1<<62, 100, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	const writers = 16
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = s.SaveSummary(context.Background(), user, conv, tasks.SummaryWrite{
				Text: fmt.Sprintf("summary %d", i), Through: msgs[1+i%4].ID, Usage: tasks.Usage{InputTokens: 10, OutputTokens: 1}})
		}()
	}
	wg.Wait()
	stored := 0
	for i, err := range errs {
		switch {
		case err == nil:
			stored++
		case !errors.Is(err, tasks.ErrSummaryMoved):
			t.Fatalf("writer %d: %v", i, err)
		}
	}
	if stored != 1 {
		t.Fatalf("%d summaries stored, want 1", stored)
	}
	t.Run("every one's tokens count", func(t *testing.T) {
		days, err := s.DailyUsage(context.Background(), user, time.Now().AddDate(0, 0, -1), time.Now().AddDate(0, 0, 1))
		if err != nil || len(days) != 1 {
			t.Fatalf("usage = %+v, %v", days, err)
		}
		if got := days[0].Usage; got.InputTokens != 10*writers || got.OutputTokens != writers {
			t.Fatalf("usage = %+v, want %d input and %d output tokens", got, 10*writers, writers)
		}
	})
}

func TestCompactionReadsUncoveredMessagesInChunks(t *testing.T) {
	t.Parallel()
	s, user := newTurns(t), storetest.UserID(t)
	conv := mustTurns(t, s, user, 0, 0, 5, tasks.TurnStart{})
	all, err := s.MessagesBetween(context.Background(), user, conv, 0, 1<<62, 100, 1<<20)
	if err != nil || len(all) != 10 {
		t.Fatalf("messages = %d, %v", len(all), err)
	}
	for _, tc := range []struct {
		name             string
		after, before    int64
		limit, maxChars  int
		wantFirst, wantN int
	}{
		{"bounded by count", all[1].ID, all[9].ID, 3, 1 << 20, 2, 3},
		{"bounded by the message before", all[1].ID, all[4].ID, 100, 1 << 20, 2, 2},
		{"bounded by size, but one at least", 0, all[9].ID, 100, 1, 0, 1},
		{"bounded by size", 0, all[9].ID, 100, len("message 0") + len("reply 0") + len("message 1"), 0, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.MessagesBetween(context.Background(), user, conv, tc.after, tc.before, tc.limit, tc.maxChars)
			if err != nil || len(got) != tc.wantN || got[0].ID != all[tc.wantFirst].ID {
				t.Fatalf("got %d messages from %+v, %v; want %d from %q", len(got), got, err, tc.wantN, all[tc.wantFirst].Content)
			}
		})
	}
}

func TestClaimCompaction(t *testing.T) {
	t.Parallel()
	s, user := newTurns(t), storetest.UserID(t)
	conv := mustTurns(t, s, user, 0, 0, 4, tasks.TurnStart{})
	in := tasks.TurnStart{UserID: user, ConversationID: conv, HistoryLimit: 50, ClaimFor: time.Minute}

	c, err := s.ClaimCompaction(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("it loads the history before the last turn", func(t *testing.T) {
		if len(c.History) != 6 || c.History[5].Content != "reply 2" || c.Compact {
			t.Fatalf("history %d messages, compact %v", len(c.History), c.Compact)
		}
	})
	t.Run("a turn finds the conversation busy", func(t *testing.T) {
		_, err := s.StartTurn(context.Background(), tasks.TurnStart{UserID: user, ConversationID: conv, Message: "hi", HistoryLimit: 5, ClaimFor: time.Minute})
		if !errors.Is(err, tasks.ErrConversationBusy) {
			t.Fatalf("err = %v, want busy", err)
		}
	})
	t.Run("so does another compaction", func(t *testing.T) {
		if _, err := s.ClaimCompaction(context.Background(), in); !errors.Is(err, tasks.ErrConversationBusy) {
			t.Fatalf("err = %v, want busy", err)
		}
	})
	mustAbandon(t, s, c)
	t.Run("another user's is not found", func(t *testing.T) {
		other := in
		other.UserID = storetest.UserID(t)
		if _, err := s.ClaimCompaction(context.Background(), other); !errors.Is(err, tasks.ErrNotFound) {
			t.Fatalf("err = %v, want not found", err)
		}
	})
	t.Run("it leaves the conversation's activity alone", func(t *testing.T) {
		convs := store.NewConversations(storetest.Pool(t))
		before, err := convs.Conversation(context.Background(), user, conv)
		if err != nil {
			t.Fatal(err)
		}
		c, err := s.ClaimCompaction(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		mustAbandon(t, s, c)
		after, err := convs.Conversation(context.Background(), user, conv)
		if err != nil || !after.UpdatedAt.Equal(before.UpdatedAt) {
			t.Fatalf("updated_at %v, then %v (%v)", before.UpdatedAt, after.UpdatedAt, err)
		}
	})
}
