package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/taskchat/taskchat/internal/store"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/tasks"
)

// mustToday is the database's UTC date, the day usage is counted on.
func mustToday(tb testing.TB) time.Time {
	tb.Helper()
	var today time.Time
	if err := storetest.Pool(tb).QueryRow(context.Background(), `SELECT (now() AT TIME ZONE 'UTC')::date`).Scan(&today); err != nil {
		tb.Fatal(err)
	}
	return today.UTC()
}

// mustFinishUsing finishes a new conversation's first turn of user, with usage.
func mustFinishUsing(tb testing.TB, s *store.Turns, user string, u tasks.Usage) tasks.Turn {
	tb.Helper()
	turn := mustStart(tb, s, user, 0, "Add a task to count tokens")
	end := turnEnd(turn, "Added.")
	end.Usage = u
	if _, err := s.FinishTurn(context.Background(), end); err != nil {
		tb.Fatal(err)
	}
	return turn
}

func mustDailyUsage(tb testing.TB, s *store.Turns, user string, from, to time.Time) []tasks.DailyUsage {
	tb.Helper()
	days, err := s.DailyUsage(context.Background(), user, from, to)
	if err != nil {
		tb.Fatal(err)
	}
	return days
}

func TestUsageIsCountedPerUserAndDay(t *testing.T) {
	t.Parallel()
	s, alice, bob := newTurns(t), storetest.UserID(t), storetest.UserID(t)
	ctx, today := context.Background(), mustToday(t)

	mustFinishUsing(t, s, alice, tasks.Usage{InputTokens: 100, OutputTokens: 20})
	mustFinishUsing(t, s, alice, tasks.Usage{InputTokens: 50, OutputTokens: 5})
	mustFinishUsing(t, s, bob, tasks.Usage{InputTokens: 7, OutputTokens: 7})
	// A turn that failed after its model used tokens, and stored no reply.
	if err := s.RecordUsage(ctx, alice, tasks.Usage{InputTokens: 3}); err != nil {
		t.Fatal(err)
	}
	// A model that reported nonsense counts nothing, and the reply is kept.
	mustFinishUsing(t, s, alice, tasks.Usage{InputTokens: -5, OutputTokens: -1})
	// Three days ago, as an earlier turn left it.
	if _, err := storetest.Pool(t).Exec(ctx, `INSERT INTO token_usage VALUES ($1, $2, 9, 1, 1)`, alice, today.AddDate(0, 0, -3)); err != nil {
		t.Fatal(err)
	}

	got := mustDailyUsage(t, s, alice, today.AddDate(0, 0, -7), today)
	want := []tasks.DailyUsage{
		{Day: today.AddDate(0, 0, -3), Usage: tasks.Usage{InputTokens: 9, OutputTokens: 1}, Turns: 1},
		{Day: today, Usage: tasks.Usage{InputTokens: 153, OutputTokens: 25}, Turns: 4},
	}
	if len(got) != len(want) {
		t.Fatalf("alice's days = %+v, want %+v", got, want)
	}
	for i := range want {
		if !got[i].Day.Equal(want[i].Day) || got[i].Usage != want[i].Usage || got[i].Turns != want[i].Turns {
			t.Errorf("day %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if got := mustDailyUsage(t, s, alice, today.AddDate(0, 0, -2), today); len(got) != 1 || !got[0].Day.Equal(today) {
		t.Errorf("from two days ago = %+v, want today only", got)
	}
	if got := mustDailyUsage(t, s, bob, today, today); len(got) != 1 || got[0].Usage.Total() != 14 || got[0].Turns != 1 {
		t.Errorf("bob's day = %+v, want his 14 tokens in 1 turn and none of alice's", got)
	}
}

func TestUsageOutlivesItsConversation(t *testing.T) {
	t.Parallel()
	s, user := newTurns(t), storetest.UserID(t)
	turn := mustFinishUsing(t, s, user, tasks.Usage{InputTokens: 40, OutputTokens: 2})
	if err := store.NewConversations(storetest.Pool(t)).DeleteConversation(context.Background(), user, turn.Conversation.ID); err != nil {
		t.Fatal(err)
	}
	today := mustToday(t)
	if got := mustDailyUsage(t, s, user, today, today); len(got) != 1 || got[0].Usage.Total() != 42 {
		t.Fatalf("usage after deleting the conversation = %+v, want its 42 tokens still counted", got)
	}
}

func TestStartTurnChecksTheDailyBudget(t *testing.T) {
	t.Parallel()
	s, user := newTurns(t), storetest.UserID(t)
	ctx := context.Background()
	first := mustFinishUsing(t, s, user, tasks.Usage{InputTokens: 90, OutputTokens: 9})

	// Under the budget, a turn starts, in a new conversation or an old one.
	next := mustStartWith(t, s, tasks.TurnStart{UserID: user, ConversationID: first.Conversation.ID, Message: "And another", DailyTokenBudget: 100})
	end := turnEnd(next, "Done.")
	end.Usage = tasks.Usage{InputTokens: 1}
	if _, err := s.FinishTurn(ctx, end); err != nil {
		t.Fatal(err)
	}

	// At it (100 of 100), no turn starts, and nothing of it is written.
	messages := func() (n int) {
		_ = storetest.Pool(t).QueryRow(ctx, `SELECT count(*) FROM messages WHERE user_id = $1`, user).Scan(&n)
		return n
	}
	before := messages()
	for _, convID := range []int64{0, first.Conversation.ID} {
		_, err := s.StartTurn(ctx, tasks.TurnStart{UserID: user, ConversationID: convID, Message: "One more",
			HistoryLimit: 50, ClaimFor: time.Minute, DailyTokenBudget: 100})
		var be *tasks.BudgetError
		if !errors.As(err, &be) || !errors.Is(err, tasks.ErrTokenBudgetExceeded) || be.Budget != 100 || be.Used != 100 {
			t.Fatalf("conversation %d: StartTurn = %v, want a BudgetError of 100 used of 100", convID, err)
		}
	}
	if after := messages(); after != before {
		t.Fatalf("a refused turn wrote %d messages", after-before)
	}
	// The conversation is not left claimed by the refused turn.
	mustStart(t, s, user, first.Conversation.ID, "Without a budget")
	// The budget is the user's own.
	mustStartWith(t, s, tasks.TurnStart{UserID: storetest.UserID(t), Message: "Someone else", DailyTokenBudget: 100})
}

// A conversation deleted just as its turn stores its reply: the deletion
// holds the conversation's row when the reply is written, and commits
// before the reply's foreign key is checked. The reply has nowhere to go,
// but the tokens its model used still count.
func TestUsageCountsWhenTheConversationGoesAsTheReplyIsStored(t *testing.T) {
	t.Parallel()
	s, user := newTurns(t), storetest.UserID(t)
	ctx, pool := context.Background(), storetest.Pool(t)
	turn := mustStart(t, s, user, 0, "Add a task to count tokens")

	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	var deleter int
	if err := tx.QueryRow(ctx, `DELETE FROM conversations WHERE number = $1 AND user_id = $2 RETURNING pg_backend_pid()`,
		turn.Conversation.ID, user).Scan(&deleter); err != nil {
		t.Fatal(err)
	}
	finished := make(chan error, 1)
	go func() {
		end := turnEnd(turn, "Added.")
		end.Usage = tasks.Usage{InputTokens: 40, OutputTokens: 2}
		_, err := s.FinishTurn(ctx, end)
		finished <- err
	}()
	// FinishTurn waits for the deletion's lock on the conversation.
	deadline := time.Now().Add(10 * time.Second)
	for waiting := false; !waiting; {
		if time.Now().After(deadline) {
			t.Fatal("FinishTurn never waited for the deletion's lock")
		}
		time.Sleep(5 * time.Millisecond)
		_ = pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
			WHERE $1 = ANY (pg_blocking_pids(pid)) AND query LIKE '%INSERT INTO messages%')`, deleter).Scan(&waiting)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-finished; !errors.Is(err, tasks.ErrNotFound) {
		t.Fatalf("FinishTurn = %v, want the conversation not found", err)
	}
	today := mustToday(t)
	if got := mustDailyUsage(t, s, user, today, today); len(got) != 1 || got[0].Usage.Total() != 42 || got[0].Turns != 1 {
		t.Fatalf("usage = %+v, want the turn's 42 tokens counted", got)
	}
}
