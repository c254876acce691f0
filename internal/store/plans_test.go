package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/taskchat/taskchat/internal/store"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/tasks"
)

// longConversation makes, in a fresh database whose tables the planner has
// no statistics of (autovacuum is off for them, and nothing analyses them),
// a conversation of n messages, a tool call on every fourth reply, and then
// 20,000 newer messages of 400 other conversations, so that the
// conversation's newest messages are not the table's. It returns a pool on
// that database, the user and the conversation's number, as the store's
// statements take it.
func longConversation(tb testing.TB, n int) (*pgxpool.Pool, string, int64) {
	tb.Helper()
	ctx := context.Background()
	pool := mustOwnDB(tb)
	var conv int64
	err := pool.QueryRow(ctx, `
		WITH c AS (
			INSERT INTO conversations (user_id, title) VALUES ('long', 'long') RETURNING id, number
		), m AS (
			INSERT INTO messages (conversation_id, user_id, role, content)
			SELECT c.id, 'long', CASE WHEN g % 2 = 1 THEN 'user' ELSE 'assistant' END, 'message ' || g
			FROM c, generate_series(1, $1) g
			RETURNING id, conversation_id, role
		), t AS (
			INSERT INTO tool_calls (conversation_id, message_id, turn_id, user_id, call_id, tool, arguments, result, is_error, round, seq, duration_ms)
			SELECT conversation_id, id, id - 1, 'long', 'call_' || id, 'add_task', '{"title":"x"}', '{"task_id":1}', false, 0, 0, 1
			FROM m WHERE role = 'assistant' AND id % 4 = 0
		)
		SELECT number FROM c`, n).Scan(&conv)
	if err != nil {
		tb.Fatal(err)
	}
	for _, table := range []string{"conversations", "messages", "tool_calls"} {
		if _, err := pool.Exec(ctx, "ALTER TABLE "+table+" SET (autovacuum_enabled = false)"); err != nil {
			tb.Fatal(err)
		}
	}
	_, err = pool.Exec(ctx, `
		WITH c AS (
			INSERT INTO conversations (user_id, title) SELECT 'other' || g, 'other' FROM generate_series(1, 400) g RETURNING id, user_id
		)
		INSERT INTO messages (conversation_id, user_id, role, content)
		SELECT c.id, c.user_id, 'user', 'newer ' || g FROM c, generate_series(1, 50) g`)
	if err != nil {
		tb.Fatal(err)
	}
	return pool, "long", conv
}

