package store_test

import (
	"context"
	"errors"
	"net/url"
	"os"
	"sync"
	"testing"

	"github.com/golang-migrate/migrate/v4"
	_ "github.com/golang-migrate/migrate/v4/database/pgx/v5" // registers pgx5://
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"github.com/jackc/pgx/v5"

	"github.com/taskchat/taskchat/internal/store"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/tasks"
	"github.com/taskchat/taskchat/migrations"
)

func TestMain(m *testing.M) { os.Exit(storetest.Run(m)) }

func TestMigrationsUpDownUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u := storetest.EmptyDatabase(t)

	if err := store.Migrate(ctx, u); err != nil {
		t.Fatalf("up: %v", err)
	}
	want := []string{"approvals", "chat_ids", "conversation_counters", "conversations", "idempotency_keys", "messages", "rate_buckets", "schema_migrations", "stream_leases", "task_counters", "tasks", "token_usage", "tool_calls", "turn_events", "turn_runs", "user_settings"}
	if got := mustTables(t, u); !equal(got, want) {
		t.Fatalf("tables after up = %v, want %v", got, want)
	}
	if err := store.MigrateDown(ctx, u); err != nil {
		t.Fatalf("down: %v", err)
	}
	if got := mustTables(t, u); !equal(got, []string{"schema_migrations"}) {
		t.Fatalf("tables after down = %v, want only schema_migrations", got)
	}
	if got := mustIndexes(t, u); len(got) != 1 {
		t.Fatalf("indexes after down = %v, want only schema_migrations' key", got)
	}
	if err := store.Migrate(ctx, u); err != nil {
		t.Fatalf("up again: %v", err)
	}
	if got := mustTables(t, u); !equal(got, want) {
		t.Fatalf("tables after up again = %v, want %v", got, want)
	}
}

func TestMigrateConcurrently(t *testing.T) {
	t.Parallel()
	u := storetest.EmptyDatabase(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { errs[i] = store.Migrate(context.Background(), u) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("migrator %d: %v", i, err)
		}
	}
	if got := mustTables(t, u); len(got) != 16 {
		t.Fatalf("tables = %v", got)
	}
}

func mustTables(tb testing.TB, u string) []string {
	tb.Helper()
	return mustStrings(tb, u, `SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1`)
}

func mustIndexes(tb testing.TB, u string) []string {
	tb.Helper()
	return mustStrings(tb, u, `SELECT indexname FROM pg_indexes WHERE schemaname = 'public' ORDER BY 1`)
}

