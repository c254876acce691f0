package store_test

import (
	"context"
	"os"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/taskchat/taskchat/internal/store"
	"github.com/taskchat/taskchat/internal/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(storetest.Run(m)) }

func TestMigrationsUpDownUp(t *testing.T) {
	ctx := context.Background()
	u := storetest.EmptyDatabase(t)

	if err := store.Migrate(ctx, u); err != nil {
		t.Fatalf("up: %v", err)
	}
	want := []string{"conversations", "idempotency_keys", "messages", "schema_migrations", "tasks", "tool_calls"}
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
	if got := mustTables(t, u); len(got) != 6 {
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