// TestHistoryPlansStayBounded reads the plans of the history statements a
// turn runs, custom and generic, on a conversation of 10,000 messages in
// tables never analysed, as StartTurn runs them (after planFromIndexes, the
// two reads after HistoryWindow). Each may read from messages and
// tool_calls only about as many rows as the history holds, whatever the
// conversation's length, and the window no more than its budget allows:
// each message of longConversation is at least 9 characters.
func TestHistoryPlansStayBounded(t *testing.T) {
	t.Parallel()
	pool, user, conv := longConversation(t, 10_000)
	ctx := context.Background()
	var analysed bool
	if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_user_tables
		WHERE relname IN ('messages', 'tool_calls') AND (last_analyze IS NOT NULL OR last_autoanalyze IS NOT NULL))`).Scan(&analysed); err != nil || analysed {
		t.Fatalf("the tables must not have been analysed (analysed %v, %v)", analysed, err)
	}
	window := func(limit, chars int) string {
		return fmt.Sprintf("SELECT 1 FROM (%s) w", strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(
			store.HistoryWindow, "$1", fmt.Sprint(conv)), "$2", "'"+user+"'"), "$3", fmt.Sprint(limit)), "$4", fmt.Sprint(chars)))
	}
	for _, c := range []struct {
		name         string
		limit, chars int
	}{{"by count", 50, 1 << 30}, {"by size", 1000, 20 * 9}} {
		most := float64(2*min(c.limit, c.chars/9) + 2)
		for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
			t.Run(c.name+" window "+mode, func(t *testing.T) {
				plan := explainAs(t, pool, mode, "bigint, text, int, bigint", store.HistoryWindow,
					fmt.Sprintf("%d, '%s', %d, %d", conv, user, c.limit, c.chars))
				checkRead(t, plan, most)
			})
			for _, q := range []struct{ name, sql string }{{"messages", store.HistoryMessages}, {"tool calls", store.HistoryToolCalls}} {
				t.Run(c.name+" "+q.name+" "+mode, func(t *testing.T) {
					plan := explainAfter(t, pool, true, window(c.limit, c.chars), mode, "bigint, text", q.sql, fmt.Sprintf("%d, '%s'", conv, user))
					checkRead(t, plan, most)
				})
			}
		}
	}
}

// checkRead fails when a scan of messages or tool_calls in plan reads more
// than most rows, over all its loops.
func checkRead(t *testing.T, plan planNode, most float64) {
	t.Helper()
	for _, n := range scans(plan) {
		if n.Relation != "messages" && n.Relation != "tool_calls" {
			continue
		}
		if read := n.read(); read > most {
			t.Errorf("%s on %s read %v rows of a 10,000-message conversation, more than %v", n.Type, n.Relation, read, most)
		}
	}
}

// TestConversationPagesReadOnlyThemselves reads the plans of the
// conversation list's statements, custom and generic, as the store runs
// them (no planFromIndexes), for a user with 10,000 conversations, one in
// ten of every moment's, among other users' 90,000: the first page, and a
// page near the end of the list, may each read only about as many
// conversations as a page holds. (A generic plan of one statement with an
// optional cursor read nearly the whole list; without the index on
// (user_id, updated_at DESC, number DESC), a page is read from retention's
// index on updated_at, ten times the page, or from the user's every
// conversation.) The user's conversations take their numbers from the
// trigger as they are inserted, oldest first, and a hundred at a time
// share their last activity, as conversations imported at once would, so
// that a page's bound falls on the number, the tie-break: an index without
// it reads the page's tied predecessors too. The other users'
// conversations are given their numbers: the trigger would take seconds to
// count so many.
func TestConversationPagesReadOnlyThemselves(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := mustOwnDB(t)
	// others is how many of other users' conversations there are for each
	// of the user's; tied, how many of the user's share a last activity.
	const n, limit, others, tied = 10_000, 20, 9, 100
	if _, err := pool.Exec(ctx, `
		INSERT INTO conversations (user_id, title, created_at, updated_at)
		SELECT 'many', 'c' || p, now() - p * interval '1 second', now() - ((p / $2::int - 1) / $3::int) * $3::int * interval '1 second'
		FROM generate_series($1::int * $2::int, $2::int, -$2::int) p`, n, others+1, tied); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `
		INSERT INTO conversations (user_id, number, title, created_at, updated_at)
		SELECT 'other' || p % 1000, p, 'c' || p, now() - p * interval '1 second', now() - (p / $2::int) * interval '1 second'
		FROM generate_series(1, $1::int * $2::int) p WHERE p % $2::int <> 0`, n, others+1); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `ANALYZE conversations`); err != nil {
		t.Fatal(err)
	}
	var count, numbers, last, counter int
	if err := pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT number), max(number),
		(SELECT last_number FROM conversation_counters WHERE user_id = 'many') FROM conversations WHERE user_id = 'many'`).
		Scan(&count, &numbers, &last, &counter); err != nil || count != n || numbers != n || last != n || counter != n {
		t.Fatalf("the user has %d conversations numbered %d ways up to %d, counted %d, %v; want %d numbered 1 to %d",
			count, numbers, last, counter, err, n, n)
	}
	// The page near the end starts after a conversation, about two pages
	// before the end, whose last activity the next one shares.
	var deep time.Time
	var deepNumber int64
	if err := pool.QueryRow(ctx, `
		SELECT updated_at, number FROM (
			SELECT updated_at, number, row_number() OVER w AS pos, lead(updated_at) OVER w AS next
			FROM conversations WHERE user_id = 'many'
			WINDOW w AS (ORDER BY updated_at DESC, number DESC)) c
		WHERE pos > $1 AND next = updated_at ORDER BY pos LIMIT 1`, n-2*limit).Scan(&deep, &deepNumber); err != nil {
		t.Fatal(err)
	}
	checkPagesRead(t, pool, false, "conversations", limit, []pageStatement{
		{"first page", "text, int", store.ListConversationsFirst, fmt.Sprintf("'many', %d", limit+1)},
		{"a page near the end", "text, int, timestamptz, bigint", store.ListConversationsAfter,
			fmt.Sprintf("'many', %d, '%s', %d", limit+1, deep.Format(time.RFC3339Nano), deepNumber)},
	}, func(t *testing.T, plan planNode) {
		if plan.ActualRows != limit+1 {
			t.Errorf("the page has %v conversations, want %d", plan.ActualRows, limit+1)
		}
	})
}

