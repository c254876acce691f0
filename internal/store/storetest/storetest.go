// Package storetest gives each test package a real, freshly migrated
// PostgreSQL database of its own, dropped when the package's tests end, so
// `go test ./...` runs packages in parallel against one server.
//
// The server comes from TEST_DATABASE_URL when it is set (any database on
// it; storetest creates its own next to it), otherwise from a
// testcontainers-go PostgreSQL when a Docker daemon answers, otherwise from
// PostgreSQL's server binaries installed on the machine: each test package
// then starts a private cluster of its own in a temporary directory
// (pglocal), and removes it when its tests end. With none of them, the
// tests fail and say how to provide one: they never skip silently.
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/testcontainers/testcontainers-go"
	tcpostgres "github.com/testcontainers/testcontainers-go/modules/postgres"

	"github.com/taskchat/taskchat/internal/store"
	"github.com/taskchat/taskchat/internal/store/pglocal"
	"github.com/taskchat/taskchat/internal/tasks"
)

var (
	serverURL string // the server's admin URL, set by Run
	dbURL     string // this package's migrated database, set by Run
	poolOnce  sync.Once
	pool      *pgxpool.Pool
)

// Run is the body of a package's TestMain: it creates and migrates the
// package's database, runs the tests, and drops the database.
//
//	func TestMain(m *testing.M) { os.Exit(storetest.Run(m)) }
func Run(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	u, stop, err := server(ctx)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "storetest:", err)
		return 1
	}
	defer stop()
	serverURL = u

	name := dbName()
	dbURL, err = createDatabase(context.Background(), name)
	if err == nil {
		err = store.Migrate(context.Background(), dbURL)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "storetest:", err)
		return 1
	}
	code := m.Run()
	if pool != nil {
		pool.Close()
	}
	if err := dropDatabase(context.Background(), name); err != nil {
		fmt.Fprintln(os.Stderr, "storetest:", err)
	}
	return code
}

// URL returns the URL of this package's migrated database.
func URL(tb testing.TB) string {
	tb.Helper()
	if dbURL == "" {
		tb.Fatal("storetest: no database; call storetest.Run from TestMain")
	}
	return dbURL
}

// Pool returns a pool on this package's database, shared by its tests.
func Pool(tb testing.TB) *pgxpool.Pool {
	tb.Helper()
	u := URL(tb)
	poolOnce.Do(func() {
		var err error
		pool, err = store.Open(context.Background(), u, store.Settings{})
		if err != nil {
			tb.Fatalf("storetest: open pool: %v", err)
		}
	})
	return pool
}

// EmptyDatabase creates a database with no tables for one test and drops it
// when the test ends. It returns its URL.
func EmptyDatabase(tb testing.TB) string {
	tb.Helper()
	if serverURL == "" {
		tb.Fatal("storetest: no server; call storetest.Run from TestMain")
	}
	name := dbName()
	u, err := createDatabase(context.Background(), name)
	if err != nil {
		tb.Fatalf("storetest: %v", err)
	}
	tb.Cleanup(func() {
		if err := dropDatabase(context.Background(), name); err != nil {
			tb.Errorf("storetest: %v", err)
		}
	})
	return u
}

// UserID returns a user id no other test uses, so tests sharing a database
// never see each other's rows.
func UserID(tb testing.TB) string {
	tb.Helper()
	return "user-" + randomHex(6)
}

// Tasks returns every task of userID that status picks from s, in number
// order, read a page at a time as clients read them.
func Tasks(tb testing.TB, s tasks.Store, userID string, status tasks.Status) []tasks.Task {
	tb.Helper()
	var all []tasks.Task
	for cursor := ""; ; {
		page, err := s.ListTasksPage(context.Background(), userID, tasks.Filter{Status: status}, tasks.MaxTaskPage, cursor)
		if err != nil {
			tb.Fatalf("list %s's tasks: %v", userID, err)
		}
		all = append(all, page.Items...)
		if cursor = page.Next; cursor == "" {
			return all
		}
	}
}

// Count runs sql, a query of one count, with args on this package's
// database, and fails tb if it cannot.
func Count(tb testing.TB, sql string, args ...any) int {
	tb.Helper()
	var n int
	if err := Pool(tb).QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		tb.Fatalf("storetest: %s: %v", sql, err)
	}
	return n
}

// Strings runs sql, a query of one text column, with args on this
// package's database, and returns its rows' values; it fails tb if it
// cannot.
func Strings(tb testing.TB, sql string, args ...any) []string {
	tb.Helper()
	rows, err := Pool(tb).Query(context.Background(), sql, args...)
	if err == nil {
		var out []string
		if out, err = pgx.CollectRows(rows, pgx.RowTo[string]); err == nil {
			return out
		}
	}
	tb.Fatalf("storetest: %s: %v", sql, err)
	return nil
}

