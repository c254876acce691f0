//go:build unix

package pglocal_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/taskchat/taskchat/internal/store"
	"github.com/taskchat/taskchat/internal/store/pglocal"
)

func TestClusterIsMadeStoppedAndReused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bin := mustFind(t)
	opts := pglocal.Options{Dir: mustClusterDir(t), Binaries: bin, Throwaway: true}

	c := mustStart(t, opts)
	if !c.Created || c.WasRunning {
		t.Errorf("a first start: Created %v, WasRunning %v; want a cluster made and started", c.Created, c.WasRunning)
	}
	if os.Geteuid() == 0 {
		if uid := ownerOf(t, c.Dir); uid == 0 {
			t.Errorf("as root, %s belongs to root; PostgreSQL would refuse it", c.Dir)
		}
	}
	conn := mustConnect(t, c.URL("postgres"))
	var listen, sockets string
	if err := conn.QueryRow(ctx, "SELECT current_setting('listen_addresses'), current_setting('unix_socket_directories')").Scan(&listen, &sockets); err != nil {
		t.Fatal(err)
	}
	if listen != "" || sockets != c.Dir {
		t.Errorf("listen_addresses %q, unix_socket_directories %q; want none and %s", listen, sockets, c.Dir)
	}
	rows, _ := conn.Query(ctx, "SELECT type FROM pg_hba_file_rules")
	if rules, err := pgx.CollectRows(rows, pgx.RowTo[string]); err != nil || strings.Join(rules, ",") != "local" {
		t.Errorf("pg_hba.conf's rules are of types %q (%v); want local alone", rules, err)
	}
	var folds bool
	if err := conn.QueryRow(ctx, "SELECT 'Visit the école' ILIKE '%ÉCOLE%'").Scan(&folds); err != nil || !folds {
		t.Errorf("ILIKE does not fold É to é (%v): the tasks' search would miss it", err)
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE taskchat"); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	if err := store.Migrate(ctx, c.URL("taskchat")); err != nil {
		t.Fatalf("migrate through the socket: %v", err)
	}
	version := migratedVersion(t, c.URL("taskchat"))

	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if conn, err := pgx.Connect(ctx, c.URL("postgres")); err == nil {
		conn.Close(ctx)
		t.Fatal("the cluster still answers after Stop")
	}

	t.Run("a second start reuses the data", func(t *testing.T) {
		again := mustStart(t, opts)
		if again.Created || again.WasRunning {
			t.Errorf("a second start: Created %v, WasRunning %v; want the cluster kept and started", again.Created, again.WasRunning)
		}
		if got := migratedVersion(t, again.URL("taskchat")); got != version {
			t.Errorf("migrated to %d after a restart, %d before", got, version)
		}

		// A start while the cluster runs joins it, and leaves it running.
		joined := mustStart(t, opts)
		if !joined.WasRunning {
			t.Error("a start while the cluster runs did not notice it")
		}
		if err := joined.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		mustConnect(t, again.URL("taskchat")).Close(ctx)
	})
}

func TestFind(t *testing.T) {
	t.Parallel()
	roots := t.TempDir()
	pattern := filepath.Join(roots, "*", "bin")
	mustFakeBinaries(t, filepath.Join(roots, "9.6", "bin"), "initdb", "pg_ctl")
	mustFakeBinaries(t, filepath.Join(roots, "15", "bin"), "initdb", "pg_ctl")
	mustFakeBinaries(t, filepath.Join(roots, "16", "bin"), "initdb") // no pg_ctl: not a whole server

	t.Run("the newest whole version under the roots", func(t *testing.T) {
		b, err := pglocal.Find("", []string{pattern})
		if err != nil || b.Dir() != filepath.Join(roots, "15", "bin") {
			t.Errorf("Find = %+v, %v; want version 15's", b, err)
		}
	})
	t.Run("PATH first", func(t *testing.T) {
		onPath := filepath.Join(t.TempDir(), "bin")
		mustFakeBinaries(t, onPath, "initdb", "pg_ctl")
		b, err := pglocal.Find(t.TempDir()+string(filepath.ListSeparator)+onPath, []string{pattern})
		if err != nil || b.Dir() != onPath {
			t.Errorf("Find = %+v, %v; want the ones on PATH", b, err)
		}
	})
	t.Run("none says how to get them", func(t *testing.T) {
		empty := filepath.Join(t.TempDir(), "*", "bin")
		_, err := pglocal.Find(t.TempDir(), []string{empty})
		if !errors.Is(err, pglocal.ErrNoBinaries) {
			t.Fatalf("Find without binaries = %v, want ErrNoBinaries", err)
		}
		for _, want := range []string{"initdb and pg_ctl", empty, "sudo apt-get install postgresql"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("the error does not say %q:\n%v", want, err)
			}
		}
	})
}

// As root the cluster runs as postgres, which must be able to reach its
// directory; where it cannot, Start says which directory stops it.
func TestRootsClusterOutOfPostgresReach(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("only root's clusters run as another account")
	}
	closed := t.TempDir() // mode 0700, root's
	if err := os.Chmod(closed, 0o700); err != nil {
		t.Fatal(err)
	}
	_, err := pglocal.Start(context.Background(), pglocal.Options{Dir: filepath.Join(closed, "pg"), Binaries: mustFind(t), Throwaway: true})
	if err == nil || !strings.Contains(err.Error(), "cannot enter "+closed) {
		t.Errorf("Start below a directory postgres cannot enter = %v", err)
	}
}

func mustFind(tb testing.TB) pglocal.Binaries {
	tb.Helper()
	b, err := pglocal.Find(os.Getenv("PATH"), pglocal.SearchRoots)
	if err != nil {
		tb.Fatalf("these tests make clusters of their own: %v", err)
	}
	return b
}

// mustClusterDir is a directory for a cluster that the account it runs as
// can reach: as root, postgres must pass through the test's temporary
// directory, which is root's alone.
func mustClusterDir(tb testing.TB) string {
	tb.Helper()
	dir := tb.TempDir()
	if os.Geteuid() == 0 {
		if err := os.Chmod(filepath.Dir(dir), 0o711); err != nil {
			tb.Fatal(err)
		}
		if err := os.Chmod(dir, 0o711); err != nil {
			tb.Fatal(err)
		}
	}
	return filepath.Join(dir, "pg")
}

func mustStart(tb testing.TB, o pglocal.Options) *pglocal.Cluster {
	tb.Helper()
	c, err := pglocal.Start(context.Background(), o)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := c.Stop(context.Background()); err != nil {
			tb.Error(err)
		}
	})
	return c
}

func mustConnect(tb testing.TB, url string) *pgx.Conn {
	tb.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		tb.Fatalf("connect to %s: %v", url, err)
	}
	return conn
}

func migratedVersion(tb testing.TB, url string) int64 {
	tb.Helper()
	conn := mustConnect(tb, url)
	defer conn.Close(context.Background())
	var v int64
	if err := conn.QueryRow(context.Background(), "SELECT version FROM schema_migrations").Scan(&v); err != nil {
		tb.Fatal(err)
	}
	return v
}

func mustFakeBinaries(tb testing.TB, dir string, names ...string) {
	tb.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("#!/bin/sh\n"), 0o755); err != nil {
			tb.Fatal(err)
		}
	}
}

func ownerOf(tb testing.TB, path string) uint32 {
	tb.Helper()
	info, err := os.Stat(path)
	if err != nil {
		tb.Fatal(err)
	}
	return info.Sys().(*syscall.Stat_t).Uid
}
