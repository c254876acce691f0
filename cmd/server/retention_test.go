package main

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/taskchat/taskchat/internal/logtest"
	"github.com/taskchat/taskchat/internal/store"
	"github.com/taskchat/taskchat/internal/store/storetest"
)

// mustRetentionDB is a migrated database of the test's own, with n
// conversations untouched for 31 days: retention deletes across users, and
// the package's shared database holds other tests' rows.
func mustRetentionDB(tb testing.TB, n int) (string, *pgxpool.Pool) {
	tb.Helper()
	ctx := context.Background()
	u := storetest.EmptyDatabase(tb)
	if err := store.Migrate(ctx, u); err != nil {
		tb.Fatal(err)
	}
	pool, err := store.Open(ctx, u, store.Settings{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(pool.Close)
	if _, err := pool.Exec(ctx, `INSERT INTO conversations (user_id, title, updated_at)
		SELECT 'user-old', 'old', now() - interval '31 days' FROM generate_series(1, $1)`, n); err != nil {
		tb.Fatal(err)
	}
	return u, pool
}

func conversationsIn(tb testing.TB, pool *pgxpool.Pool) int {
	tb.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM conversations`).Scan(&n); err != nil {
		tb.Fatal(err)
	}
	return n
}

// The passes run in the background, log what they deleted, and stop when
// the server shuts down.
func TestRetentionRunsUntilShutdown(t *testing.T) {
	t.Parallel()
	_, pool := mustRetentionDB(t, 5)
	cfg := config{
		Retention:      store.RetentionConfig{Days: 30, KeyTTL: time.Hour, Batch: 2, Pause: time.Millisecond, RunsFor: time.Minute},
		RetentionEvery: 10 * time.Millisecond,
	}
	logs := &logtest.Buffer{}
	ctx, shutdown := context.WithCancel(context.Background())
	defer shutdown()
	stop := startRetention(ctx, pool, cfg, slog.New(slog.NewJSONHandler(logs, nil)))

	for deadline := time.Now().Add(20 * time.Second); conversationsIn(t, pool) > 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("old conversations still there after 20 s; log:\n%s", logs.String())
		}
	}
	shutdown()
	stopped := make(chan struct{})
	go func() { stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(20 * time.Second):
		t.Fatal("the passes did not stop when the server shut down")
	}

	l := logs.String()
	if !strings.Contains(l, `"msg":"retention on","days":30`) || !strings.Contains(l, `"msg":"retention pass","runs":0,"stream_leases":0,"conversations":`) {
		t.Fatalf("the log lacks the start or a pass:\n%s", l)
	}
	if strings.Contains(l, "user-old") || strings.Contains(l, `"title"`) {
		t.Fatalf("the log holds more than counts:\n%s", l)
	}
}

// With RETENTION_DAYS unset, conversations are kept (only the turns' runs
// are swept), nothing says retention is on, and stop still stops.
func TestRetentionOffByDefault(t *testing.T) {
	t.Parallel()
	_, pool := mustRetentionDB(t, 1)
	logs := &logtest.Buffer{}
	cfg := config{Retention: store.RetentionConfig{Batch: 2, RunsFor: time.Minute}, RetentionEvery: time.Millisecond}
	stop := startRetention(context.Background(), pool, cfg, slog.New(slog.NewJSONHandler(logs, nil)))
	stop()
	if n := conversationsIn(t, pool); n != 1 || logs.String() != "" {
		t.Fatalf("%d conversations left, log %q; want 1 and nothing", n, logs.String())
	}
}

// The server started with RETENTION_DAYS says so, and still stops cleanly.
func TestRunWithRetention(t *testing.T) {
	t.Parallel()
	u, _ := mustRetentionDB(t, 1)
	base, stop, logs := mustRun(t, map[string]string{"DATABASE_URL": u, "RETENTION_DAYS": "30"})
	waitHealthy(t, base)
	if err := stop(); err != nil {
		t.Fatalf("run after SIGTERM-equivalent: %v", err)
	}
	if !strings.Contains(logs.String(), `"msg":"retention on","days":30,"every":"5m0s"`) {
		t.Fatalf("the log does not say retention is on:\n%s", logs.String())
	}
}

func TestConfigOfRetention(t *testing.T) {
	t.Parallel()
	vars := map[string]string{"DATABASE_URL": "postgres://x@localhost/db", "JWT_SECRET": secret}
	cfg, err := loadConfig(env(vars))
	if err != nil || cfg.Retention.Days != 0 {
		t.Fatalf("by default: %d days, %v; want 0 (keep everything)", cfg.Retention.Days, err)
	}
	if cfg.Retention.KeyTTL != cfg.IdempotencyTTL || cfg.Retention.Batch <= 0 || cfg.RetentionEvery <= 0 {
		t.Fatalf("retention's passes: %+v every %s", cfg.Retention, cfg.RetentionEvery)
	}

	vars["RETENTION_DAYS"] = " 30 "
	if cfg, err := loadConfig(env(vars)); err != nil || cfg.Retention.Days != 30 {
		t.Fatalf("RETENTION_DAYS=30: %d days, %v", cfg.Retention.Days, err)
	}
	for _, bad := range []string{"-1", "thirty", "1.5", "30d", "36501"} {
		vars["RETENTION_DAYS"] = bad
		_, err := loadConfig(env(vars))
		if err == nil || !strings.Contains(err.Error(), `RETENTION_DAYS must be a whole number of days from 1 to 36500, or 0 to keep everything, got "`+bad+`"`) {
			t.Errorf("RETENTION_DAYS=%s: %v", bad, err)
		}
	}
}