// pageStatement is a statement that reads a page, its parameters' types
// and the arguments it is explained with.
type pageStatement struct{ name, types, sql, args string }

// checkPagesRead explains each page's statement, custom plan and generic,
// and fails when a scan of relation reads more than about two pages of
// limit rows; check, when not nil, looks at each plan too.
func checkPagesRead(t *testing.T, pool *pgxpool.Pool, fromIndexes bool, relation string, limit int, pages []pageStatement, check func(*testing.T, planNode)) {
	t.Helper()
	for _, p := range pages {
		for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
			t.Run(p.name+" "+mode, func(t *testing.T) {
				plan := explainWith(t, pool, fromIndexes, mode, p.types, p.sql, p.args)
				if check != nil {
					check(t, plan)
				}
				for _, s := range scans(plan) {
					if read := s.read(); s.Relation == relation && read > float64(2*limit+2) {
						t.Errorf("%s on %s read %v rows for a page of %d", s.Type, relation, read, limit)
					}
				}
			})
		}
	}
}

// TestTaskPagesReadOnlyThemselves reads the plans of the task list's
// statements (ListTasksPage), custom and generic, as the store runs them
// (no planFromIndexes), for a user with 20,000 tasks of which one in ten is
// pending, beside another user's 5,000: the first page and a page near the
// end, of all the tasks, of the pending ones and of the completed ones, may
// each read only about as many tasks as a page holds. (From the index on
// (user_id, number) alone, a page of pending tasks read the ten times as
// many completed ones in between.)
func TestTaskPagesReadOnlyThemselves(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := mustOwnDB(t)
	const n, limit = 20_000, 200
	if _, err := pool.Exec(ctx, `
		INSERT INTO tasks (user_id, number, title, completed)
		SELECT 'many', g, 'task ' || g, g % 10 <> 0 FROM generate_series(1, $1) g
		UNION ALL
		SELECT 'other', g, 'task ' || g, g % 2 = 0 FROM generate_series(1, $1 / 4) g`, n); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `ANALYZE tasks`); err != nil {
		t.Fatal(err)
	}
	// deep is the number a page starts after, two pages before the end of
	// the listing whose tasks match cond.
	deep := func(cond string) int64 {
		var number int64
		if err := pool.QueryRow(ctx, `SELECT number FROM tasks WHERE user_id = 'many' AND `+cond+`
			ORDER BY number DESC OFFSET $1 LIMIT 1`, 2*limit).Scan(&number); err != nil {
			t.Fatal(err)
		}
		return number
	}
	all, byStatus := "text, bigint, int", "text, bigint, int, boolean"
	checkPagesRead(t, pool, false, "tasks", limit, []pageStatement{
		{"all, first page", all, store.ListTasksPage, fmt.Sprintf("'many', 0, %d", limit+1)},
		{"all, a page near the end", all, store.ListTasksPage, fmt.Sprintf("'many', %d, %d", deep("true"), limit+1)},
		{"pending, first page", byStatus, store.ListTasksPageByStatus, fmt.Sprintf("'many', 0, %d, false", limit+1)},
		{"pending, a page near the end", byStatus, store.ListTasksPageByStatus, fmt.Sprintf("'many', %d, %d, false", deep("NOT completed"), limit+1)},
		{"completed, first page", byStatus, store.ListTasksPageByStatus, fmt.Sprintf("'many', 0, %d, true", limit+1)},
		{"completed, a page near the end", byStatus, store.ListTasksPageByStatus, fmt.Sprintf("'many', %d, %d, true", deep("completed"), limit+1)},
	}, func(t *testing.T, plan planNode) {
		if plan.ActualRows != limit+1 {
			t.Errorf("the page has %v tasks, want %d", plan.ActualRows, limit+1)
		}
	})

	// A query's words are matched against each task the index yields, as
	// the store runs them (under planFromIndexes): a page of a word every
	// task holds reads a page; one of a word no task holds reads the user's
	// tasks of that status, and never another user's.
	search, searchByStatus := "text, bigint, int, text[]", "text, bigint, int, boolean, text[]"
	checkPagesRead(t, pool, true, "tasks", limit, []pageStatement{
		{"all, a word every task holds", search, store.ListTasksPageSearch, fmt.Sprintf("'many', 0, %d, array['%%TASK%%']", limit+1)},
		{"all, a word every task holds, near the end", search, store.ListTasksPageSearch, fmt.Sprintf("'many', %d, %d, array['%%task%%']", deep("true"), limit+1)},
		{"pending, a word every task holds", searchByStatus, store.ListTasksPageSearchByStatus, fmt.Sprintf("'many', 0, %d, false, array['%%task%%', '%%as%%']", limit+1)},
	}, func(t *testing.T, plan planNode) {
		if plan.ActualRows != limit+1 {
			t.Errorf("the page has %v tasks, want %d", plan.ActualRows, limit+1)
		}
	})
	for _, c := range []struct {
		name, types, sql, args string
		most                   float64
	}{
		{"all", search, store.ListTasksPageSearch, fmt.Sprintf("'many', 0, %d, array['%%dentist%%']", limit+1), n},
		{"pending", searchByStatus, store.ListTasksPageSearchByStatus, fmt.Sprintf("'many', 0, %d, false, array['%%dentist%%']", limit+1), n / 10},
	} {
		for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
			plan := explainWith(t, pool, true, mode, c.types, c.sql, c.args)
			for _, s := range scans(plan) {
				if read := s.read(); s.Relation == "tasks" && read > c.most {
					t.Errorf("%s, a word no task holds, %s: %s read %v tasks, more than the user's %v", c.name, mode, s.Type, read, c.most)
				}
			}
		}
	}
}

