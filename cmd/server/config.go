package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/agent/openai"
)

// config is the server's whole configuration, read from the environment once.
type config struct {
	Addr            string
	DatabaseURL     string
	Migrate         bool
	JWTSecret       string
	JWTIssuer       string
	JWTAudience     string
	Provider        string // "openai" or "offline"
	OpenAI          openai.Config
	Limits          agent.Limits
	SystemPrompt    string // a file; "" for the built-in prompt
	HistoryLimit    int
	HistoryTokens   int
	TurnsPerMinute  float64
	TurnBurst       int
	MaxStreams      int
	ShutdownTimeout time.Duration
	WriteTimeout    time.Duration // of every answer but a stream
	MaxConnections  int           // open client connections per replica
	LogLevel        slog.Level
	DevLogin        bool // POST /auth/dev/token: development only

	// Not read from the environment; here so that every default has one home.
	IdempotencyTTL     time.Duration
	PingInterval       time.Duration
	StreamWriteTimeout time.Duration
	MaxHeaderBytes     int // a request's headers: a token and then some
	// The lifetime of development tokens: the token command's default,
	// and that of /auth/dev/token's.
	TokenTTL time.Duration
}

// The defaults of every setting the service has. Packages take their
// settings whole and default nothing themselves.
var (
	defaultLimits = agent.Limits{
		MaxModelCalls: 10,
		MaxToolCalls:  20,
		MaxTokens:     100_000,
		TurnTimeout:   2 * time.Minute,
		ToolTimeout:   30 * time.Second,
	}
)

const (
	defaultHistoryLimit   = 50   // stored messages replayed to the model
	defaultHistoryTokens  = 8000 // their estimated token budget
	defaultTurnsPerMinute = 30
	defaultTurnBurst      = 10
	defaultMaxStreams     = 4
	defaultIdempotencyTTL = 24 * time.Hour
	defaultPingInterval   = 15 * time.Second
	defaultStreamWrite    = 10 * time.Second
	defaultShutdown       = 30 * time.Second
	defaultWriteTimeout   = 30 * time.Second
	defaultMaxConnections = 1024
	defaultMaxHeaderBytes = 16 << 10 // bearer tokens are at most 8 KiB
	defaultTokenTTL       = 24 * time.Hour
)

// devDatabaseURL is a local PostgreSQL as Debian's package or the
// postgres image (with trust auth) sets it up; `server dev` uses it.
const devDatabaseURL = "postgres://postgres@127.0.0.1:5432/taskchat?sslmode=disable"

// devDefaults are the settings `server dev` gives those the environment
// leaves unset, on top of the defaults above; the JWT secret comes from a
// file (dev.go). The address is loopback only: with DEV_LOGIN on, anyone
// who reaches the server can act as any user.
var devDefaults = map[string]string{
	"ADDR":         "127.0.0.1:8080",
	"DATABASE_URL": devDatabaseURL,
	"DEV_LOGIN":    "true",
}

// envReader reads typed settings and collects every problem, so a bad
// configuration is reported whole rather than one mistake per restart.
type envReader struct {
	getenv func(string) string
	errs   []error
}

func (e *envReader) str(name, def string) string {
	if v := strings.TrimSpace(e.getenv(name)); v != "" {
		return v
	}
	return def
}

func (e *envReader) int(name string, def, lo, hi int) int {
	v := e.getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < lo || n > hi {
		e.errs = append(e.errs, fmt.Errorf("%s must be an integer from %d to %d, got %q", name, lo, hi, v))
		return def
	}
	return n
}

