//go:build unix

package pglocal_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

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

// A start that fails after pg_ctl launched the server, or that is given up
// (Ctrl-C during dev's first start), stops that server: otherwise it would
// run on, and the next start would find it running and leave it so.
func TestFailedStartStopsItsServer(t *testing.T) {
	t.Parallel()
	bin := mustFind(t)
	t.Run("pg_ctl fails once the server runs", func(t *testing.T) {
		t.Parallel()
		dir := mustClusterDir(t)
		failing := mustWrapPgCtl(t, bin, "exit 1")
		_, err := pglocal.Start(context.Background(), pglocal.Options{Dir: dir, Binaries: failing, Throwaway: true})
		if err == nil {
			t.Fatal("Start succeeded with a pg_ctl start that failed")
		}
		mustBeStopped(t, pglocal.Options{Dir: dir, Binaries: bin, Throwaway: true})
	})
	t.Run("the start is cancelled", func(t *testing.T) {
		t.Parallel()
		dir := mustClusterDir(t)
		hanging := mustWrapPgCtl(t, bin, "exec sleep 600") // as a start that waits on a slow recovery
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan error, 1)
		go func() {
			_, err := pglocal.Start(ctx, pglocal.Options{Dir: dir, Binaries: hanging, Throwaway: true})
			done <- err
		}()
		url := (&pglocal.Cluster{Dir: dir}).URL("postgres")
		waitFor(t, "the server pg_ctl started", func() bool {
			conn, err := pgx.Connect(context.Background(), url)
			if err == nil {
				conn.Close(context.Background())
			}
			return err == nil
		})
		cancel()
		if err := <-done; err == nil {
			t.Fatal("a cancelled Start succeeded")
		}
		mustBeStopped(t, pglocal.Options{Dir: dir, Binaries: bin, Throwaway: true})
	})
}

// Two starts at once of a cluster that does not run yet, as two dev
// servers started together: one makes and starts it, the other joins it.
func TestStartsAtOnceShareOneServer(t *testing.T) {
	t.Parallel()
	opts := pglocal.Options{Dir: mustClusterDir(t), Binaries: mustFind(t), Throwaway: true}
	clusters := make(chan *pglocal.Cluster, 2)
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			c, err := pglocal.Start(context.Background(), opts)
			if err != nil {
				errs <- err
				return
			}
			clusters <- c
		}()
	}
	var started, joined int
	for range 2 {
		select {
		case err := <-errs:
			t.Error(err)
		case c := <-clusters:
			if c.WasRunning {
				joined++
				continue
			}
			started++
			t.Cleanup(func() {
				if err := c.Stop(context.Background()); err != nil {
					t.Error(err)
				}
			})
		}
	}
	if started != 1 || joined != 1 {
		t.Errorf("%d starts started the server and %d joined it; want one each", started, joined)
	}
}

// PostgreSQL runs in a directory of mode 0750 too, and the group could then
// reach the socket, which asks for no password: Start closes it again.
func TestOpenDirectoryIsClosed(t *testing.T) {
	t.Parallel()
	opts := pglocal.Options{Dir: mustClusterDir(t), Binaries: mustFind(t), Throwaway: true}
	if err := mustStart(t, opts).Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(opts.Dir, 0o750); err != nil {
		t.Fatal(err)
	}
	mustStart(t, opts)
	info, err := os.Stat(opts.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if perm := info.Mode().Perm(); perm != 0o700 {
		t.Errorf("the cluster runs in a directory of mode %v, want 0700", perm)
	}
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

// mustWrapPgCtl is bin with a pg_ctl that, after a start that succeeded,
// runs then (shell), and otherwise is the real one.
func mustWrapPgCtl(tb testing.TB, bin pglocal.Binaries, then string) pglocal.Binaries {
	tb.Helper()
	dir := filepath.Dir(mustClusterDir(tb)) // one the cluster's account can reach
	script := fmt.Sprintf("#!/bin/sh\nif [ \"$1\" = start ]; then\n\t%[1]q \"$@\" || exit\n\t%[2]s\nfi\nexec %[1]q \"$@\"\n", bin.PgCtl, then)
	pgCtl := filepath.Join(dir, "pg_ctl")
	if err := os.WriteFile(pgCtl, []byte(script), 0o755); err != nil {
		tb.Fatal(err)
	}
	return pglocal.Binaries{Initdb: bin.Initdb, PgCtl: pgCtl}
}

// mustBeStopped checks that the cluster in o.Dir does not run: a start
// finds it stopped, rather than running already.
func mustBeStopped(tb testing.TB, o pglocal.Options) {
	tb.Helper()
	if c := mustStart(tb, o); c.WasRunning {
		tb.Errorf("the server in %s still runs after its start failed", o.Dir)
	}
}

func waitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
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
