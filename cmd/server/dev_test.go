package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/taskchat/taskchat/internal/logtest"
	"github.com/taskchat/taskchat/internal/store/pglocal"
	"github.com/taskchat/taskchat/internal/store/storetest"
)

// mustNewDatabaseURL returns the URL of a database that does not exist yet on
// the tests' server, and drops it when the test ends.
func mustNewDatabaseURL(tb testing.TB) string {
	tb.Helper()
	u, err := url.Parse(storetest.URL(tb))
	if err != nil {
		tb.Fatal(err)
	}
	name := "taskchat_test_dev_" + strings.TrimPrefix(storetest.UserID(tb), "user-")
	u.Path = "/" + name
	tb.Cleanup(func() {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, storetest.URL(tb))
		if err != nil {
			tb.Errorf("drop %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			tb.Errorf("drop %s: %v", name, err)
		}
	})
	return u.String()
}

var openLine = regexp.MustCompile(`taskchat dev: open (http://localhost:\d+)/\n`)

// mustRunDev starts `server dev` on a free port with exactly vars as its
// environment, and returns the URL it says to open (without the final
// slash), a stop function that
// waits for run to return, its log (stdout) and what it told the person
// (stderr).
func mustRunDev(tb testing.TB, vars map[string]string) (base string, stop func() error, logs, told *logtest.Buffer) {
	tb.Helper()
	all := map[string]string{"ADDR": "127.0.0.1:0"}
	for k, v := range vars {
		all[k] = v
	}
	ctx, cancel := context.WithCancel(context.Background())
	logs, told = &logtest.Buffer{}, &logtest.Buffer{}
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"dev"}, env(all), logs, told) }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if m := openLine.FindStringSubmatch(told.String()); m != nil {
			base = m[1]
			break
		}
		select {
		case err := <-done:
			cancel()
			tb.Fatalf("dev returned before listening: %v\n%s\n%s", err, told.String(), logs.String())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cancel()
			tb.Fatalf("dev did not start:\n%s\n%s", told.String(), logs.String())
		}
	}
	stopped := false
	stop = func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		return <-done
	}
	tb.Cleanup(func() { _ = stop() })
	return base, stop, logs, told
}

