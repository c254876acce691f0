package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/taskchat/taskchat/internal/store"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/tasks"
)

// Retention deletes across users, so each story runs on a database of its
// own: the package's shared one holds other tests' rows.

// retentionDays is the RETENTION_DAYS of these stories.
const retentionDays = 30

// mustOwnDB returns a pool on a freshly migrated database of the
// test's own.
func mustOwnDB(tb testing.TB) *pgxpool.Pool {
	tb.Helper()
	u := storetest.EmptyDatabase(tb)
	if err := store.Migrate(context.Background(), u); err != nil {
		tb.Fatal(err)
	}
	return mustPool(tb, u)
}

// mustPool opens a pool on u, as one more replica would, closed when the
// test ends.
func mustPool(tb testing.TB, u string) *pgxpool.Pool {
	tb.Helper()
	pool, err := store.Open(context.Background(), u, store.Settings{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(pool.Close)
	return pool
}

// newRetention keeps 30 days and a day of idempotency keys, deleting in
// batches of batch with no pause.
func newRetention(pool *pgxpool.Pool, batch int) *store.Retention {
	return store.NewRetention(pool, store.RetentionConfig{Days: retentionDays, KeyTTL: 24 * time.Hour, Batch: batch, RunsFor: 10 * time.Minute})
}

func mustSweep(tb testing.TB, r *store.Retention) store.Swept {
	tb.Helper()
	s, err := r.Sweep(context.Background())
	if err != nil {
		tb.Fatalf("sweep: %v", err)
	}
	return s
}

// mustWrite runs a statement that writes rows, most often to make them
// look old, and checks it wrote some.
func mustWrite(tb testing.TB, pool *pgxpool.Pool, sql string, args ...any) {
	tb.Helper()
	tag, err := pool.Exec(context.Background(), sql, args...)
	if err != nil || tag.RowsAffected() == 0 {
		tb.Fatalf("%s: %d rows, %v", sql, tag.RowsAffected(), err)
	}
}

// mustOldConversation is a finished conversation of user whose last turn
// was 31 days ago.
func mustOldConversation(tb testing.TB, pool *pgxpool.Pool, user string) tasks.Turn {
	tb.Helper()
	turns := store.NewTurns(pool)
	turn := mustStart(tb, turns, user, 0, "Hello")
	mustFinish(tb, turns, turn, "Hi")
	mustWrite(tb, pool, `UPDATE conversations SET updated_at = now() - interval '31 days' WHERE user_id = $1 AND number = $2`, user, turn.Conversation.ID)
	return turn
}

func countIn(tb testing.TB, pool *pgxpool.Pool, sql string, args ...any) int {
	tb.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		tb.Fatal(err)
	}
	return n
}

// A pass deletes what is older than the retention period, whatever holds
// it, and nothing else: not a conversation in use, however old its
// messages, nor one a turn holds, nor a task.
func TestRetentionDeletesWhatIsOlderAndKeepsTheRest(t *testing.T) {
	t.Parallel()
	pool := mustOwnDB(t)
	turns, ts, user := store.NewTurns(pool), store.NewTasks(pool), storetest.UserID(t)
	ctx := context.Background()

	// Untouched for 31 days: a chat of the AI SDK, whose tool added a task.
	old := mustStartWith(t, turns, tasks.TurnStart{UserID: user, Message: "Add milk", ChatID: "chat-old"})
	mustCreate(t, ts, user, "Buy milk", recordOf(old, 0, "add_task", `{"title":"Buy milk"}`))
	mustFinish(t, turns, old, "Added.", call("call_0", "add_task", `{"title":"Buy milk"}`, `{}`))
	mustWrite(t, pool, `UPDATE conversations SET updated_at = now() - interval '31 days' WHERE user_id = $1 AND number = $2`, user, old.Conversation.ID)
	oldKey := conversationKeyIn(t, pool, user, old.Conversation.ID)

	// In use today, though its first turn and its calls are 40 days old.
	recent := mustStart(t, turns, user, 0, "Add bread")
	mustCreate(t, ts, user, "Buy bread", recordOf(recent, 0, "add_task", `{"title":"Buy bread"}`))
	mustFinish(t, turns, recent, "Added.", call("call_0", "add_task", `{"title":"Buy bread"}`, `{}`))
	recentKey := conversationKeyIn(t, pool, user, recent.Conversation.ID)
	mustWrite(t, pool, `UPDATE tool_calls SET created_at = now() - interval '40 days' WHERE conversation_id = $1`, recentKey)
	mustWrite(t, pool, `UPDATE messages SET created_at = now() - interval '40 days' WHERE conversation_id = $1`, recentKey)

	// Held by a running turn, with a last activity made to look old.
	held := mustStart(t, turns, user, 0, "Still thinking")
	mustWrite(t, pool, `UPDATE conversations SET updated_at = now() - interval '31 days' WHERE user_id = $1 AND number = $2`, user, held.Conversation.ID)

	// Claimed 31 days ago by a turn whose replica died: the claim lapsed.
	lapsed := mustStart(t, turns, user, 0, "Lost")
	mustWrite(t, pool, `UPDATE conversations SET updated_at = now() - interval '31 days', claimed_until = now() - interval '31 days'
		WHERE user_id = $1 AND number = $2`, user, lapsed.Conversation.ID)

	// Calls detached from a conversation the user deleted, one old, one not.
	for _, age := range []string{"31 days", "29 days"} {
		gone := mustStart(t, turns, user, 0, "Add eggs")
		mustCreate(t, ts, user, "Buy eggs", recordOf(gone, 0, "add_task", `{"title":"Buy eggs"}`))
		mustFinish(t, turns, gone, "Added.", call("call_0", "add_task", `{}`, `{}`))
		mustDeleteConversation(t, store.NewConversations(pool), user, gone.Conversation.ID)
		mustWrite(t, pool, `UPDATE tool_calls SET created_at = now() - $2::interval WHERE user_id = $1 AND turn_id = $3`, user, age, gone.ID())
	}

	// An MCP client's calls, one old, one not.
	for _, age := range []string{"31 days", "1 hour"} {
		if err := ts.RecordCall(ctx, user, *mcpRecord("list_tasks", `{}`), []byte(`{"tasks":[]}`), false); err != nil {
			t.Fatal(err)
		}
		mustWrite(t, pool, `UPDATE tool_calls SET created_at = now() - $2::interval
			WHERE id = (SELECT max(id) FROM tool_calls WHERE user_id = $1 AND source = 'mcp')`, user, age)
	}

	// Idempotency keys of a user who never came back, one expired.
	for _, key := range []string{"expired", "fresh"} {
		if _, err := turns.BeginIdempotent(ctx, keyRequest(user, key)); err != nil {
			t.Fatal(err)
		}
	}
	mustWrite(t, pool, `UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE user_id = $1 AND key = 'expired'`, user)

	// Token usage of today, of 30 days ago and of 31 days ago.
	if err := turns.RecordUsage(ctx, user, tasks.Usage{InputTokens: 10, OutputTokens: 5}); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, pool, `INSERT INTO token_usage (user_id, day, input_tokens, output_tokens, turns)
		SELECT $1, (now() AT TIME ZONE 'UTC')::date - d, 1, 1, 1 FROM unnest(array[30, 31]) d`, user)

	got := mustSweep(t, newRetention(pool, 200))
	want := store.Swept{Conversations: 2, ToolCalls: 2, IdempotencyKeys: 1, UsageDays: 1, Batches: 4}
	if got != want {
		t.Fatalf("swept %+v, want %+v", got, want)
	}

	for _, c := range []struct {
		what      string
		sql       string
		args      []any
		remaining int
	}{
		{"the old conversation", `SELECT count(*) FROM conversations WHERE user_id = $1 AND number = $2`, []any{user, old.Conversation.ID}, 0},
		{"its messages", `SELECT count(*) FROM messages WHERE conversation_id = $1`, []any{oldKey}, 0},
		{"its tool calls", `SELECT count(*) FROM tool_calls WHERE user_id = $1 AND turn_id = $2`, []any{user, old.ID()}, 0},
		{"its chat id", `SELECT count(*) FROM chat_ids WHERE user_id = $1`, []any{user}, 0},
		{"the lapsed conversation", `SELECT count(*) FROM conversations WHERE user_id = $1 AND number = $2`, []any{user, lapsed.Conversation.ID}, 0},
		{"the recent conversation's messages", `SELECT count(*) FROM messages WHERE conversation_id = $1`, []any{recentKey}, 2},
		{"its 40-day-old calls", `SELECT count(*) FROM tool_calls WHERE conversation_id = $1`, []any{recentKey}, 1},
		{"the held conversation's message", `SELECT count(*) FROM messages WHERE conversation_id = $1`, []any{conversationKeyIn(t, pool, user, held.Conversation.ID)}, 1},
		{"detached and MCP calls", `SELECT count(*) FROM tool_calls WHERE user_id = $1 AND conversation_id IS NULL`, []any{user}, 2},
		{"idempotency keys", `SELECT count(*) FROM idempotency_keys WHERE user_id = $1 AND key = 'fresh'`, []any{user}, 1},
		{"usage days", `SELECT count(*) FROM token_usage WHERE user_id = $1 AND day >= (now() AT TIME ZONE 'UTC')::date - 30`, []any{user}, 2},
		{"tasks", `SELECT count(*) FROM tasks WHERE user_id = $1`, []any{user}, 4},
	} {
		if n := countIn(t, pool, c.sql, c.args...); n != c.remaining {
			t.Errorf("%s: %d left, want %d", c.what, n, c.remaining)
		}
	}
	if _, err := turns.ChatConversation(ctx, user, "chat-old"); !errors.Is(err, tasks.ErrNotFound) {
		t.Errorf("the deleted chat's id still names a conversation: %v", err)
	}
	if again := mustSweep(t, newRetention(pool, 200)); again != (store.Swept{}) {
		t.Errorf("a second pass swept %+v, want nothing", again)
	}
}