// SameJSON reports whether a and b are the same JSON value. A jsonb
// column gives back what was written in its own spacing and key order, so
// tests compare what they stored with what they read by value. Text that
// is not JSON equals nothing, not even itself.
func SameJSON(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// server returns the admin URL of a PostgreSQL server and a function that
// releases it.
func server(ctx context.Context) (string, func(), error) {
	if u := os.Getenv("TEST_DATABASE_URL"); u != "" {
		return u, func() {}, nil
	}
	noDocker := dockerAnswers(ctx)
	if noDocker != nil {
		return privateServer(ctx, noDocker)
	}
	c, err := tcpostgres.Run(ctx, "postgres:16-alpine", tcpostgres.BasicWaitStrategies())
	if err != nil {
		return "", nil, fmt.Errorf("start PostgreSQL container: %w", err)
	}
	u, err := c.ConnectionString(ctx, "sslmode=disable")
	if err != nil {
		_ = testcontainers.TerminateContainer(c)
		return "", nil, err
	}
	return u, func() { _ = testcontainers.TerminateContainer(c) }, nil
}

// privateServer starts a cluster of this test package's own from the
// server binaries on the machine, in a temporary directory that goes when
// it stops.
func privateServer(ctx context.Context, noDocker error) (string, func(), error) {
	bin, err := pglocal.Find(os.Getenv("PATH"), pglocal.SearchRoots)
	if err != nil {
		return "", nil, fmt.Errorf("no PostgreSQL for the tests: set TEST_DATABASE_URL "+
			"(for example postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable), "+
			"or run a Docker daemon so testcontainers-go can start one (%v), "+
			"or install PostgreSQL's server binaries so the tests start one of their own (scripts/test does): %w", noDocker, err)
	}
	dir, err := os.MkdirTemp("", "taskchat-test-postgres-")
	if err != nil {
		return "", nil, err
	}
	c, err := pglocal.Start(ctx, pglocal.Options{Dir: dir, Binaries: bin, Throwaway: true})
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("no TEST_DATABASE_URL and no Docker (%v), and a PostgreSQL of the tests' own did not start: %w", noDocker, err)
	}
	return c.URL("postgres"), func() {
		if err := c.Stop(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, "storetest:", err)
			return // its files stay with it: the error names the directory
		}
		os.RemoveAll(dir)
	}, nil
}

// dockerAnswers reports whether a Docker daemon is reachable, without the
// panics testcontainers-go raises when none is.
func dockerAnswers(ctx context.Context) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("docker: %v", r)
		}
	}()
	p, err := testcontainers.NewDockerProvider()
	if err != nil {
		return err
	}
	defer p.Close()
	return p.Health(ctx)
}

func createDatabase(ctx context.Context, name string) (string, error) {
	if err := admin(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("create database %s: %w", name, err)
	}
	u, err := url.Parse(serverURL)
	if err != nil {
		return "", err
	}
	u.Path = "/" + name
	return u.String(), nil
}

func dropDatabase(ctx context.Context, name string) error {
	return admin(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
}

func admin(ctx context.Context, sql string) error {
	conn, err := pgx.Connect(ctx, serverURL)
	if err != nil {
		return fmt.Errorf("connect to %s: %w", redact(serverURL), err)
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

// dbName names a database after the test binary, plus a random suffix.
func dbName() string {
	base := strings.TrimSuffix(filepath.Base(os.Args[0]), ".test")
	base = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, strings.ToLower(base))
	return "taskchat_test_" + base + "_" + randomHex(4)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func redact(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "the database URL"
	}
	return p.Redacted()
}

// CutDatabase simulates a database outage for this package's database: it
// refuses new connections and terminates the open ones, as a crashed or
// restarting server would. The returned function ends the outage; it also
// runs when the test ends.
func CutDatabase(tb testing.TB) (restore func()) {
	tb.Helper()
	name := strings.TrimPrefix(mustParse(tb, URL(tb)).Path, "/")
	ident := pgx.Identifier{name}.Sanitize()
	ctx := context.Background()
	if err := admin(ctx, "ALTER DATABASE "+ident+" ALLOW_CONNECTIONS false"); err != nil {
		tb.Fatalf("storetest: %v", err)
	}
	if err := admin(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '"+strings.ReplaceAll(name, "'", "''")+"' AND pid <> pg_backend_pid()"); err != nil {
		tb.Fatalf("storetest: %v", err)
	}
	var once sync.Once
	restore = func() {
		once.Do(func() {
			if err := admin(ctx, "ALTER DATABASE "+ident+" ALLOW_CONNECTIONS true"); err != nil {
				tb.Errorf("storetest: %v", err)
			}
			// The package's pool still holds the connections the outage
			// ended, and would hand one to the next test, which would fail
			// for this test's outage: they go, as a restarted server's do.
			if pool != nil {
				pool.Reset()
			}
		})
	}
	tb.Cleanup(restore)
	return restore
}

func mustParse(tb testing.TB, s string) *url.URL {
	tb.Helper()
	u, err := url.Parse(s)
	if err != nil {
		tb.Fatal(err)
	}
	return u
}