func (e *envReader) float(name string, def float64) float64 {
	v := e.getenv(name)
	if v == "" {
		return def
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || f <= 0 {
		e.errs = append(e.errs, fmt.Errorf("%s must be a positive number, got %q", name, v))
		return def
	}
	return f
}

func (e *envReader) duration(name string, def time.Duration) time.Duration {
	v := e.getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(strings.TrimSpace(v))
	if err != nil || d <= 0 {
		e.errs = append(e.errs, fmt.Errorf("%s must be a positive duration such as 30s or 2m, got %q", name, v))
		return def
	}
	return d
}

func (e *envReader) bool(name string, def bool) bool {
	v := e.getenv(name)
	if v == "" {
		return def
	}
	b, err := strconv.ParseBool(strings.TrimSpace(v))
	if err != nil {
		e.errs = append(e.errs, fmt.Errorf("%s must be true or false, got %q", name, v))
		return def
	}
	return b
}

func (e *envReader) fail(format string, args ...any) {
	e.errs = append(e.errs, fmt.Errorf(format, args...))
}

// loadConfig reads and validates the configuration, naming every problem.
func loadConfig(getenv func(string) string) (config, error) {
	e := &envReader{getenv: getenv}
	d := defaultLimits
	c := config{
		Addr:        e.str("ADDR", ":8080"),
		DatabaseURL: e.str("DATABASE_URL", ""),
		Migrate:     e.bool("MIGRATE", true),
		JWTSecret:   getenv("JWT_SECRET"),
		JWTIssuer:   e.str("JWT_ISSUER", ""),
		JWTAudience: e.str("JWT_AUDIENCE", ""),
		OpenAI: openai.Config{
			APIKey:  e.str("OPENAI_API_KEY", ""),
			BaseURL: e.str("OPENAI_BASE_URL", ""),
			Model:   e.str("OPENAI_MODEL", "gpt-4o-mini"),
		},
		Limits: agent.Limits{
			MaxModelCalls: e.int("AGENT_MAX_MODEL_CALLS", d.MaxModelCalls, 1, 100),
			MaxToolCalls:  e.int("AGENT_MAX_TOOL_CALLS", d.MaxToolCalls, 1, 1000),
			MaxTokens:     e.int("AGENT_MAX_TOKENS", d.MaxTokens, 100, 10_000_000),
			TurnTimeout:   e.duration("AGENT_TURN_TIMEOUT", d.TurnTimeout),
			ToolTimeout:   e.duration("AGENT_TOOL_TIMEOUT", d.ToolTimeout),
		},
		SystemPrompt:    e.str("SYSTEM_PROMPT_FILE", ""),
		HistoryLimit:    e.int("HISTORY_LIMIT", defaultHistoryLimit, 1, 1000),
		HistoryTokens:   e.int("HISTORY_TOKENS", defaultHistoryTokens, 100, 1_000_000),
		TurnsPerMinute:  e.float("RATE_LIMIT_TURNS_PER_MINUTE", defaultTurnsPerMinute),
		TurnBurst:       e.int("RATE_LIMIT_BURST", defaultTurnBurst, 1, 10_000),
		MaxStreams:      e.int("MAX_STREAMS_PER_USER", defaultMaxStreams, 1, 10_000),
		ShutdownTimeout: e.duration("SHUTDOWN_TIMEOUT", defaultShutdown),
		WriteTimeout:    e.duration("WRITE_TIMEOUT", defaultWriteTimeout),
		MaxConnections:  e.int("MAX_CONNECTIONS", defaultMaxConnections, 1, 1_000_000),
		DevLogin:        e.bool("DEV_LOGIN", false),

		IdempotencyTTL:     defaultIdempotencyTTL,
		PingInterval:       defaultPingInterval,
		StreamWriteTimeout: defaultStreamWrite,
		MaxHeaderBytes:     defaultMaxHeaderBytes,
		TokenTTL:           defaultTokenTTL,
	}
	c.Provider = provider(e, c.OpenAI)
	c.LogLevel = logLevel(e)
	if c.DatabaseURL == "" {
		e.fail("DATABASE_URL is required, for example %s", devDatabaseURL)
	} else if u, err := url.Parse(c.DatabaseURL); err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		e.fail("DATABASE_URL must be a postgres:// URL")
	}
	if err := checkJWTSecret(c.JWTSecret); err != nil {
		e.errs = append(e.errs, err)
	}
	if c.OpenAI.BaseURL != "" {
		if u, err := url.Parse(c.OpenAI.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			e.fail("OPENAI_BASE_URL must be an http(s) URL such as http://localhost:11434/v1, got %q", c.OpenAI.BaseURL)
		}
	}
	return c, errors.Join(e.errs...)
}

// provider picks the model: LLM_PROVIDER when set, otherwise OpenAI when it
// is configured and the offline model when it is not.
func provider(e *envReader, oc openai.Config) string {
	switch p := strings.ToLower(e.str("LLM_PROVIDER", "")); p {
	case "":
		if oc.APIKey != "" || oc.BaseURL != "" {
			return "openai"
		}
		return "offline"
	case "offline":
		return p
	case "openai":
		if oc.APIKey == "" && oc.BaseURL == "" {
			e.fail("LLM_PROVIDER=openai needs OPENAI_API_KEY (for OpenAI) or OPENAI_BASE_URL (for a compatible server)")
		}
		return p
	default:
		e.fail("LLM_PROVIDER must be openai or offline, got %q", p)
		return "offline"
	}
}

func logLevel(e *envReader) slog.Level {
	var l slog.Level
	if err := l.UnmarshalText([]byte(e.str("LOG_LEVEL", "info"))); err != nil {
		e.fail("LOG_LEVEL must be debug, info, warn or error, got %q", e.getenv("LOG_LEVEL"))
		return slog.LevelInfo
	}
	return l
}

// checkJWTSecret says what is wrong with a signing secret, in the words
// both the server and the token command use.
func checkJWTSecret(secret string) error {
	if len(secret) < 32 {
		return fmt.Errorf("JWT_SECRET is required and must be at least 32 bytes (got %d); generate one with: openssl rand -hex 32", len(secret))
	}
	return nil
}
