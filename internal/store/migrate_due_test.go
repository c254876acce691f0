package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/taskchat/taskchat/internal/store"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/tasks"
)

// Migration 000019 gives the tasks there are no due date and no priority,
// every new column NULL, and its checks, validated, hold: the database
// refuses a due day without its zone or its due_by, a time without a day,
// and a priority other than 1 to 3. It migrates down, leaving the tasks
// as they were, and up again.
func TestMigrationAddsDueDatesToNoTask(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u := storetest.EmptyDatabase(t)
	mustMigrateTo(t, u, 18)
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	alice, bob := storetest.UserID(t), storetest.UserID(t)
	for i, user := range []string{alice, bob, alice} {
		if _, err := conn.Exec(ctx, `
			WITH n AS (
				INSERT INTO task_counters (user_id, last_number) VALUES ($1, 1)
				ON CONFLICT (user_id) DO UPDATE SET last_number = task_counters.last_number + 1
				RETURNING last_number)
			INSERT INTO tasks (user_id, number, title, completed) SELECT $1, last_number, 'old', $2 FROM n`, user, i == 2); err != nil {
			t.Fatal(err)
		}
	}

	if err := store.Migrate(ctx, u); err != nil {
		t.Fatalf("up from 18: %v", err)
	}
	var rows, dated int
	if err := conn.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE due_on IS NOT NULL OR due_at IS NOT NULL
		OR due_zone IS NOT NULL OR due_by IS NOT NULL OR priority IS NOT NULL) FROM tasks`).Scan(&rows, &dated); err != nil || rows != 3 || dated != 0 {
		t.Fatalf("after up: %d tasks, %d with a due date or a priority, %v; want 3 and none", rows, dated, err)
	}
	if rows, err := conn.Query(ctx, `SELECT conname FROM pg_constraint
		WHERE conrelid = 'tasks'::regclass AND conname IN ('tasks_due_whole', 'tasks_priority_check') AND convalidated`); err != nil {
		t.Fatal(err)
	} else if names, err := pgx.CollectRows(rows, pgx.RowTo[string]); err != nil || len(names) != 2 {
		t.Fatalf("validated checks = %v, %v; want tasks_due_whole and tasks_priority_check", names, err)
	}
	if n := len(mustStrings(t, u, `SELECT user_id FROM user_settings`)); n != 0 {
		t.Fatalf("%d settings after up, want none", n)
	}

	pool := mustPool(t, u)
	s := store.NewTasks(pool)
	list := mustList(t, s, alice)
	if len(list) != 2 || list[0].Due != nil || list[0].Priority != "" || list[1].Due != nil || !list[1].Completed {
		t.Fatalf("alice's old tasks = %v", list)
	}
	if set, err := s.Settings(ctx, alice); err != nil || set.TimeZone != "UTC" || !set.UpdatedAt.IsZero() {
		t.Fatalf("alice's settings = %+v, %v; want the defaults", set, err)
	}
	if page, err := s.ListTasksPage(ctx, alice, tasks.Filter{Status: tasks.StatusAll, ByDue: true}, 10, ""); err != nil || len(page.Items) != 0 {
		t.Fatalf("alice's dated tasks = %+v, %v; want none", page, err)
	}

	// The checks, as the database holds them: a change the store would
	// never make is refused all the same.
	for _, c := range []struct{ name, sql string }{
		{"a day without its zone", `UPDATE tasks SET due_on = '2026-12-04', due_by = '2026-12-05' WHERE user_id = $1 AND number = 1`},
		{"a day without its due_by", `UPDATE tasks SET due_on = '2026-12-04', due_zone = 'UTC' WHERE user_id = $1 AND number = 1`},
		{"a zone without a day", `UPDATE tasks SET due_zone = 'UTC', due_by = '2026-12-05' WHERE user_id = $1 AND number = 1`},
		{"a due_by alone", `UPDATE tasks SET due_by = '2026-12-05' WHERE user_id = $1 AND number = 1`},
		{"a day without its text", `UPDATE tasks SET due_on = '2026-12-04', due_zone = 'UTC', due_by = '2026-12-04 23:59:59.999999Z' WHERE user_id = $1 AND number = 1`},
		{"a time without a day", `UPDATE tasks SET due_at = '2026-12-04 17:00Z' WHERE user_id = $1 AND number = 1`},
		{"a time and a zone without day", `UPDATE tasks SET due_at = '2026-12-04 17:00Z', due_zone = 'UTC', due_by = '2026-12-04 17:00Z' WHERE user_id = $1 AND number = 1`},
		{"priority 0", `UPDATE tasks SET priority = 0 WHERE user_id = $1 AND number = 1`},
		{"priority 4", `UPDATE tasks SET priority = 4 WHERE user_id = $1 AND number = 1`},
		{"a new task's day without zone", `INSERT INTO tasks (user_id, number, title, due_on, due_by) VALUES ($1, 99, 'new', '2026-12-04', '2026-12-05')`},
	} {
		_, err := pool.Exec(ctx, c.sql, alice)
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "23514" {
			t.Errorf("%s: %v, want a check violation", c.name, err)
		}
	}
	for _, c := range []struct{ name, sql string }{
		{"a day", `UPDATE tasks SET due_on = '2026-12-04', due_zone = 'UTC', due_by = '2026-12-04 23:59:59.999999Z', due_text = '2026-12-04' WHERE user_id = $1 AND number = 1`},
		{"a time", `UPDATE tasks SET due_at = '2026-12-04 17:00Z', due_by = '2026-12-04 17:00Z', due_text = '2026-12-04T17:00:00Z' WHERE user_id = $1 AND number = 1`},
		{"a priority", `UPDATE tasks SET priority = 3 WHERE user_id = $1 AND number = 1`},
		{"none of them", `UPDATE tasks SET due_on = NULL, due_at = NULL, due_zone = NULL, due_by = NULL, due_text = NULL, priority = NULL WHERE user_id = $1 AND number = 1`},
		{"them all back", `UPDATE tasks SET due_on = '2026-12-04', due_at = '2026-12-04 17:00Z', due_zone = 'Europe/Paris', due_by = '2026-12-04 17:00Z', due_text = '2026-12-04T18:00:00+01:00', priority = 1 WHERE user_id = $1 AND number = 1`},
	} {
		if _, err := pool.Exec(ctx, c.sql, alice); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	if _, err := s.SaveSettings(ctx, alice, tasks.Settings{TimeZone: "Europe/Paris"}); err != nil {
		t.Fatal(err)
	}
	pool.Close()

	// Down to 18: the columns, the functions, the indexes and the settings
	// go; the tasks stay.
	mustMigrateTo(t, u, 18)
	if cols := mustStrings(t, u, `SELECT column_name::text FROM information_schema.columns
		WHERE table_name = 'tasks' AND column_name IN ('due_on', 'due_at', 'due_zone', 'due_by', 'due_text', 'priority')`); len(cols) != 0 {
		t.Fatalf("columns after down = %v", cols)
	}
	if left := mustStrings(t, u, `SELECT proname::text FROM pg_proc WHERE proname IN ('task_change_result')
		UNION ALL SELECT indexname::text FROM pg_indexes WHERE indexname IN ('tasks_user_id_due_by_number_idx', 'tasks_user_id_open_due_by_number_idx', 'tasks_user_id_priority_number_idx')
		UNION ALL SELECT tablename::text FROM pg_tables WHERE tablename = 'user_settings'`); len(left) != 0 {
		t.Fatalf("left after down: %v", left)
	}
	if n := len(mustStrings(t, u, `SELECT title FROM tasks`)); n != 3 {
		t.Fatalf("%d tasks after down, want 3", n)
	}

	if err := store.Migrate(ctx, u); err != nil {
		t.Fatalf("up again: %v", err)
	}
	pool = mustPool(t, u)
	s = store.NewTasks(pool)
	due := mustDue(t, "2026-12-04T17:00", "Europe/Paris")
	if task, err := s.CreateTask(ctx, bob, tasks.NewTask{Title: "new", Due: &due, Priority: tasks.PriorityHigh}, mcpRecord("add_task", `{}`)); err != nil ||
		task.ID != 2 || task.Due == nil || task.Due.String() != "2026-12-04T17:00:00+01:00" {
		t.Fatalf("a task after up again = %s, %v", showTask(task), err)
	}
	if list := mustList(t, s, alice); len(list) != 2 || list[0].Due != nil || list[0].Priority != "" {
		t.Fatalf("alice's tasks after down and up = %v: the due date set before down came back", list)
	}
}
