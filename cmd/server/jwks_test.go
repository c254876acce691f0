package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/taskchat/taskchat/internal/nodetest"
)

// betterAuth is what clients/better-auth.mjs prints: a running Better Auth
// with its JWT plugin, and a token it issued to a user it signed up.
type betterAuth struct {
	BaseURL string `json:"base_url"`
	JWKSURL string `json:"jwks_url"`
	UserID  string `json:"user_id"`
	Token   string `json:"token"`
}

// mustBetterAuth starts Better Auth (clients/better-auth.mjs) for the test.
// It fails, saying what to run, when node or the package is missing.
func mustBetterAuth(tb testing.TB) betterAuth {
	tb.Helper()
	node, script := nodetest.MustScript(tb, "better-auth", "Better Auth", "better-auth.mjs")
	cmd := exec.Command(node, script)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		stdin.Close() // the script's cue to exit
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	line := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(stdout)
		s.Buffer(nil, 1<<20)
		s.Scan()
		line <- s.Text()
	}()
	var ba betterAuth
	select {
	case l := <-line:
		if err := json.Unmarshal([]byte(l), &ba); err != nil || ba.Token == "" || ba.UserID == "" {
			tb.Fatalf("better-auth.mjs printed %q: %v", l, err)
		}
	case <-time.After(time.Minute):
		tb.Fatal("better-auth.mjs did not start within a minute")
	}
	return ba
}

// taskchat configured as docs/clients.md's "Identity providers" says, with Better
// Auth's JWT plugin and its defaults, serves the token the plugin issues,
// end to end; and HS256 is refused when no JWT_SECRET is set.
func TestRunWithBetterAuth(t *testing.T) {
	t.Parallel()
	ba := mustBetterAuth(t)
	idp := map[string]string{"JWT_JWKS_URL": ba.JWKSURL, "JWT_ISSUER": ba.BaseURL, "JWT_AUDIENCE": ba.BaseURL}
	tasks := "/api/" + ba.UserID + "/tasks"

	t.Run("JWKS only", func(t *testing.T) {
		vars := map[string]string{"JWT_SECRET": ""}
		for k, v := range idp {
			vars[k] = v
		}
		base, _, logs := mustRun(t, vars)
		waitHealthy(t, base)
		reply := postChat(t, base, ba.Token, ba.UserID, `{"message":"Add a task to renew the passport"}`)
		if !strings.HasPrefix(reply["response"].(string), "Added task") {
			t.Fatalf("reply = %v", reply)
		}
		if got := statusOf(t, base, tasks, ba.Token); got != 200 {
			t.Fatalf("GET tasks with Better Auth's token = %d, want 200", got)
		}
		if got := statusOf(t, base, "/api/someone-else/tasks", ba.Token); got != 403 {
			t.Errorf("another user's tasks = %d, want 403", got)
		}
		if got := statusOf(t, base, tasks, mustMint(t, ba.UserID)); got != 401 {
			t.Errorf("an HS256 token to a JWKS-only server = %d, want 401", got)
		}
		for _, want := range []string{`"msg":"JWKS loaded"`, `"auth_error":"wrong_algorithm"`} {
			if !strings.Contains(logs.String(), want) {
				t.Errorf("the log lacks %s:\n%s", want, logs)
			}
		}
	})
	t.Run("JWKS and a secret", func(t *testing.T) {
		vars := map[string]string{"JWT_SECRET": secret}
		for k, v := range idp {
			vars[k] = v
		}
		base, _, _ := mustRun(t, vars)
		waitHealthy(t, base)
		own := mustRunToken(t, ba.UserID, ba.BaseURL)
		for name, token := range map[string]string{"Better Auth's token": ba.Token, "an HS256 token of the same user": own} {
			if got := statusOf(t, base, tasks, token); got != 200 {
				t.Errorf("%s = %d, want 200", name, got)
			}
		}
	})
}