// planNode is the part of an EXPLAIN (ANALYZE, FORMAT JSON) node we check.
type planNode struct {
	Type            string     `json:"Node Type"`
	Relation        string     `json:"Relation Name"`
	ActualRows      float64    `json:"Actual Rows"`
	RemovedByFilter float64    `json:"Rows Removed by Filter"`
	Loops           float64    `json:"Actual Loops"`
	Plans           []planNode `json:"Plans"`
}

// read is how many rows the node read over all its loops: EXPLAIN gives
// rows a loop.
func (n planNode) read() float64 {
	return (n.ActualRows + n.RemovedByFilter) * max(n.Loops, 1)
}

// explainAs runs sql, prepared, under planFromIndexes' settings and the
// plan cache mode given, its parameters of the types given and executed
// with args, a list of SQL literals, and returns its plan.
func explainAs(tb testing.TB, pool *pgxpool.Pool, mode, types, sql, args string) planNode {
	tb.Helper()
	return explainWith(tb, pool, true, mode, types, sql, args)
}

// explainWith is explainAs, under planFromIndexes' settings only when
// fromIndexes: a statement the store runs without them is explained
// without them.
func explainWith(tb testing.TB, pool *pgxpool.Pool, fromIndexes bool, mode, types, sql, args string) planNode {
	tb.Helper()
	return explainAfter(tb, pool, fromIndexes, "", mode, types, sql, args)
}

