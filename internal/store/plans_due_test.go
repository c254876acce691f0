package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/taskchat/taskchat/internal/store"
)

// TestDueAndPriorityPagesReadOnlyThemselves reads the plans of the task
// list's statements of one priority (ListTasksOfPriority) and in due-date
// order (ListTasksByDue), custom and generic, as the store runs them, for
// a user with 20,000 tasks beside another user's 5,000: three in four of
// them due, three or four at each of 5,000 hours from about seven months
// ago to as far ahead, in an order of their own; one in ten completed;
// about one in a hundred of high priority, a tenth of those completed too.
// The first page and a page near the end, of all the dated tasks, of a
// range of them, of the overdue ones and of the high ones, may each read
// only about as many tasks as a page holds. (Without the index on
// (user_id, due_by, number), a dated page reads every task of the user
// and sorts them; without the one on (user_id, priority, number), a page
// of the high tasks reads the hundred times as many others in between.)
// A page starts after a task due by the same hour as the next, so that
// its bound falls on the number.
func TestDueAndPriorityPagesReadOnlyThemselves(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := mustOwnDB(t)
	const n, limit, highLimit = 20_000, 200, 40
	if _, err := pool.Exec(ctx, `
		INSERT INTO tasks (user_id, number, title, completed, due_on, due_zone, due_by, due_text, priority)
		SELECT user_id, g, 'task ' || g, g % 10 <> 0 AND g * 7919 % 5000 < 2500, -- as a list is kept: most of the past done
		       CASE WHEN g % 4 <> 0 THEN (date '2026-01-01' + (g * 7919 % 5000) / 24) END,
		       CASE WHEN g % 4 <> 0 THEN 'UTC' END,
		       CASE WHEN g % 4 <> 0 THEN now() - interval '2500 hours' + (g * 7919 % 5000) * interval '1 hour' END,
		       CASE WHEN g % 4 <> 0 THEN (date '2026-01-01' + (g * 7919 % 5000) / 24)::text END,
		       CASE WHEN g % 97 = 7 THEN 1 WHEN g % 3 = 1 THEN 2 WHEN g % 3 = 2 THEN 3 END
		FROM (SELECT 'many' AS user_id, g FROM generate_series(1, $1) g
		      UNION ALL SELECT 'other', g FROM generate_series(1, $1 / 4) g) t`, n); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `ANALYZE tasks`); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	lit := func(at time.Time) string { return "'" + at.UTC().Format(time.RFC3339Nano) + "'" }
	// deep is the task a page starts after, about two pages before the end
	// of the dated listing whose tasks match cond, and due by the same
	// hour as the next one.
	deep := func(cond string) string {
		var by time.Time
		var number int64
		if err := pool.QueryRow(ctx, `
			SELECT due_by, number FROM (
				SELECT due_by, number, row_number() OVER w AS pos, lead(due_by) OVER w AS next
				FROM tasks WHERE user_id = 'many' AND due_by IS NOT NULL AND `+cond+`
				WINDOW w AS (ORDER BY due_by DESC, number DESC)) t
			WHERE pos > $1 AND next = due_by ORDER BY pos LIMIT 1`, 2*limit).Scan(&by, &number); err != nil {
			t.Fatalf("a deep page of %s: %v", cond, err)
		}
		return fmt.Sprintf("%d, %d, %%s, %s", number, limit+1, lit(by))
	}
	first := fmt.Sprintf("0, %d, %%s, '-infinity'", limit+1)
	// The arguments of ListTasksByDue: the user; after the number, the
	// page's size, from, to, after the due_by; the status, the priority,
	// the words.
	byDue := func(page, from, to, completed string) string {
		return "'many', " + fmt.Sprintf(page, from+", "+to) + ", " + completed + ", NULL, NULL"
	}
	// Of the open tasks only (ListTasksByDueOpen): no status argument.
	byDueOpen := func(page, from, to string) string {
		return "'many', " + fmt.Sprintf(page, from+", "+to) + ", NULL, NULL"
	}
	from, to := now.Add(-1000*time.Hour), now.Add(1000*time.Hour)
	const types = "text, bigint, int, timestamptz, timestamptz, timestamptz, boolean, smallint, text[]"
	const openTypes = "text, bigint, int, timestamptz, timestamptz, timestamptz, smallint, text[]"
	checkPagesRead(t, pool, false, "tasks", limit, []pageStatement{
		{"by due, first page", types, store.ListTasksByDue, byDue(first, "'-infinity'", "'infinity'", "NULL")},
		{"by due, a page near the end", types, store.ListTasksByDue, byDue(deep("true"), "'-infinity'", "'infinity'", "NULL")},
		{"pending by due, first page", openTypes, store.ListTasksByDueOpen, byDueOpen(first, "'-infinity'", "'infinity'")},
		{"pending by due, a page near the end", openTypes, store.ListTasksByDueOpen, byDueOpen(deep("NOT completed"), "'-infinity'", "'infinity'")},
		{"a range, first page", types, store.ListTasksByDue, byDue(first, lit(from), lit(to), "NULL")},
		{"a range, a page near its end", types, store.ListTasksByDue,
			byDue(deep(fmt.Sprintf("due_by >= %s AND due_by < %s", lit(from), lit(to))), lit(from), lit(to), "NULL")},
		{"overdue, first page", openTypes, store.ListTasksByDueOpen, byDueOpen(first, "'-infinity'", lit(now))},
		{"overdue, a page near the end", openTypes, store.ListTasksByDueOpen,
			byDueOpen(deep(fmt.Sprintf("NOT completed AND due_by < %s", lit(now))), "'-infinity'", lit(now))},
	}, func(t *testing.T, plan planNode) {
		if plan.ActualRows != limit+1 {
			t.Errorf("the page has %v tasks, want %d", plan.ActualRows, limit+1)
		}
	})

	// The high tasks, 207 of the user's 20,000, a page of 40 at a time.
	var deepHigh int64
	if err := pool.QueryRow(ctx, `SELECT number FROM tasks WHERE user_id = 'many' AND priority = 1
		ORDER BY number DESC OFFSET $1 LIMIT 1`, 2*highLimit).Scan(&deepHigh); err != nil {
		t.Fatal(err)
	}
	const priorityTypes = "text, bigint, int, smallint, boolean, text[]"
	checkPagesRead(t, pool, false, "tasks", highLimit, []pageStatement{
		{"high, first page", priorityTypes, store.ListTasksOfPriority, fmt.Sprintf("'many', 0, %d, 1, NULL, NULL", highLimit+1)},
		{"high, a page near the end", priorityTypes, store.ListTasksOfPriority, fmt.Sprintf("'many', %d, %d, 1, NULL, NULL", deepHigh, highLimit+1)},
		{"pending high, first page", priorityTypes, store.ListTasksOfPriority, fmt.Sprintf("'many', 0, %d, 1, false, NULL", highLimit+1)},
	}, func(t *testing.T, plan planNode) {
		if plan.ActualRows != highLimit+1 {
			t.Errorf("the page has %v tasks, want %d", plan.ActualRows, highLimit+1)
		}
	})

	// With a query's words, as the store runs them (under planFromIndexes):
	// a word every task holds reads a page.
	checkPagesRead(t, pool, true, "tasks", limit, []pageStatement{
		{"by due, a word every task holds", types, store.ListTasksByDue,
			"'many', " + fmt.Sprintf(first, "'-infinity', 'infinity'") + ", NULL, NULL, array['%TASK%']"},
		{"overdue, a word every task holds", openTypes, store.ListTasksByDueOpen,
			"'many', " + fmt.Sprintf(first, "'-infinity', "+lit(now)) + ", NULL, array['%task%']"},
	}, func(t *testing.T, plan planNode) {
		if plan.ActualRows != limit+1 {
			t.Errorf("the page has %v tasks, want %d", plan.ActualRows, limit+1)
		}
	})
	checkPagesRead(t, pool, true, "tasks", highLimit, []pageStatement{
		{"high, a word every task holds", priorityTypes, store.ListTasksOfPriority, fmt.Sprintf("'many', 0, %d, 1, NULL, array['%%task%%']", highLimit+1)},
	}, func(t *testing.T, plan planNode) {
		if plan.ActualRows != highLimit+1 {
			t.Errorf("the page has %v tasks, want %d", plan.ActualRows, highLimit+1)
		}
	})
}
