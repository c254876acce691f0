package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/taskchat/taskchat/internal/logtest"
	"github.com/taskchat/taskchat/internal/store/storetest"
)

func TestMain(m *testing.M) {
	if os.Getenv(asBinaryVar) != "" {
		// A test runs the binary: the client's commands through a
		// terminal, their exit statuses.
		main()
		os.Exit(0)
	}
	os.Exit(storetest.Run(m))
}

const secret = "an-end-to-end-secret-of-32-bytes-or-more"

// env is a getenv over a map.
func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

var listening = regexp.MustCompile(`"msg":"listening","addr":"([^"]+)"`)

// mustRun starts run in the background on a free port and returns the
// server's base URL, a stop function that waits for run to return, and
// the log.
func mustRun(tb testing.TB, vars map[string]string) (base string, stop func() error, logs *logtest.Buffer) {
	tb.Helper()
	all := map[string]string{"ADDR": "127.0.0.1:0", "DATABASE_URL": storetest.URL(tb), "JWT_SECRET": secret}
	for k, v := range vars {
		all[k] = v
	}
	ctx, cancel := context.WithCancel(context.Background())
	logs = &logtest.Buffer{}
	done := make(chan error, 1)
	go func() { done <- run(ctx, nil, env(all), logs, io.Discard) }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if m := listening.FindStringSubmatch(logs.String()); m != nil {
			base = "http://" + m[1]
			break
		}
		select {
		case err := <-done:
			tb.Fatalf("run returned before listening: %v\n%s", err, logs.String())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			tb.Fatalf("server did not start:\n%s", logs.String())
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
	return base, stop, logs
}

func waitHealthy(tb testing.TB, base string) {
	tb.Helper()
	for i := 0; i < 200; i++ {
		if resp, err := http.Get(base + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	tb.Fatal("/healthz never answered")
}

func mustMint(tb testing.TB, user string) string {
	tb.Helper()
	var out bytes.Buffer
	if err := run(context.Background(), []string{"token", "-ttl", "1h", user}, env(map[string]string{"JWT_SECRET": secret}), &out, io.Discard); err != nil {
		tb.Fatal(err)
	}
	return strings.TrimSpace(out.String())
}

func postChat(tb testing.TB, base, token, user, body string) map[string]any {
	tb.Helper()
	req, _ := http.NewRequest("POST", base+"/api/"+user+"/chat", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 {
		tb.Fatalf("chat = %d, %v %v", resp.StatusCode, out, err)
	}
	return out
}

func TestRunServesChatsAndStopsCleanly(t *testing.T) {
	t.Parallel()
	base, stop, logs := mustRun(t, nil)
	waitHealthy(t, base)
	user := storetest.UserID(t)
	tok := mustMint(t, user)

	first := postChat(t, base, tok, user, `{"message":"Add a task to buy groceries"}`)
	if !strings.HasPrefix(first["response"].(string), "Added task") {
		t.Fatalf("first reply = %v", first)
	}
	if err := stop(); err != nil {
		t.Fatalf("run after SIGTERM-equivalent: %v", err)
	}

	// A new process on the same database continues the conversation.
	base, _, logs2 := mustRun(t, nil)
	waitHealthy(t, base)
	body, _ := json.Marshal(map[string]any{"conversation_id": first["conversation_id"], "message": "Show me all my tasks"})
	second := postChat(t, base, tok, user, string(body))
	if !strings.Contains(second["response"].(string), "Buy groceries") {
		t.Fatalf("second reply = %v", second)
	}
	for _, l := range []string{logs.String(), logs2.String()} {
		if strings.Contains(l, tok) || strings.Contains(l, "buy groceries") || strings.Contains(l, "Buy groceries") {
			t.Fatalf("the log holds a token or message text:\n%s", l)
		}
		if !strings.Contains(l, `"user_id":"`+user+`"`) {
			t.Fatalf("the access log lacks the user:\n%s", l)
		}
	}
}

func TestConfigNamesEveryProblem(t *testing.T) {
	t.Parallel()
	_, err := loadConfig(env(map[string]string{
		"JWT_SECRET":            "short",
		"LLM_PROVIDER":          "openai",
		"AGENT_MAX_MODEL_CALLS": "lots",
		"SHUTDOWN_TIMEOUT":      "-1s",
		"LOG_LEVEL":             "chatty",
		"MIGRATE":               "perhaps",
	}))
	if err == nil {
		t.Fatal("bad configuration accepted")
	}
	for _, name := range []string{"DATABASE_URL", "JWT_SECRET", "LLM_PROVIDER", "AGENT_MAX_MODEL_CALLS", "SHUTDOWN_TIMEOUT", "LOG_LEVEL", "MIGRATE"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("the error does not name %s:\n%v", name, err)
		}
	}
}

func TestConfigChoosesTheModel(t *testing.T) {
	t.Parallel()
	base := map[string]string{"DATABASE_URL": "postgres://x@localhost/db", "JWT_SECRET": secret}
	for _, c := range []struct {
		vars map[string]string
		want string
	}{
		{nil, "offline"},
		{map[string]string{"OPENAI_API_KEY": "sk-x"}, "openai"},
		{map[string]string{"OPENAI_BASE_URL": "http://localhost:11434/v1"}, "openai"},
		{map[string]string{"OPENAI_API_KEY": "sk-x", "LLM_PROVIDER": "offline"}, "offline"},
	} {
		vars := map[string]string{}
		for k, v := range base {
			vars[k] = v
		}
		for k, v := range c.vars {
			vars[k] = v
		}
		cfg, err := loadConfig(env(vars))
		if err != nil || cfg.Provider != c.want {
			t.Errorf("%v: provider %q, %v; want %q", c.vars, cfg.Provider, err, c.want)
		}
	}
}

func TestRefusesToStartWithAWeakSecret(t *testing.T) {
	t.Parallel()
	err := run(context.Background(), nil, env(map[string]string{"DATABASE_URL": "postgres://x@localhost/db", "JWT_SECRET": "too-short"}), io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "JWT_SECRET") {
		t.Fatalf("err = %v", err)
	}
}
