package store_test

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/taskchat/taskchat/internal/store"
	"github.com/taskchat/taskchat/internal/store/storetest"
)

// Every named statement parses, and its tables, columns, functions and
// parameter types resolve, against the migrated schema: PostgreSQL
// prepares each one as it would before its first execution.
func TestEveryStatementPrepares(t *testing.T) {
	t.Parallel()
	conn, err := storetest.Pool(t).Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	for name, text := range store.Statements() {
		if _, err := conn.Conn().PgConn().Prepare(context.Background(), "", text, nil); err != nil {
			t.Errorf("%s does not prepare: %v\n%s", name, err, text)
		}
	}
}

// notScopedToAUser are the statements that name no user, each with why.
var notScopedToAUser = map[string]string{
	"CheckTokenBudget":  "it calls check_token_budget (migration 000009) with the user",
	"CheckRunningTurns": "it calls check_running_turns (migration 000013) with the user",
	"TakeRateToken":     "it calls take_rate_token (migration 000015) with the user",
	"OpenStream":        "it calls open_stream (migration 000016) with the user",
	"RenewStreams":      "a replica renews the leases of the streams it holds open, whoever's they are",
	"CommitLazily":      "a setting of its transaction",
	"PlanFromIndexes":   "a setting of its transaction",
	"StopsRequested":    "a replica asks it of the runs it runs itself, whoever's they are",

	"DeleteOldConversations": "retention picks rows by age, across users",
	"DeleteOldDetachedCalls": "retention picks rows by age, across users",
	"DeleteExpiredKeys":      "retention picks rows by age, across users",
	"DeleteOldRuns":          "retention picks rows by age, across users",
	"DeleteOldStreamLeases":  "retention picks rows by age, across users",
	"DeleteOldUsage":         "retention picks rows by age, across users",
}

// Every statement names its user's rows (user_id), so that another user's
// rows behave exactly like missing ones; the few that cannot say why.
func TestEveryStatementIsScopedToAUser(t *testing.T) {
	t.Parallel()
	all := store.Statements()
	for name, text := range all {
		_, exempt := notScopedToAUser[name]
		if scoped := strings.Contains(text, "user_id"); !scoped && !exempt {
			t.Errorf("%s names no user_id:\n%s", name, text)
		}
	}
	for name := range notScopedToAUser {
		if _, ok := all[name]; !ok {
			t.Errorf("%s is exempt from naming a user, but no statement is named so", name)
		}
	}
}

// A statement missing, misnamed, named twice or empty stops the statements
// from loading, so the package does not load with it.
func TestStatementsLoadOnlyWhole(t *testing.T) {
	t.Parallel()
	type two struct{ First, Second string }
	files := func(sql string) fstest.MapFS {
		return fstest.MapFS{"sql/a.sql": {Data: []byte(sql)}}
	}
	var ok two
	if err := store.LoadStatements(files(`
-- What a.sql holds.

-- name: First
-- Its comment is not sent.
SELECT 1 -- but this one is
-- name: Second
SELECT 2`), &ok); err != nil || ok != (two{"SELECT 1 -- but this one is", "SELECT 2"}) {
		t.Fatalf("loaded %+v, %v; want both statements, without their comment lines", ok, err)
	}
	for _, c := range []struct{ name, sql, want string }{
		{"a statement missing", "-- name: First\nSELECT 1", "no statement is named Second"},
		{"a statement with no field", "-- name: First\nSELECT 1\n-- name: Second\nSELECT 2\n-- name: Third\nSELECT 3", "Third"},
		{"a name given twice", "-- name: First\nSELECT 1\n-- name: Second\nSELECT 2\n-- name: First\nSELECT 3", "named in a.sql already"},
		{"a statement with no text", "-- name: First\n-- name: Second\nSELECT 2", "First is empty"},
		{"a name line misspelt", "-- name: First\nSELECT 1\n-- name: second\nSELECT 2", "not a name line"},
		{"SQL before any name", "SELECT 0\n-- name: First\nSELECT 1\n-- name: Second\nSELECT 2", "before the file's first"},
	} {
		var got two
		err := store.LoadStatements(files(c.sql), &got)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want an error saying %q", c.name, err, c.want)
		}
	}
}