// Each statement deletes at most a batch: five old conversations in
// batches of two take three statements.
func TestRetentionDeletesInBatches(t *testing.T) {
	t.Parallel()
	pool := mustOwnDB(t)
	user := storetest.UserID(t)
	for range 5 {
		mustOldConversation(t, pool, user)
	}
	got := mustSweep(t, newRetention(pool, 2))
	if got.Conversations != 5 || got.Batches != 3 {
		t.Fatalf("swept %+v, want 5 conversations in 3 batches", got)
	}
}

// Long conversations go fewer at a time: a statement deletes, of the
// conversations it picks, the oldest whose messages fit its budget, and a
// conversation longer than the budget alone, whole.
func TestRetentionDeletesLongConversationsFewerAtATime(t *testing.T) {
	t.Parallel()
	pool := mustOwnDB(t)
	user := storetest.UserID(t)
	var keys []int64
	for i := range 5 { // oldest first; each of two messages, the middle one of twelve
		turn := mustOldConversation(t, pool, user)
		mustWrite(t, pool, `UPDATE conversations SET updated_at = now() - interval '40 days' + $3 * interval '1 hour'
			WHERE user_id = $1 AND number = $2`, user, turn.Conversation.ID, i)
		keys = append(keys, conversationKeyIn(t, pool, user, turn.Conversation.ID))
	}
	mustWrite(t, pool, `INSERT INTO messages (conversation_id, user_id, role, content)
		SELECT $1, $2, 'user', 'more ' || g FROM generate_series(1, 10) g`, keys[2], user)
	r := store.NewRetention(pool, store.RetentionConfig{Days: retentionDays, KeyTTL: time.Hour, Batch: 10, BatchMessages: 4, RunsFor: 10 * time.Minute})
	got := mustSweep(t, r)
	// Two of two messages each; then the long one alone; then the last two.
	if got.Conversations != 5 || got.Batches != 3 {
		t.Fatalf("swept %+v, want 5 conversations in 3 statements", got)
	}
	if n := countIn(t, pool, `SELECT count(*) FROM messages`); n != 0 {
		t.Fatalf("%d messages left", n)
	}
}

