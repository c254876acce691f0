package main

import (
	"io"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/agent/offline"
	"github.com/taskchat/taskchat/internal/auth"
	"github.com/taskchat/taskchat/internal/chat"
)

// A value each variable of authVars and chatVars may take, other than
// its default.
var fieldSamples = map[string]string{
	"JWT_SECRET":                  strings.Repeat("s", 40),
	"JWT_ISSUER":                  "https://id.example.com",
	"JWT_AUDIENCE":                "taskchat-api",
	"JWT_JWKS_URL":                "https://id.example.com/jwks",
	"JWT_JWKS_REFRESH":            "2h",
	"AGENT_MAX_MODEL_CALLS":       "7",
	"AGENT_MAX_TOOL_CALLS":        "7",
	"AGENT_MAX_TOKENS":            "7777",
	"AGENT_TURN_TIMEOUT":          "7m",
	"AGENT_TOOL_TIMEOUT":          "7s",
	"HISTORY_LIMIT":               "7",
	"HISTORY_TOKENS":              "7777",
	"USER_DAILY_TOKEN_BUDGET":     "7777",
	"MAX_RUNNING_TURNS_PER_USER":  "7",
	"RATE_LIMIT_TURNS_PER_MINUTE": "7.5",
	"RATE_LIMIT_BURST":            "7",
	"APPROVAL_TOOLS":              "delete_task, update_task",
	"APPROVAL_TTL":                "90m",
}

// Each variable the tables name fills the field they pair it with: set
// alone, it changes that field of the package's configuration as
// cmd/server builds it.
func TestEachVariableFillsItsField(t *testing.T) {
	t.Parallel()
	base := map[string]string{"DATABASE_URL": "postgres://x@localhost/db", "JWT_SECRET": secret}
	model, prompt := offline.New(), agent.DefaultPrompt()
	build := map[string]func(config) any{
		"auth": func(c config) any { return authConfig(c, nil) },
		"chat": func(c config) any { return chatConfig(c, model, prompt, nil) },
	}
	for pkg, vars := range map[string]map[string]string{"auth": authVars, "chat": chatVars} {
		for field, name := range vars {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				sample, ok := fieldSamples[name]
				if !ok {
					t.Fatalf("no sample value for %s: add one to fieldSamples", name)
				}
				before, _ := loadConfig(env(base))
				vars := map[string]string{name: sample}
				for k, v := range base {
					if k != name {
						vars[k] = v
					}
				}
				after, _ := loadConfig(env(vars)) // a JWKS alone is incomplete; the field is still read
				was, is := fieldOf(t, build[pkg](before), field), fieldOf(t, build[pkg](after), field)
				if reflect.DeepEqual(was, is) {
					t.Errorf("%s=%s leaves %s.Config's %s at %v", name, sample, pkg, field, was)
				}
			})
		}
	}
}

// fieldOf is the field of v, a struct, at path ("JWKS.URL").
func fieldOf(tb testing.TB, v any, path string) any {
	tb.Helper()
	f := reflect.ValueOf(v)
	for name := range strings.SplitSeq(path, ".") {
		if f = f.FieldByName(name); !f.IsValid() {
			tb.Fatalf("%T has no field %s", v, path)
		}
	}
	return f.Interface()
}

// What a package says of its fields reaches the operator as the
// variables they set; fields no variable fills keep their Go names.
func TestPackageErrorsNameTheVariable(t *testing.T) {
	t.Parallel()
	cfg, err := loadConfig(env(map[string]string{"DATABASE_URL": "postgres://x@localhost/db", "JWT_SECRET": secret}))
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))

	weak := authConfig(cfg, log)
	weak.Secret, weak.Leeway = []byte("short"), -time.Second
	_, err = auth.NewVerifier(weak)
	assertSays(t, fromEnv(authVars, err), "JWT_SECRET must be at least 32 bytes (got 5)", "Leeway must not be negative (got -1s)")

	jwks := authConfig(cfg, log)
	jwks.JWKS.URL = "http://id.example.com/jwks"
	_, err = auth.NewVerifier(jwks)
	assertSays(t, fromEnv(authVars, err), "JWT_JWKS_URL must use https", "JWT_ISSUER is required with a JWKS", "JWT_AUDIENCE is required with a JWKS")

	turns := chatConfig(cfg, offline.New(), agent.DefaultPrompt(), nil)
	turns.HistoryLimit, turns.Limits.MaxTokens, turns.IdempotencyTTL = 0, 0, 0
	_, err = chat.New(log, nil, nil, turns)
	assertSays(t, fromEnv(chatVars, err), "HISTORY_LIMIT must be positive, got 0", "AGENT_MAX_TOKENS must be positive, got 0", "IdempotencyTTL must be positive, got 0s")
}

func assertSays(tb testing.TB, err error, want ...string) {
	tb.Helper()
	if err == nil {
		tb.Fatalf("no error; want one saying %q", want)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			tb.Errorf("the error does not say %q:\n%v", w, err)
		}
	}
}
