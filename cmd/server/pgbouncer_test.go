package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/taskchat/taskchat/internal/logtest"
	"github.com/taskchat/taskchat/internal/store"
	"github.com/taskchat/taskchat/internal/store/storetest"
)

// TestThroughPgBouncerInTransactionPooling runs two replicas through a real
// PgBouncer in transaction pooling mode with a single server connection, so
// that every statement of every replica shares it, one transaction after
// another: anything session-scoped a replica left on it would be another
// replica's next. The migrations go to PostgreSQL directly.
func TestThroughPgBouncerInTransactionPooling(t *testing.T) {
	t.Parallel()
	direct := storetest.EmptyDatabase(t)
	bouncer := mustPgBouncer(t, direct)

	t.Run("named prepared statements collide, which is why the setting exists", func(t *testing.T) {
		// Two clients preparing the same statement by name, as pgx does by
		// default, meet on the one server connection.
		ctx := context.Background()
		var err error
		for range 2 {
			conn, cerr := pgx.Connect(ctx, bouncer)
			if cerr != nil {
				t.Fatal(cerr)
			}
			defer conn.Close(ctx)
			var n int
			if err = conn.QueryRow(ctx, `SELECT $1::int + 1`, 41).Scan(&n); err != nil {
				break
			}
		}
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "42P05" {
			t.Fatalf("the second client's prepared statement = %v; want 42P05 duplicate_prepared_statement (is PgBouncer in transaction mode?)", err)
		}
	})

	vars := map[string]string{
		"DATABASE_URL":                 bouncer,
		"MIGRATE_DATABASE_URL":         direct,
		"DATABASE_PREPARED_STATEMENTS": "false",
	}
	var (
		wg    sync.WaitGroup
		bases [2]string
	)
	for i := range bases {
		wg.Go(func() { bases[i], _, _ = mustRun(t, vars) })
	}
	wg.Wait()
	for _, b := range bases {
		waitHealthy(t, b)
	}
	db := mustConnect(t, direct)
	var version int
	var dirty bool
	if err := db.QueryRow(context.Background(), `SELECT version, dirty FROM schema_migrations`).Scan(&version, &dirty); err != nil || version != latestMigration(t) || dirty {
		t.Fatalf("schema_migrations = %d dirty=%v, %v; want %d", version, dirty, err, latestMigration(t))
	}

	// Users chat at once, each turn on the other replica: a new
	// conversation, a keyed turn and its retry, then a streamed list.
	users := make([]string, 6)
	errs := make(chan error, len(users))
	for i := range users {
		users[i] = storetest.UserID(t)
		wg.Go(func() { errs <- chatAcrossReplicas(bases, users[i]) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	for _, u := range users {
		checkStored(t, db, u)
	}

	t.Run("a stream resumes on the other replica", func(t *testing.T) {
		// The turn's events go through PgBouncer; the replicas listen on
		// MIGRATE_DATABASE_URL, which reaches PostgreSQL directly.
		user := storetest.UserID(t)
		tok := mustMint(t, user)
		s := openStream(t, "POST", bases[0]+"/api/"+user+"/chat", tok, `{"message":"Add a task to call mom"}`, nil)
		first := s.until(t, func(e event) bool { return e.name == "tool_call" })
		s.resp.Body.Close()
		conv := first[0].data["conversation_id"]
		r := openStream(t, "GET", fmt.Sprintf("%s/api/%s/conversations/%v/stream", bases[1], user, conv), tok, "",
			map[string]string{"Last-Event-ID": first[len(first)-1].id})
		all := append(first, r.rest()...)
		run := strings.Split(all[0].id, "-")[0]
		for i, e := range all {
			if e.id != fmt.Sprintf("%s-%d", run, i+1) {
				t.Fatalf("event %d (%s) has id %q (%s)", i, e.name, e.id, names(all))
			}
		}
		var stored string
		if err := db.QueryRow(context.Background(), `SELECT content FROM messages WHERE role = 'assistant'
			AND conversation_id = (SELECT id FROM conversations WHERE user_id = $1 AND number = $2)`, user, conv).Scan(&stored); err != nil {
			t.Fatal(err)
		}
		if done := all[len(all)-1]; done.name != "done" || text(all) != stored || stored == "" {
			t.Fatalf("resumed %q ending %s, stored %q", text(all), names(all), stored)
		}
	})
	if n := bouncedTransactions(t, bouncer); n < int64(len(users))*6 {
		t.Fatalf("PgBouncer counted %d transactions for the database, want at least %d: the replicas did not go through it", n, len(users)*6)
	}
}

func TestConfigForAPooler(t *testing.T) {
	t.Parallel()
	vars := map[string]string{"DATABASE_URL": "postgres://app@pgbouncer:6432/taskchat", "JWT_SECRET": secret}
	cfg, err := loadConfig(env(vars))
	if want := (store.Settings{PlanCacheMode: "force_generic_plan"}); err != nil || cfg.MigrateDatabaseURL != vars["DATABASE_URL"] || cfg.Store != want {
		t.Fatalf("by default: migrations at %q, connections %+v, %v; want DATABASE_URL's, %+v", cfg.MigrateDatabaseURL, cfg.Store, err, want)
	}

	vars["MIGRATE_DATABASE_URL"] = "postgres://app@postgres:5432/taskchat"
	vars["DATABASE_PREPARED_STATEMENTS"] = "false"
	vars["DATABASE_PLAN_CACHE_MODE"] = "server"
	cfg, err = loadConfig(env(vars))
	if want := (store.Settings{NoPreparedStatements: true, PlanCacheMode: store.PlanCacheServer}); err != nil || cfg.MigrateDatabaseURL != vars["MIGRATE_DATABASE_URL"] || cfg.Store != want {
		t.Fatalf("set: migrations at %q, connections %+v, %v; want %+v", cfg.MigrateDatabaseURL, cfg.Store, err, want)
	}

	// LISTEN does not pass the pooler: the listening connection goes where
	// migrations go, unless LISTEN_DATABASE_URL says otherwise or none.
	if cfg.ListenDatabaseURL != vars["MIGRATE_DATABASE_URL"] {
		t.Fatalf("listening on %q, want MIGRATE_DATABASE_URL's", cfg.ListenDatabaseURL)
	}
	for listen, want := range map[string]string{"postgres://app@postgres:5433/taskchat": "postgres://app@postgres:5433/taskchat", "none": "", "NONE": ""} {
		vars["LISTEN_DATABASE_URL"] = listen
		if cfg, err = loadConfig(env(vars)); err != nil || cfg.ListenDatabaseURL != want {
			t.Fatalf("LISTEN_DATABASE_URL=%s: listening on %q, %v; want %q", listen, cfg.ListenDatabaseURL, err, want)
		}
	}

	vars["MIGRATE_DATABASE_URL"] = "mysql://app@db/taskchat"
	vars["DATABASE_PREPARED_STATEMENTS"] = "sometimes"
	vars["DATABASE_PLAN_CACHE_MODE"] = "generic"
	vars["LISTEN_DATABASE_URL"] = "redis://cache"
	_, err = loadConfig(env(vars))
	for _, name := range []string{"MIGRATE_DATABASE_URL", "DATABASE_PREPARED_STATEMENTS", "DATABASE_PLAN_CACHE_MODE", "LISTEN_DATABASE_URL"} {
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("the error does not name %s: %v", name, err)
		}
	}
}

// chatAcrossReplicas plays one user's turns, alternating replicas, and says
// what went wrong.
func chatAcrossReplicas(bases [2]string, user string) error {
	tok, err := mintFor(user)
	if err != nil {
		return err
	}
	first, err := chatTurn(bases[0], tok, user, "", `{"message":"Add a task to buy milk"}`)
	if err != nil {
		return err
	}
	key := "key-" + user
	body := fmt.Sprintf(`{"conversation_id":%s,"message":"Add a task to pay rent"}`, first.conversationID)
	keyed, err := chatTurn(bases[1], tok, user, key, body)
	if err != nil {
		return err
	}
	retried, err := chatTurn(bases[0], tok, user, key, body)
	if err != nil {
		return err
	}
	if retried.text != keyed.text || !retried.replayed {
		return fmt.Errorf("%s: the retry answered %q (replayed %v), want the stored %q replayed", user, retried.text, retried.replayed, keyed.text)
	}
	list, err := streamTurn(bases[1], tok, user, fmt.Sprintf(`{"conversation_id":%s,"message":"Show me all my tasks"}`, first.conversationID))
	if err != nil {
		return err
	}
	if !strings.Contains(list, "Buy milk") || !strings.Contains(list, "Pay rent") {
		return fmt.Errorf("%s: the streamed list does not show both tasks: %q", user, list)
	}
	return nil
}

// checkStored reads what a user's turns stored, straight from PostgreSQL.
func checkStored(tb testing.TB, db *pgx.Conn, user string) {
	tb.Helper()
	ctx := context.Background()
	var tasks, convs, msgs, adds, pending int
	err := db.QueryRow(ctx, `
		SELECT (SELECT count(*) FROM tasks WHERE user_id = $1),
		       (SELECT count(*) FROM conversations WHERE user_id = $1),
		       (SELECT count(*) FROM messages WHERE user_id = $1 AND NOT interrupted),
		       (SELECT count(*) FROM tool_calls WHERE user_id = $1 AND tool = 'add_task' AND NOT is_error),
		       (SELECT count(*) FROM idempotency_keys WHERE user_id = $1 AND (response IS NULL OR locked_until IS NOT NULL))`,
		user).Scan(&tasks, &convs, &msgs, &adds, &pending)
	if err != nil {
		tb.Fatal(err)
	}
	// Three turns ran (the retry replayed): two tasks, one conversation of
	// six messages, two add_task calls, the key done.
	if tasks != 2 || convs != 1 || msgs != 6 || adds != 2 || pending != 0 {
		tb.Errorf("%s: stored %d tasks, %d conversations, %d messages, %d add_task calls, %d keys unfinished; want 2, 1, 6, 2, 0",
			user, tasks, convs, msgs, adds, pending)
	}
}

// chatReply is what a JSON turn answered.
type chatReply struct {
	conversationID string
	text           string
	replayed       bool
}

func chatTurn(base, token, user, key, body string) (chatReply, error) {
	resp, err := sendChat(base, token, user, key, body, false)
	if err != nil {
		return chatReply{}, err
	}
	defer resp.Body.Close()
	var out struct {
		ConversationID json.Number `json:"conversation_id"`
		Response       string      `json:"response"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return chatReply{}, fmt.Errorf("%s: %q: %w", user, body, err)
	}
	return chatReply{out.ConversationID.String(), out.Response, resp.Header.Get("Idempotent-Replayed") == "true"}, nil
}

// streamTurn sends a streamed turn and returns its done event's data.
func streamTurn(base, token, user, body string) (string, error) {
	resp, err := sendChat(base, token, user, "", body, true)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var event, done string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if e, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
			event = e
		} else if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok && event == "done" {
			done = d
		}
	}
	if done == "" {
		return "", fmt.Errorf("%s: the stream did not end with done", user)
	}
	return done, nil
}

func sendChat(base, token, user, key, body string, stream bool) (*http.Response, error) {
	req, _ := http.NewRequest("POST", base+"/api/"+user+"/chat", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	if stream {
		req.Header.Set("Accept", "text/event-stream")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %q: %w", user, body, err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return nil, fmt.Errorf("%s: %q answered %d %s", user, body, resp.StatusCode, b)
	}
	return resp, nil
}

// mintFor is mustMint for a goroutine: it returns the error.
func mintFor(user string) (string, error) {
	var out strings.Builder
	err := run(context.Background(), []string{"token", "-ttl", "1h", user}, env(map[string]string{"JWT_SECRET": secret}), &out, io.Discard)
	return strings.TrimSpace(out.String()), err
}

func mustConnect(tb testing.TB, u string) *pgx.Conn {
	tb.Helper()
	conn, err := pgx.Connect(context.Background(), u)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// debianPgBouncer is where Debian's pgbouncer package installs the binary,
// a directory that is not on every user's PATH.
const debianPgBouncer = "/usr/sbin/pgbouncer"

// mustPgBouncer starts a PgBouncer for one test, in transaction pooling
// mode with one server connection per database and user, in front of the
// PostgreSQL that databaseURL names. It returns databaseURL through
// PgBouncer. Without pgbouncer the test fails, saying how to install it.
func mustPgBouncer(tb testing.TB, databaseURL string) string {
	tb.Helper()
	path, err := exec.LookPath("pgbouncer")
	if err != nil {
		path = debianPgBouncer
	}
	version, err := exec.Command(path, "--version").Output()
	if err != nil {
		tb.Fatalf("this test needs PgBouncer, on PATH or at %s (%v): install Debian's pgbouncer "+
			"(apt-get install -y pgbouncer, as scripts/test does)", debianPgBouncer, err)
	}
	u, err := url.Parse(databaseURL)
	if err != nil {
		tb.Fatal(err)
	}
	port := freePort(tb)
	ini := pgBouncerINI(tb, u, port, string(version))
	var logs logtest.Buffer
	cmd := exec.Command(path, ini)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start %s: %v", path, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	tb.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		<-exited
	})
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for deadline := time.Now().Add(10 * time.Second); ; {
		if c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond); err == nil {
			c.Close()
			break
		}
		select {
		case <-exited:
			tb.Fatalf("pgbouncer exited:\n%s", logs.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			tb.Fatalf("pgbouncer did not listen on %s:\n%s", addr, logs.String())
		}
	}
	through := *u
	through.Host = addr
	if q := through.Query(); q.Has("host") {
		// A socket's directory in the query would take pgx past PgBouncer.
		q.Del("host")
		through.RawQuery = q.Encode()
	}
	return through.String()
}

// pgBouncerINI writes PgBouncer's configuration (and the users it lets in)
// into a temporary directory and returns its path.
func pgBouncerINI(tb testing.TB, u *url.URL, port int, version string) string {
	tb.Helper()
	dir := tb.TempDir()
	host, pgPort := u.Hostname(), u.Port()
	if h := u.Query().Get("host"); h != "" {
		host = h // a socket's directory: storetest's own cluster
	}
	if pgPort == "" {
		pgPort = "5432"
	}
	password, _ := u.User.Password()
	users := filepath.Join(dir, "users.txt")
	// Clients are trusted; PgBouncer logs into PostgreSQL with the
	// password listed here, if the URL has one.
	if err := os.WriteFile(users, fmt.Appendf(nil, "%q %q\n", u.User.Username(), password), 0o600); err != nil {
		tb.Fatal(err)
	}
	lines := []string{
		"[databases]",
		fmt.Sprintf("* = host=%s port=%s", host, pgPort),
		"[pgbouncer]",
		"listen_addr = 127.0.0.1",
		fmt.Sprintf("listen_port = %d", port),
		"unix_socket_dir =",
		"auth_type = trust",
		"auth_file = " + users,
		"admin_users = " + u.User.Username(),
		"pool_mode = transaction",
		"default_pool_size = 1",
		"max_client_conn = 200",
	}
	if os.Geteuid() == 0 {
		lines = append(lines, "user = "+pgBouncerAccount(tb, host)) // it refuses to run as root
	}
	if pgBouncerAtLeast(version, 1, 21) {
		// Later versions can keep prepared statements (1.22 on by
		// default); the test wants the transaction pooling they guard against.
		lines = append(lines, "max_prepared_statements = 0")
	}
	ini := filepath.Join(dir, "pgbouncer.ini")
	if err := os.WriteFile(ini, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		tb.Fatal(err)
	}
	return ini
}

// pgBouncerAccount is the account root's PgBouncer runs as: nobody, unless
// it connects through a socket in a directory only its owner can enter (a
// cluster of storetest's own, which belongs to postgres), whose owner it
// must then be.
func pgBouncerAccount(tb testing.TB, host string) string {
	tb.Helper()
	info, err := os.Stat(host)
	if err != nil || !info.IsDir() {
		return "nobody"
	}
	u, err := user.LookupId(strconv.FormatUint(uint64(info.Sys().(*syscall.Stat_t).Uid), 10))
	if err != nil {
		tb.Fatalf("the owner of %s: %v", host, err)
	}
	return u.Username
}

// pgBouncerAtLeast reads `pgbouncer --version` ("PgBouncer 1.18.0 ...").
func pgBouncerAtLeast(version string, major, minor int) bool {
	f := strings.Fields(version)
	if len(f) < 2 {
		return false
	}
	parts := strings.Split(f[1], ".")
	if len(parts) < 2 {
		return false
	}
	ma, _ := strconv.Atoi(parts[0])
	mi, _ := strconv.Atoi(parts[1])
	return ma > major || (ma == major && mi >= minor)
}

// freePort returns a TCP port nothing listens on at the moment.
func freePort(tb testing.TB) int {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// bouncedTransactions asks PgBouncer's admin console how many transactions
// it passed to the database databaseURL names.
func bouncedTransactions(tb testing.TB, databaseURL string) int64 {
	tb.Helper()
	u, _ := url.Parse(databaseURL)
	name := strings.TrimPrefix(u.Path, "/")
	u.Path = "/pgbouncer"
	q := u.Query()
	q.Set("default_query_exec_mode", "simple_protocol") // all the console speaks
	u.RawQuery = q.Encode()
	conn := mustConnect(tb, u.String())
	rows, err := conn.Query(context.Background(), "SHOW STATS")
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			tb.Fatal(err)
		}
		row := map[string]any{}
		for i, f := range rows.FieldDescriptions() {
			row[f.Name] = vals[i]
		}
		if row["database"] == name {
			n, ok := row["total_xact_count"].(pgtype.Numeric) // PgBouncer says numeric
			count, err := n.Int64Value()
			if !ok || err != nil {
				tb.Fatalf("SHOW STATS: total_xact_count = %#v, %v", row["total_xact_count"], err)
			}
			return count.Int64
		}
	}
	tb.Fatalf("SHOW STATS has no row for %s (%v)", name, rows.Err())
	return 0
}