// A conversation a turn claims while the pass runs is not deleted: the pass
// skips the row the turn has locked, and the claim makes it recent.
func TestRetentionSkipsAConversationATurnIsClaiming(t *testing.T) {
	t.Parallel()
	pool := mustOwnDB(t)
	user := storetest.UserID(t)
	ctx := context.Background()
	claimed, other := mustOldConversation(t, pool, user), mustOldConversation(t, pool, user)

	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if tag, err := tx.Exec(ctx, `UPDATE conversations SET claim_token = gen_random_uuid(), claimed_until = now() + interval '1 minute',
		updated_at = now() WHERE user_id = $1 AND number = $2`, user, claimed.Conversation.ID); err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("claim the conversation: %v rows, %v", tag.RowsAffected(), err)
	}
	if got := mustSweep(t, newRetention(pool, 200)); got.Conversations != 1 {
		t.Fatalf("swept %+v while a turn claims one of two old conversations, want the other one", got)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got := mustSweep(t, newRetention(pool, 200)); got.Conversations != 0 {
		t.Fatalf("swept %+v after the claim, want nothing", got)
	}
	if countIn(t, pool, `SELECT count(*) FROM conversations WHERE user_id = $1 AND number = $2`, user, claimed.Conversation.ID) != 1 ||
		countIn(t, pool, `SELECT count(*) FROM conversations WHERE user_id = $1 AND number = $2`, user, other.Conversation.ID) != 0 {
		t.Fatal("the claimed conversation went, or the other stayed")
	}
}