// mustRunToken is `server token USER_ID` with JWT_ISSUER and JWT_AUDIENCE
// set to issuer, as they are on a server that also trusts a JWKS.
func mustRunToken(tb testing.TB, user, issuer string) string {
	tb.Helper()
	var out strings.Builder
	vars := map[string]string{"JWT_SECRET": secret, "JWT_ISSUER": issuer, "JWT_AUDIENCE": issuer}
	if err := run(tb.Context(), []string{"token", user}, env(vars), &out, &out); err != nil {
		tb.Fatalf("token: %v\n%s", err, out.String())
	}
	return strings.TrimSpace(out.String())
}

func TestConfigOfJWKS(t *testing.T) {
	t.Parallel()
	jwks := map[string]string{
		"DATABASE_URL": "postgres://x@localhost/db",
		"JWT_JWKS_URL": "https://app.example.com/api/auth/jwks",
		"JWT_ISSUER":   "https://app.example.com", "JWT_AUDIENCE": "https://app.example.com",
	}
	with := func(vars map[string]string) map[string]string {
		all := map[string]string{}
		for k, v := range jwks {
			all[k] = v
		}
		for k, v := range vars {
			all[k] = v
		}
		return all
	}
	cfg, err := loadConfig(env(jwks))
	if err != nil {
		t.Fatalf("a JWKS without JWT_SECRET: %v", err)
	}
	if cfg.JWKS.URL != jwks["JWT_JWKS_URL"] || cfg.JWKS.Refresh != 10*time.Minute || cfg.JWKS.UnknownKeyRefresh != time.Minute || cfg.JWKS.Timeout != 5*time.Second {
		t.Errorf("JWKS = %+v, want the URL, a refresh every 10m, an unknown kid's at most every 1m, fetches of at most 5s", cfg.JWKS)
	}
	if cfg, err := loadConfig(env(with(map[string]string{"JWT_JWKS_REFRESH": "1h", "JWT_SECRET": secret}))); err != nil || cfg.JWKS.Refresh != time.Hour {
		t.Errorf("JWT_JWKS_REFRESH=1h with a secret: %+v, %v", cfg.JWKS, err)
	}
	if _, err := loadConfig(env(with(map[string]string{"JWT_JWKS_URL": "http://localhost:3000/api/auth/jwks"}))); err != nil {
		t.Errorf("plain http to localhost: %v", err)
	}
	for _, tc := range []struct {
		vars map[string]string
		want []string
	}{
		{map[string]string{"JWT_JWKS_URL": ""}, []string{"JWT_SECRET is required", "or set JWT_JWKS_URL"}},
		{map[string]string{"JWT_ISSUER": ""}, []string{"JWT_JWKS_URL needs JWT_ISSUER and JWT_AUDIENCE"}},
		{map[string]string{"JWT_AUDIENCE": ""}, []string{"JWT_JWKS_URL needs JWT_ISSUER and JWT_AUDIENCE"}},
		{map[string]string{"JWT_JWKS_URL": "http://auth.internal:3000/api/auth/jwks"}, []string{"JWT_JWKS_URL must use https"}},
		{map[string]string{"JWT_JWKS_REFRESH": "30s"}, []string{"JWT_JWKS_REFRESH must be at least 1m0s"}},
		{map[string]string{"JWT_JWKS_REFRESH": "often"}, []string{"JWT_JWKS_REFRESH must be a positive duration"}},
		{map[string]string{"JWT_SECRET": "short"}, []string{"JWT_SECRET is required and must be at least 32 bytes (got 5)"}},
		{map[string]string{"DEV_LOGIN": "true"}, []string{"DEV_LOGIN signs HS256 tokens and needs JWT_SECRET"}},
	} {
		_, err := loadConfig(env(with(tc.vars)))
		for _, want := range tc.want {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%v: err = %v, want it to say %q", tc.vars, err, want)
			}
		}
	}
}