// explainAfter is explainWith, in a transaction that runs before first,
// unless it is empty.
func explainAfter(tb testing.TB, pool *pgxpool.Pool, fromIndexes bool, before, mode, types, sql, args string) planNode {
	tb.Helper()
	ctx := context.Background()
	tx, err := pool.Begin(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	defer tx.Rollback(ctx)
	b := &pgx.Batch{}
	if fromIndexes {
		store.PlanFromIndexes(b)
	}
	if before != "" {
		b.Queue(before)
	}
	b.Queue(`SELECT set_config('plan_cache_mode', $1, true)`, mode)
	b.Queue(`PREPARE explained(` + types + `) AS ` + sql)
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		tb.Fatal(err)
	}
	var out []byte
	if err := tx.QueryRow(ctx, `EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE explained(`+args+`)`).Scan(&out); err != nil {
		tb.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `DEALLOCATE explained`); err != nil {
		tb.Fatal(err)
	}
	var plans []struct {
		Plan planNode `json:"Plan"`
	}
	if err := json.Unmarshal(out, &plans); err != nil || len(plans) != 1 {
		tb.Fatalf("plan %s: %v", out, err)
	}
	return plans[0].Plan
}

// scans lists the nodes of plan that read a relation.
func scans(plan planNode) []planNode {
	var out []planNode
	if plan.Relation != "" {
		out = append(out, plan)
	}
	for _, p := range plan.Plans {
		out = append(out, scans(p)...)
	}
	return out
}

// BenchmarkTurnAtLength measures a turn's own statements (StartTurn and
// FinishTurn, with one tool call) in a fresh conversation and in one of
// 10,000 messages whose tables were never analysed.
func BenchmarkTurnAtLength(b *testing.B) {
	for _, n := range []int{2, 10_000} {
		b.Run(fmt.Sprintf("messages=%d", n), func(b *testing.B) {
			pool, user, conv := longConversation(b, n)
			s := store.NewTurns(pool)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				turn, err := s.StartTurn(ctx, tasks.TurnStart{UserID: user, ConversationID: conv, Message: "add milk", HistoryLimit: 50, ClaimFor: time.Minute})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.FinishTurn(ctx, tasks.TurnEnd{UserID: user, ConversationID: conv, TurnID: turn.ID(), ClaimToken: turn.ClaimToken,
					Reply: "Added.", ToolCalls: []tasks.ToolCall{{CallID: "c", Tool: "list_tasks", Arguments: json.RawMessage(`{}`), Result: json.RawMessage(`{"tasks":[]}`)}}}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkTurnChecks measures StartTurn's batch, a new conversation's
// (which commits without waiting for the disk), with and without the turn
// rate's bucket (migration 000015): what the check adds to the batch that
// starts a turn, which stays one round trip.
func BenchmarkTurnChecks(b *testing.B) {
	for _, c := range []struct {
		name string
		rate tasks.Rate
	}{
		{"none", tasks.Rate{}},
		{"rate", tasks.Rate{PerMinute: 1e9, Burst: 1 << 30}},
	} {
		b.Run(c.name, func(b *testing.B) {
			s := store.NewTurns(storetest.Pool(b))
			in := tasks.TurnStart{UserID: storetest.UserID(b), Message: "add milk", HistoryLimit: 50, ClaimFor: time.Minute, TurnRate: c.rate}
			for b.Loop() {
				if _, err := s.StartTurn(context.Background(), in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