// Two replicas sweeping at once share the work: neither fails or waits for
// the other, and every old row is deleted, and counted, once.
func TestRetentionOnTwoReplicasAtOnce(t *testing.T) {
	t.Parallel()
	pool := mustOwnDB(t)
	user := storetest.UserID(t)
	const n = 300
	mustWrite(t, pool, `
		WITH c AS (
			INSERT INTO conversations (user_id, title, updated_at)
			SELECT $1, 'old', now() - interval '31 days' FROM generate_series(1, $2)
			RETURNING id, user_id
		)
		INSERT INTO messages (conversation_id, user_id, role, content)
		SELECT id, user_id, r, 'x' FROM c, unnest(array['user', 'assistant']) r`, user, n)
	replicas := []*store.Retention{newRetention(pool, 7), newRetention(mustPool(t, pool.Config().ConnString()), 7)}

	var (
		wg    sync.WaitGroup
		swept [2]store.Swept
		errs  [2]error
	)
	for i, r := range replicas {
		wg.Go(func() { swept[i], errs[i] = r.Sweep(context.Background()) })
	}
	wg.Wait()
	t.Logf("replica 0 deleted %d conversations, replica 1 %d", swept[0].Conversations, swept[1].Conversations)
	for i, err := range errs {
		if err != nil {
			t.Errorf("replica %d: %v", i, err)
		}
	}
	if total := swept[0].Conversations + swept[1].Conversations; total != n {
		t.Errorf("the replicas counted %d + %d conversations, want %d in all", swept[0].Conversations, swept[1].Conversations, n)
	}
	if left := countIn(t, pool, `SELECT count(*) FROM conversations`); left != 0 {
		t.Errorf("%d conversations left", left)
	}
	if left := countIn(t, pool, `SELECT count(*) FROM messages`); left != 0 {
		t.Errorf("%d messages left", left)
	}
}

// A retention of no days is RETENTION_DAYS unset: it keeps every
// conversation, and sweeps only the turns' runs.
func TestRetentionOfNoDaysKeepsConversations(t *testing.T) {
	t.Parallel()
	pool := mustOwnDB(t)
	mustOldConversation(t, pool, storetest.UserID(t))
	r := store.NewRetention(pool, store.RetentionConfig{Days: 0, KeyTTL: time.Hour, Batch: 10, RunsFor: time.Minute})
	if _, err := r.Sweep(context.Background()); err != nil {
		t.Fatalf("a sweep of 0 days: %v", err)
	}
	if n := countIn(t, pool, `SELECT count(*) FROM conversations`); n != 1 {
		t.Fatalf("%d conversations left, want 1", n)
	}
	if _, err := store.NewRetention(pool, store.RetentionConfig{Days: -1, Batch: 10, RunsFor: time.Minute}).Sweep(context.Background()); !errors.Is(err, tasks.ErrInvalid) {
		t.Fatalf("a sweep of -1 days: %v, want ErrInvalid", err)
	}
}

