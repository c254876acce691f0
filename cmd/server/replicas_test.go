package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io/fs"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/taskchat/taskchat/internal/agent/openaitest"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/migrations"
)

func TestTwoReplicasOnOneDatabase(t *testing.T) {
	t.Parallel()
	// Both start at the same moment on an empty database: the migrations
	// are applied once, and neither fails.
	u := storetest.EmptyDatabase(t)
	var (
		wg    sync.WaitGroup
		bases [2]string
	)
	for i := range bases {
		wg.Go(func() {
			base, _, _ := mustRun(t, map[string]string{"DATABASE_URL": u})
			bases[i] = base
		})
	}
	wg.Wait()
	conn, err := pgx.Connect(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var version int
	var dirty bool
	if err := conn.QueryRow(context.Background(), `SELECT version, dirty FROM schema_migrations`).Scan(&version, &dirty); err != nil || version != latestMigration(t) || dirty {
		t.Fatalf("schema_migrations = %d dirty=%v, %v; want %d", version, dirty, err, latestMigration(t))
	}

	// A conversation continued alternately through both replicas.
	user := storetest.UserID(t)
	tok := mustMint(t, user)
	var convID any
	says := []string{"Add a task to buy milk", "Add a task to pay rent", "Show me all my tasks"}
	var last map[string]any
	for i, msg := range says {
		body, _ := json.Marshal(map[string]any{"conversation_id": convID, "message": msg})
		if convID == nil {
			body, _ = json.Marshal(map[string]any{"message": msg})
		}
		last = postChat(t, bases[i%2], tok, user, string(body))
		convID = last["conversation_id"]
	}
	reply := last["response"].(string)
	if !strings.Contains(reply, "Buy milk") || !strings.Contains(reply, "Pay rent") {
		t.Fatalf("the third turn, on the first replica, does not see the second's work: %q", reply)
	}
	var n int
	_ = conn.QueryRow(context.Background(), `SELECT count(*) FROM messages
		WHERE conversation_id = (SELECT id FROM conversations WHERE user_id = $1 AND number = $2)`, user, convID).Scan(&n)
	if n != 6 {
		t.Fatalf("messages stored = %d, want 6", n)
	}
}

func TestGracefulShutdownUnderLoad(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	fake := openaitest.New(openaitest.Step{Text: "Finished despite the shutdown.", Wait: release})
	defer fake.Close()
	base, stop, _ := mustRun(t, map[string]string{"OPENAI_BASE_URL": fake.URL + "/v1", "SHUTDOWN_TIMEOUT": "20s"})
	waitHealthy(t, base)

	const jsonTurns, streamTurns = 3, 3
	type outcome struct {
		status int
		body   string
	}
	results := make(chan outcome, jsonTurns+streamTurns)
	users := make([]string, jsonTurns+streamTurns)
	for i := range users {
		users[i] = storetest.UserID(t)
		stream := i >= jsonTurns
		go func() {
			req, _ := http.NewRequest("POST", base+"/api/"+users[i]+"/chat", strings.NewReader(`{"message":"hello"}`))
			req.Header.Set("Authorization", "Bearer "+mustMint(t, users[i]))
			req.Header.Set("Content-Type", "application/json")
			if stream {
				req.Header.Set("Accept", "text/event-stream")
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				results <- outcome{body: err.Error()}
				return
			}
			defer resp.Body.Close()
			var b strings.Builder
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				b.WriteString(sc.Text() + "\n")
			}
			results <- outcome{resp.StatusCode, b.String()}
		}()
	}
	waitFor(t, "every turn to reach the model", func() bool { return fake.Requests() == len(users) })

	stopped := make(chan error, 1)
	go func() { stopped <- stop() }() // what SIGTERM does to run
	addr := strings.TrimPrefix(base, "http://")
	waitFor(t, "the listener to close", func() bool {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	close(release) // the model answers after the shutdown began

	for range users {
		o := <-results
		if o.status != 200 || !strings.Contains(o.body, "Finished despite the shutdown.") {
			t.Errorf("in-flight turn = %d %q", o.status, o.body)
		}
		if strings.Contains(o.body, "event:") && !strings.Contains(o.body, "event: done") {
			t.Errorf("stream did not end with done: %q", o.body)
		}
	}
	if err := <-stopped; err != nil {
		t.Fatalf("run returned %v, want a clean exit", err)
	}
	conn, err := pgx.Connect(context.Background(), storetest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for _, u := range users {
		var n int
		_ = conn.QueryRow(context.Background(), `SELECT count(*) FROM messages WHERE user_id = $1 AND role = 'assistant' AND NOT interrupted`, u).Scan(&n)
		if n != 1 {
			t.Errorf("user %s: %d stored replies, want 1", u, n)
		}
	}
}

func waitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// latestMigration is the version of the newest embedded migration.
func latestMigration(tb testing.TB) int {
	tb.Helper()
	names, err := fs.Glob(migrations.FS, "*.up.sql")
	if err != nil || len(names) == 0 {
		tb.Fatalf("no migrations: %v", err)
	}
	n, err := strconv.Atoi(strings.SplitN(names[len(names)-1], "_", 2)[0])
	if err != nil {
		tb.Fatal(err)
	}
	return n
}