func mustStrings(tb testing.TB, u, sql string) []string {
	tb.Helper()
	conn, err := pgx.Connect(context.Background(), u)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, _ := conn.Query(context.Background(), sql)
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		tb.Fatal(err)
	}
	return names
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A database whose tool calls were stored under the old rules (each call
// belonged to its reply) gets each call's turn — the user message before
// its reply, in the same conversation — and still migrates down and up.
func TestMigrationGivesOldToolCallsTheirTurn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u := storetest.EmptyDatabase(t)
	mustMigrateTo(t, u, 4)
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	user := storetest.UserID(t)
	insert := func(sql string, args ...any) int64 {
		t.Helper()
		var id int64
		if err := conn.QueryRow(ctx, sql, args...).Scan(&id); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return id
	}
	conversation := func() int64 {
		return insert(`INSERT INTO conversations (user_id, title) VALUES ($1, 'old') RETURNING id`, user)
	}
	message := func(conv int64, role string) int64 {
		return insert(`INSERT INTO messages (conversation_id, user_id, role, content) VALUES ($1, $2, $3, 'x') RETURNING id`, conv, user, role)
	}
	wantTurn := map[int64]int64{} // tool call id to the turn it must get
	calls := func(conv, reply, turn int64, n int) {
		for seq := range n {
			id := insert(`
				INSERT INTO tool_calls (conversation_id, message_id, user_id, call_id, tool, arguments, result, is_error, round, seq, duration_ms)
				VALUES ($1, $2, $3, 'c', 'add_task', '{}', '{}', false, 0, $4, 1) RETURNING id`, conv, reply, user, seq)
			wantTurn[id] = turn
		}
	}
	// Two conversations whose turns interleave, and one whose reply has no
	// user message before it (it can only be its own turn).
	c1, c2, c3 := conversation(), conversation(), conversation()
	c1u1, c2u1 := message(c1, "user"), message(c2, "user")
	c1a1, c2a1 := message(c1, "assistant"), message(c2, "assistant")
	c1u2 := message(c1, "user")
	c1a2 := message(c1, "assistant")
	c3a := message(c3, "assistant")
	// And one where a reply was stored late, after its claim lapsed and the
	// next turn had replied: two replies after one user message. Only the
	// first answers it; the late one's calls must not collide with its calls.
	c4 := conversation()
	c4u1 := message(c4, "user")
	c4u2 := message(c4, "user")
	c4a2 := message(c4, "assistant")
	c4late := message(c4, "assistant")
	_ = c4u1
	calls(c1, c1a1, c1u1, 2)
	calls(c2, c2a1, c2u1, 1)
	calls(c1, c1a2, c1u2, 1)
	calls(c3, c3a, c3a, 1)
	calls(c4, c4a2, c4u2, 2)
	calls(c4, c4late, c4late, 2)

	if err := store.Migrate(ctx, u); err != nil {
		t.Fatalf("up from 4: %v", err)
	}
	rows, _ := conn.Query(ctx, `SELECT id, turn_id FROM tool_calls`)
	got, err := pgx.CollectRows(rows, pgx.RowToStructByPos[struct{ ID, TurnID int64 }])
	if err != nil || len(got) != len(wantTurn) {
		t.Fatalf("tool calls after up = %+v, %v", got, err)
	}
	for _, c := range got {
		if c.TurnID != wantTurn[c.ID] {
			t.Errorf("tool call %d got turn %d, want %d", c.ID, c.TurnID, wantTurn[c.ID])
		}
	}

	// Today's code works on the migrated rows, and adds rows that the old
	// rules had no place for: a call detached from its deleted conversation,
	// and one recorded before its reply.
	pool, err := store.Open(ctx, u, store.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	turns, ts := store.NewTurns(pool), store.NewTasks(pool)
	// The store knows a conversation by its number (migration 000018), not
	// by the id the rows were inserted under.
	number := func(conv int64) int64 {
		t.Helper()
		var n int64
		if err := conn.QueryRow(ctx, `SELECT number FROM conversations WHERE id = $1`, conv).Scan(&n); err != nil {
			t.Fatalf("the number of conversation %d: %v", conv, err)
		}
		return n
	}
	if calls, err := turns.RecoverTurn(ctx, user, tasks.TurnRef{ConversationID: number(c1), TurnID: c1u1}); err != nil || len(calls) != 2 {
		t.Fatalf("the migrated turn's calls = %+v, %v", calls, err)
	}
	turn := mustStartWith(t, turns, tasks.TurnStart{UserID: user, ConversationID: number(c1), Message: "Add milk"})
	if h := turn.History; len(h) != 4 || len(h[1].ToolCalls) != 2 || len(h[3].ToolCalls) != 1 {
		t.Fatalf("history of the migrated conversation = %+v", h)
	}
	mustCreate(t, ts, user, "Buy milk", recordOf(turn, 0, "add_task", `{"title":"Buy milk"}`))
	if err := store.NewConversations(pool).DeleteConversation(ctx, user, number(c2)); err != nil {
		t.Fatal(err)
	}

	mustMigrateTo(t, u, 4)
	var left int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM tool_calls`).Scan(&left); err != nil || left != 8 {
		t.Fatalf("tool calls after down to 4 = %d, %v; want the 8 that still have a reply", left, err)
	}
	if err := store.Migrate(ctx, u); err != nil {
		t.Fatalf("up again: %v", err)
	}
	if err := store.MigrateDown(ctx, u); err != nil {
		t.Fatalf("down: %v", err)
	}
	if err := store.Migrate(ctx, u); err != nil {
		t.Fatalf("up once more: %v", err)
	}
}

// mustMigrateTo migrates the database at u to version, up or down.
func mustMigrateTo(tb testing.TB, u string, version uint) {
	tb.Helper()
	src, err := iofs.New(migrations.FS, ".")
	if err != nil {
		tb.Fatal(err)
	}
	mu, err := url.Parse(u)
	if err != nil {
		tb.Fatal(err)
	}
	mu.Scheme = "pgx5"
	m, err := migrate.NewWithSourceInstance("iofs", src, mu.String())
	if err != nil {
		tb.Fatal(err)
	}
	defer m.Close()
	if err := m.Migrate(version); err != nil && !errors.Is(err, migrate.ErrNoChange) {
		tb.Fatalf("migrate to %d: %v", version, err)
	}
}

// Tasks stored before per-user numbers are numbered per user in id order,
// and each user's next task follows their last one.
func TestMigrationNumbersOldTasksPerUser(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u := storetest.EmptyDatabase(t)
	mustMigrateTo(t, u, 5)
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	alice, bob, carol := storetest.UserID(t), storetest.UserID(t), storetest.UserID(t)
	for _, user := range []string{alice, bob, alice, alice, bob} {
		if _, err := conn.Exec(ctx, `INSERT INTO tasks (user_id, title) VALUES ($1, 'old')`, user); err != nil {
			t.Fatal(err)
		}
	}
	// Alice's second task was deleted before the migration: her numbers
	// follow the tasks that are left.
	if _, err := conn.Exec(ctx, `DELETE FROM tasks WHERE id = (SELECT id FROM tasks WHERE user_id = $1 ORDER BY id OFFSET 1 LIMIT 1)`, alice); err != nil {
		t.Fatal(err)
	}

	if err := store.Migrate(ctx, u); err != nil {
		t.Fatalf("up from 5: %v", err)
	}
	pool, err := store.Open(ctx, u, store.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	ts := store.NewTasks(pool)
	rows, _ := conn.Query(ctx, `SELECT user_id, number FROM tasks ORDER BY id`)
	got, err := pgx.CollectRows(rows, pgx.RowToStructByPos[struct {
		User   string
		Number int64
	}])
	if err != nil || len(got) != 4 {
		t.Fatalf("tasks after up = %+v, %v", got, err)
	}
	want := []struct {
		user   string
		number int64
	}{{alice, 1}, {bob, 1}, {alice, 2}, {bob, 2}}
	for i, w := range want {
		if got[i].User != w.user || got[i].Number != w.number {
			t.Errorf("old task %d is %+v, want number %d of %s", i, got[i], w.number, w.user)
		}
	}
	for user, next := range map[string]int64{alice: 3, bob: 3, carol: 1} {
		if task := mustCreate(t, ts, user, "new", nil); task.ID != next {
			t.Errorf("%s's first task after the migration is number %d, want %d", user, task.ID, next)
		}
	}

	mustMigrateTo(t, u, 5)
	if err := store.Migrate(ctx, u); err != nil {
		t.Fatalf("up again: %v", err)
	}
}