// A run is kept while its turn runs and RunsFor after its lease ended
// (its turn's claim, which a turn does not outlive); then it goes with its
// events, and its conversation stays.
func TestRetentionSweepsRunsAfterTheirGrace(t *testing.T) {
	t.Parallel()
	pool := mustOwnDB(t)
	turns, runs, user := store.NewTurns(pool), store.NewRuns(pool), storetest.UserID(t)
	start := func() tasks.Turn {
		turn, err := turns.StartTurn(context.Background(), tasks.TurnStart{UserID: user, Message: "hi", HistoryLimit: 50, ClaimFor: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := runs.AppendRunEvents(context.Background(), user, turn.RunID, 1, [][]byte{[]byte(`"e"`)}, false); err != nil {
			t.Fatal(err)
		}
		return turn
	}
	endedLongAgo, endedJustNow, running, crashedLongAgo := start(), start(), start(), start()
	for _, turn := range []tasks.Turn{endedLongAgo, endedJustNow} {
		if _, err := runs.AppendRunEvents(context.Background(), user, turn.RunID, 2, nil, true); err != nil {
			t.Fatal(err)
		}
	}
	for _, turn := range []tasks.Turn{endedLongAgo, crashedLongAgo} {
		mustExecOn(t, pool, `UPDATE turn_runs SET lease_until = now() - interval '11 minutes' WHERE id = $1`, turn.RunID)
	}
	r := store.NewRetention(pool, store.RetentionConfig{Days: 0, Batch: 1, RunsFor: 10 * time.Minute})
	swept, err := r.Sweep(context.Background())
	if err != nil || swept.Runs != 2 {
		t.Fatalf("swept %+v, %v; want 2 runs", swept, err)
	}
	var left []int64
	rows, _ := pool.Query(context.Background(), `SELECT id FROM turn_runs ORDER BY id`)
	for rows.Next() {
		var id int64
		_ = rows.Scan(&id)
		left = append(left, id)
	}
	if rows.Err() != nil || len(left) != 2 || left[0] != endedJustNow.RunID || left[1] != running.RunID {
		t.Fatalf("runs left %v, want %d and %d", left, endedJustNow.RunID, running.RunID)
	}
	if n := countIn(t, pool, `SELECT count(*) FROM turn_events`); n != 2 {
		t.Fatalf("%d batches of events left, want the 2 of the runs kept", n)
	}
	if n := countIn(t, pool, `SELECT count(*) FROM conversations`); n != 4 {
		t.Fatalf("%d conversations left, want all 4", n)
	}
}

// Stream leases that ran out over a minute ago go, whatever the days: a
// dead replica's, of a user who opened no stream since. Live ones stay.
func TestRetentionSweepsStreamLeasesThatRanOut(t *testing.T) {
	t.Parallel()
	pool := mustOwnDB(t)
	for _, until := range []string{"-2 minutes", "-3 minutes", "-10 seconds", "20 seconds"} {
		mustExecOn(t, pool, `INSERT INTO stream_leases (id, user_id, lease_until) VALUES (gen_random_uuid()::text, 'dead', now() + $1::interval)`, until)
	}
	r := store.NewRetention(pool, store.RetentionConfig{Days: 0, Batch: 1, RunsFor: 10 * time.Minute})
	swept, err := r.Sweep(context.Background())
	if err != nil || swept.StreamLeases != 2 || swept.Total() != 2 {
		t.Fatalf("swept %+v, %v; want 2 stream leases", swept, err)
	}
	if n := countIn(t, pool, `SELECT count(*) FROM stream_leases`); n != 2 {
		t.Fatalf("%d leases left, want the one that just ran out and the live one", n)
	}
}

// mustExecOn runs sql on pool, failing unless it changed one row.
func mustExecOn(tb testing.TB, pool *pgxpool.Pool, sql string, args ...any) {
	tb.Helper()
	if tag, err := pool.Exec(context.Background(), sql, args...); err != nil || tag.RowsAffected() != 1 {
		tb.Fatalf("%s: %v rows, %v", sql, tag.RowsAffected(), err)
	}
}