// mustDevToken asks /auth/dev/token for a token for user.
func mustDevToken(tb testing.TB, base, user string) string {
	tb.Helper()
	resp, err := http.Post(base+"/auth/dev/token", "application/json", strings.NewReader(`{"user_id":"`+user+`"}`))
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Token     string    `json:"token"`
		ExpiresAt time.Time `json:"expires_at"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 || out.Token == "" {
		tb.Fatalf("POST /auth/dev/token = %d, %+v, %v", resp.StatusCode, out, err)
	}
	return out.Token
}

// statusOf GETs base+path with the token and returns the status.
func statusOf(tb testing.TB, base, path, token string) int {
	tb.Helper()
	req, _ := http.NewRequest("GET", base+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestDev(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	vars := map[string]string{"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, "config"), "DATABASE_URL": mustNewDatabaseURL(t)}
	secretFile := filepath.Join(home, "config", "taskchat", "dev-jwt-secret")
	user := storetest.UserID(t)

	// The first start creates the secret and the database, and says so.
	base, stop, logs, told := mustRunDev(t, vars)
	waitHealthy(t, base)
	for _, want := range []string{secretFile + " (created now", "created database", "auth/dev/token"} {
		if !strings.Contains(told.String(), want) {
			t.Errorf("stderr does not say %q:\n%s", want, told.String())
		}
	}
	if !strings.Contains(logs.String(), `"level":"WARN","msg":"DEV_LOGIN is on`) {
		t.Errorf("no warning that DEV_LOGIN is on in the log:\n%s", logs.String())
	}
	info, err := os.Stat(secretFile)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("secret file mode %v, want 0600", info.Mode().Perm())
	}
	secret, _ := os.ReadFile(secretFile)

	token := mustDevToken(t, base, user)
	if got := statusOf(t, base, "/api/"+user+"/tasks", token); got != 200 {
		t.Fatalf("GET tasks with the dev token = %d", got)
	}
	if err := stop(); err != nil {
		t.Fatalf("dev after SIGTERM-equivalent: %v", err)
	}

	t.Run("a restart keeps the secret, so tokens survive", func(t *testing.T) {
		base, _, _, told := mustRunDev(t, vars)
		waitHealthy(t, base)
		if again, _ := os.ReadFile(secretFile); !bytes.Equal(again, secret) {
			t.Errorf("the secret changed across a restart")
		}
		if !strings.Contains(told.String(), "kept from an earlier start") || strings.Contains(told.String(), "created database") {
			t.Errorf("stderr of the second start:\n%s", told.String())
		}
		if got := statusOf(t, base, "/api/"+user+"/tasks", token); got != 200 {
			t.Errorf("the first start's token after a restart = %d", got)
		}

		// The token subcommand signs with the same secret when JWT_SECRET is unset.
		var out, errOut bytes.Buffer
		if err := run(context.Background(), []string{"token", user}, env(vars), &out, &errOut); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(errOut.String(), secretFile) {
			t.Errorf("token does not say which secret it used: %q", errOut.String())
		}
		if got := statusOf(t, base, "/api/"+user+"/tasks", strings.TrimSpace(out.String())); got != 200 {
			t.Errorf("a token from the token subcommand = %d", got)
		}
	})

	t.Run("the environment overrides dev's defaults", func(t *testing.T) {
		own := map[string]string{"JWT_SECRET": secret2, "DEV_LOGIN": "false"}
		for k, v := range vars {
			own[k] = v
		}
		own["XDG_CONFIG_HOME"] = filepath.Join(home, "elsewhere")
		base, _, logs, _ := mustRunDev(t, own)
		waitHealthy(t, base)
		if _, err := os.Stat(filepath.Join(home, "elsewhere")); !os.IsNotExist(err) {
			t.Errorf("with JWT_SECRET set, dev still made a secret file (%v)", err)
		}
		resp, err := http.Post(base+"/auth/dev/token", "application/json", strings.NewReader(`{"user_id":"alice"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 404 {
			t.Errorf("POST /auth/dev/token with DEV_LOGIN=false = %d, want 404", resp.StatusCode)
		}
		if strings.Contains(logs.String(), "DEV_LOGIN is on") {
			t.Errorf("a DEV_LOGIN warning with DEV_LOGIN=false:\n%s", logs.String())
		}
		if got := statusOf(t, base, "/api/"+user+"/tasks", mustMintWith(t, secret2, user)); got != 200 {
			t.Errorf("a token signed with the JWT_SECRET given = %d", got)
		}
	})
}

const secret2 = "another-end-to-end-secret-of-32-bytes-or-more"

func mustMintWith(tb testing.TB, secret, user string) string {
	tb.Helper()
	var out bytes.Buffer
	if err := run(context.Background(), []string{"token", user}, env(map[string]string{"JWT_SECRET": secret}), &out, io.Discard); err != nil {
		tb.Fatal(err)
	}
	return strings.TrimSpace(out.String())
}

func TestDevWithoutPostgres(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	vars := map[string]string{"XDG_CONFIG_HOME": t.TempDir(), "DATABASE_URL": "postgres://postgres@" + closed + "/taskchat?sslmode=disable"}
	err = run(context.Background(), []string{"dev"}, env(vars), io.Discard, io.Discard)
	if err == nil {
		t.Fatal("dev started without a PostgreSQL")
	}
	for _, want := range []string{"PostgreSQL is not reachable at " + closed, "sudo apt-get install postgresql", "docker compose up", "docker run"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q:\n%v", want, err)
		}
	}
}

func TestTokenWithoutASecret(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	err := run(context.Background(), []string{"token", "alice"}, env(map[string]string{"XDG_CONFIG_HOME": dir}), io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "JWT_SECRET is not set") || !strings.Contains(err.Error(), filepath.Join(dir, "taskchat", "dev-jwt-secret")) ||
		!strings.Contains(err.Error(), "server dev") {
		t.Errorf("token with neither JWT_SECRET nor a dev secret: %v", err)
	}
}

// Two dev servers starting at once must agree on the secret and both find
// their database.
func TestDevStartingTwiceAtOnce(t *testing.T) {
	t.Parallel()
	t.Run("one secret", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "taskchat", "dev-jwt-secret")
		secrets := make([]string, 8)
		var wg sync.WaitGroup
		for i := range secrets {
			wg.Go(func() {
				s, _, err := loadOrCreateDevSecret(path)
				if err != nil {
					t.Error(err)
				}
				secrets[i] = s
			})
		}
		wg.Wait()
		for _, s := range secrets {
			if s != secrets[0] || len(s) < 32 {
				t.Fatalf("secrets differ or are short: %q", secrets)
			}
		}
		if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
			t.Errorf("files left beside the secret: %v", entries)
		}
	})
	t.Run("one database", func(t *testing.T) {
		t.Parallel()
		u := mustNewDatabaseURL(t)
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				if err := ensureDatabase(context.Background(), u, io.Discard); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		conn, err := pgx.Connect(context.Background(), u)
		if err != nil {
			t.Fatal(err)
		}
		conn.Close(context.Background())
	})
}

// With no DATABASE_URL and nothing at the default address, dev starts a
// PostgreSQL of its own in the user's data directory, stops it when it
// ends, and finds it again the next time.
func TestDevStartsAPostgresOfItsOwn(t *testing.T) {
	t.Parallel()
	data := mustReachableTempDir(t)
	vars := map[string]string{"XDG_DATA_HOME": data, "PATH": os.Getenv("PATH")}
	dir := filepath.Join(data, "taskchat", "postgres")
	nobody := "postgres://postgres@" + closedAddr(t) + "/taskchat?sslmode=disable"

	var told logtest.Buffer
	u, stop, err := devDatabase(context.Background(), env(vars), &told, nobody, pglocal.SearchRoots)
	if err != nil {
		t.Fatal(err)
	}
	mustConnect(t, u).Close(context.Background())
	stop()
	for _, want := range []string{"no PostgreSQL answers at", "starting a PostgreSQL of its own", dir + " (created now", `created database "taskchat" on the socket in ` + dir, "stopped the PostgreSQL in " + dir} {
		if !strings.Contains(told.String(), want) {
			t.Errorf("stderr does not say %q:\n%s", want, told.String())
		}
	}
	if conn, err := pgx.Connect(context.Background(), u); err == nil {
		conn.Close(context.Background())
		t.Fatal("dev's PostgreSQL still answers after dev ended")
	}

	var toldAgain logtest.Buffer
	again, stop, err := devDatabase(context.Background(), env(vars), &toldAgain, nobody, pglocal.SearchRoots)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if again != u || !strings.Contains(toldAgain.String(), "kept from an earlier start") || strings.Contains(toldAgain.String(), "created database") {
		t.Errorf("the second start (%s) did not reuse the first's cluster:\n%s", again, toldAgain.String())
	}
}

func TestDevWithoutPostgresBinaries(t *testing.T) {
	t.Parallel()
	vars := map[string]string{"XDG_DATA_HOME": t.TempDir(), "PATH": t.TempDir()}
	nobody := "postgres://postgres@" + closedAddr(t) + "/taskchat?sslmode=disable"
	_, _, err := devDatabase(context.Background(), env(vars), io.Discard, nobody, []string{filepath.Join(t.TempDir(), "*", "bin")})
	if err == nil {
		t.Fatal("dev started a PostgreSQL without server binaries")
	}
	for _, want := range []string{"initdb and pg_ctl", "sudo apt-get install postgresql", "docker compose up", "DATABASE_URL"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q:\n%v", want, err)
		}
	}
}

// closedAddr is an address on which nothing listens.
func closedAddr(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// mustReachableTempDir is a temporary directory that root's PostgreSQL,
// which runs as postgres, can pass through.
func mustReachableTempDir(tb testing.TB) string {
	tb.Helper()
	dir := tb.TempDir()
	if os.Geteuid() == 0 {
		for _, d := range []string{filepath.Dir(dir), dir} {
			if err := os.Chmod(d, 0o711); err != nil {
				tb.Fatal(err)
			}
		}
	}
	return dir
}
