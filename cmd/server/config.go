package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/agent/openai"
	"github.com/taskchat/taskchat/internal/auth"
	"github.com/taskchat/taskchat/internal/gctune"
	"github.com/taskchat/taskchat/internal/mcptools"
	"github.com/taskchat/taskchat/internal/runs"
	"github.com/taskchat/taskchat/internal/store"
)

// config is the server's whole configuration, read from the environment once.
type config struct {
	Addr        string
	DatabaseURL string
	Migrate     bool
	JWTSecret   string
	JWTIssuer   string
	JWTAudience string
	Provider    string // "openai" or "offline"
	OpenAI      openai.Config
	// OfflinePace is how long the offline model waits between the pieces
	// of a reply (OFFLINE_MODEL_PACE): 0, none, but for a person who wants
	// to watch one being written, and resume or stop it, with no real model.
	OfflinePace     time.Duration
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
	IdleTimeout     time.Duration // a kept-alive connection's wait for its next request
	LogLevel        slog.Level
	DevLogin        bool // POST /auth/dev/token: development only
	// MCP over HTTP (/mcp): each user's budget of requests, the server's
	// URL as clients reach it ("" for each request's Host), and the
	// issuers its RFC 9728 metadata names.
	MCPRequestsPerMinute    float64
	MCPBurst                int
	PublicURL               string
	MCPAuthorizationServers []string
	// CORSOrigins are the origins whose web pages may call the API from a
	// browser, as browsers write them, or "*" alone; none for no CORS.
	CORSOrigins []string
	// MetricsAddr serves /metrics on a listener of its own; "" for none.
	MetricsAddr string
	// TracesURL is the OTLP/HTTP endpoint spans are exported to, from the
	// standard OTEL_EXPORTER_OTLP_* variables; "" for no spans.
	TracesURL string
	// DailyTokenBudget is the tokens a user's turns may use a UTC day; 0
	// for no budget.
	DailyTokenBudget int64
	// JWKS is an identity provider's key set: JWT_JWKS_URL, fetched again
	// every JWT_JWKS_REFRESH; the rest of it is fixed (see
	// defaultJWKSRefresh).
	JWKS auth.JWKSConfig

	// MigrateDatabaseURL is where migrations run: PostgreSQL itself, when
	// DatabaseURL goes through a pooler in transaction mode (see
	// store.Migrate); DatabaseURL unless MIGRATE_DATABASE_URL is set.
	MigrateDatabaseURL string
	// Store is how the pool's connections talk to PostgreSQL:
	// DATABASE_PREPARED_STATEMENTS=false behind a pooler that does not
	// keep prepared statements, and DATABASE_PLAN_CACHE_MODE.
	Store store.Settings

	// Retention is RETENTION_DAYS (0: keep everything, the default) and
	// how its passes delete; one runs every RetentionEvery, give or take
	// half of it. See store.Retention.
	Retention      store.RetentionConfig
	RetentionEvery time.Duration

	// ListenDatabaseURL is where the replica's one listening connection
	// goes (LISTEN_DATABASE_URL): PostgreSQL itself, so by default
	// MigrateDatabaseURL, which is DatabaseURL unless a pooler stands
	// between; "" when LISTEN_DATABASE_URL=none, and followers and stops
	// then poll.
	ListenDatabaseURL string
	// MaxRunningTurns is how many turns a user may run at once, on all
	// replicas together (MAX_RUNNING_TURNS_PER_USER).
	MaxRunningTurns int
	// ApprovalTools are the tools whose calls wait for their person
	// (APPROVAL_TOOLS, names separated by commas; none by default), and
	// ApprovalTTL how long such a call waits (APPROVAL_TTL).
	ApprovalTools []string
	ApprovalTTL   time.Duration
	// Runs is how turns' events are written and followed (see runs.Config);
	// Retention.RunsFor is how long they are kept after a turn ends.
	Runs runs.Config

	// GCHeadroom is how far above the live heap the garbage collector's
	// heap goal is set at least (see gctune): GC_HEADROOM_MB, or 0 when
	// GOGC is set, which then rules the collector alone.
	GCHeadroom uint64

	// Not read from the environment; here so that every default has one home.
	IdempotencyTTL     time.Duration
	PingInterval       time.Duration
	StreamWriteTimeout time.Duration
	MaxHeaderBytes     int // a request's headers: a token and then some
	CORSMaxAge         time.Duration
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
	defaultMaxRunning     = 4
	defaultIdempotencyTTL = 24 * time.Hour
	defaultPingInterval   = 15 * time.Second
	defaultStreamWrite    = 10 * time.Second
	defaultShutdown       = 30 * time.Second
	defaultWriteTimeout   = 30 * time.Second
	defaultMaxConnections = 1024
	// An idle kept-alive connection is closed after this: a client that
	// returns later reconnects, at the cost of a handshake.
	defaultIdleTimeout = 30 * time.Second
	// A connection gets this long for a request's headers, from its first
	// byte (or from its opening), and this long for the whole request, its
	// body included; then it is closed, so that a client that sends slowly
	// or not at all holds no slot for long (see limitListener).
	readHeaderTimeout     = 10 * time.Second
	readTimeout           = 30 * time.Second
	defaultMaxHeaderBytes = 16 << 10 // bearer tokens are at most 8 KiB
	defaultTokenTTL       = 24 * time.Hour
	// A browser keeps a preflight's answer this long per page origin and
	// URL (Chromium at most 2 h, Firefox 24 h). Short, because until it
	// runs out a page whose origin was struck off still sends its POSTs
	// and DELETEs, though it can no longer read their answers; and ten
	// minutes already spare a page that chats all but one preflight a URL.
	defaultCORSMaxAge = 10 * time.Minute
	// defaultApprovalTTL is how long a call waits for its person.
	defaultApprovalTTL = 24 * time.Hour
	// A provider's key set is fetched again every 10 minutes (as Auth0's
	// jwks-rsa caches it), so a withdrawn key stops working within that;
	// a token naming an unknown kid fetches it at once, but at most once a
	// minute, so a rotated-in key works within a minute and a flood of
	// made-up kids costs the provider one request a minute. One fetch may
	// take 5 s, and so may the request whose kid caused it.
	defaultJWKSRefresh    = 10 * time.Minute
	minJWKSRefresh        = time.Minute
	jwksUnknownKeyRefresh = time.Minute
	jwksTimeout           = 5 * time.Second
	maxDailyTokenBudget   = 1_000_000_000_000
	maxGCHeadroomMB       = 1 << 20 // 1 TiB
)

// A turn's events wait up to 100 ms to be written together: what a
// follower on another replica lags behind the turn's own stream, and ten
// writes a second at most while a reply streams. Without notifications a
// follower reads, and a replica asks about stops, every half second, so a
// stop ends a turn within a second either way; a stop waits up to 3 s for
// the turn to end before it answers. A run's events are kept 10 minutes
// after its lease ends (the turn's claim, which the turn does not outlive;
// OpenAI keeps a background response's for 10 minutes), for clients that
// resume late; the messages stay the record.
var defaultRuns = runs.Config{FlushEvery: 100 * time.Millisecond, PollEvery: 500 * time.Millisecond, StopWait: 3 * time.Second}

const defaultRunsKeptFor = 10 * time.Minute

// Retention's passes: every 5 minutes or so, each statement deleting at
// most 200 rows (a conversation with its messages counting as one, and
// with no more than 10,000 messages in all but for a longer one alone), at
// least 100 ms apart and never closer than the last one took (see
// store.RetentionConfig). A replica's passes, run one after the other,
// thus use at most one database connection, at most half the time.
const (
	defaultRetentionEvery = 5 * time.Minute
	defaultRetentionBatch = 200
	defaultRetentionPause = 100 * time.Millisecond
	maxRetentionDays      = 36500
)

// An MCP client spends three requests to connect (initialize, its notice,
// tools/list) and one per call: 120 a minute is two calls a second for an
// agent working through a list, and a burst of 30 a connect and a run of
// calls at once.
const (
	defaultMCPRequestsPerMinute = 120
	defaultMCPBurst             = 30
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
	return intIn(e, name, def, lo, hi)
}

// intIn reads an integer from lo to hi, of a type wide enough for them on
// every platform (USER_DAILY_TOKEN_BUDGET's 10^12 is not an int on 32-bit
// ones).
func intIn[T int | int64](e *envReader, name string, def, lo, hi T) T {
	v := e.getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < int64(lo) || n > int64(hi) {
		e.errs = append(e.errs, fmt.Errorf("%s must be an integer from %d to %d, got %q", name, lo, hi, v))
		return def
	}
	return T(n)
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

// oneOf reads one of the words given, the first being the default.
func (e *envReader) oneOf(name string, words ...string) string {
	v := strings.TrimSpace(e.getenv(name))
	if v == "" {
		return words[0]
	}
	if !slices.Contains(words, v) {
		e.errs = append(e.errs, fmt.Errorf("%s must be one of %s, got %q", name, strings.Join(words, ", "), v))
		return words[0]
	}
	return v
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

		MigrateDatabaseURL: e.str("MIGRATE_DATABASE_URL", ""),
		Store: store.Settings{
			NoPreparedStatements: !e.bool("DATABASE_PREPARED_STATEMENTS", true),
			PlanCacheMode:        e.oneOf("DATABASE_PLAN_CACHE_MODE", "force_generic_plan", "auto", "force_custom_plan", store.PlanCacheServer),
		},

		JWTSecret:   getenv("JWT_SECRET"),
		JWTIssuer:   e.str("JWT_ISSUER", ""),
		JWTAudience: e.str("JWT_AUDIENCE", ""),
		JWKS: auth.JWKSConfig{
			URL:               e.str("JWT_JWKS_URL", ""),
			Refresh:           e.duration("JWT_JWKS_REFRESH", defaultJWKSRefresh),
			UnknownKeyRefresh: jwksUnknownKeyRefresh,
			Timeout:           jwksTimeout,
		},
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
		OfflinePace:     e.duration("OFFLINE_MODEL_PACE", 0),
		SystemPrompt:    e.str("SYSTEM_PROMPT_FILE", ""),
		HistoryLimit:    e.int("HISTORY_LIMIT", defaultHistoryLimit, 1, 1000),
		HistoryTokens:   e.int("HISTORY_TOKENS", defaultHistoryTokens, 100, 1_000_000),
		TurnsPerMinute:  e.float("RATE_LIMIT_TURNS_PER_MINUTE", defaultTurnsPerMinute),
		TurnBurst:       e.int("RATE_LIMIT_BURST", defaultTurnBurst, 1, 10_000),
		MaxStreams:      e.int("MAX_STREAMS_PER_USER", defaultMaxStreams, 1, 10_000),
		MaxRunningTurns: e.int("MAX_RUNNING_TURNS_PER_USER", defaultMaxRunning, 1, 10_000),
		ApprovalTTL:     e.duration("APPROVAL_TTL", defaultApprovalTTL),
		Runs:            defaultRuns,
		ShutdownTimeout: e.duration("SHUTDOWN_TIMEOUT", defaultShutdown),
		WriteTimeout:    e.duration("WRITE_TIMEOUT", defaultWriteTimeout),
		MaxConnections:  e.int("MAX_CONNECTIONS", defaultMaxConnections, 1, 1_000_000),
		IdleTimeout:     e.duration("IDLE_TIMEOUT", defaultIdleTimeout),
		DevLogin:        e.bool("DEV_LOGIN", false),
		MetricsAddr:     e.str("METRICS_ADDR", ""),

		DailyTokenBudget: intIn[int64](e, "USER_DAILY_TOKEN_BUDGET", 0, 0, maxDailyTokenBudget),

		MCPRequestsPerMinute: e.float("RATE_LIMIT_MCP_REQUESTS_PER_MINUTE", defaultMCPRequestsPerMinute),
		MCPBurst:             e.int("RATE_LIMIT_MCP_BURST", defaultMCPBurst, 1, 10_000),
		PublicURL:            strings.TrimRight(e.str("PUBLIC_URL", ""), "/"),

		Retention: store.RetentionConfig{
			Days: retentionDays(e), KeyTTL: defaultIdempotencyTTL, RunsFor: defaultRunsKeptFor,
			Batch: defaultRetentionBatch, Pause: defaultRetentionPause,
		},
		RetentionEvery: defaultRetentionEvery,

		IdempotencyTTL:     defaultIdempotencyTTL,
		PingInterval:       defaultPingInterval,
		StreamWriteTimeout: defaultStreamWrite,
		MaxHeaderBytes:     defaultMaxHeaderBytes,
		TokenTTL:           defaultTokenTTL,
		CORSMaxAge:         defaultCORSMaxAge,
	}
	c.Provider = provider(e, c.OpenAI)
	c.GCHeadroom = gcHeadroom(e)
	c.LogLevel = logLevel(e)
	c.MCPAuthorizationServers = authorizationServers(e, c.JWTIssuer)
	c.CORSOrigins = corsOrigins(e)
	c.ApprovalTools = approvalTools(e)
	if c.PublicURL != "" {
		if u, err := url.Parse(c.PublicURL); err != nil || !isHTTPURL(c.PublicURL) || u.RawQuery != "" || u.Fragment != "" {
			e.fail("PUBLIC_URL must be the http(s) URL clients reach the server at, such as https://tasks.example.com, got %q", c.PublicURL)
		}
	}
	c.TracesURL = tracesURL(e)
	if c.MetricsAddr != "" {
		if _, port, err := net.SplitHostPort(c.MetricsAddr); err != nil {
			e.fail("METRICS_ADDR must be host:port, such as :9090 or 127.0.0.1:9090, got %q", c.MetricsAddr)
		} else if c.MetricsAddr == c.Addr && port != "0" {
			e.fail("METRICS_ADDR must differ from ADDR: the metrics are never served on the public port")
		}
	}
	if c.DatabaseURL == "" {
		e.fail("DATABASE_URL is required, for example %s", devDatabaseURL)
	} else if !isPostgresURL(c.DatabaseURL) {
		e.fail("DATABASE_URL must be a postgres:// URL")
	}
	if c.MigrateDatabaseURL == "" {
		c.MigrateDatabaseURL = c.DatabaseURL
	} else if !isPostgresURL(c.MigrateDatabaseURL) {
		e.fail("MIGRATE_DATABASE_URL must be a postgres:// URL that reaches PostgreSQL directly, not through a pooler in transaction mode")
	}
	c.ListenDatabaseURL = listenDatabaseURL(e, c.MigrateDatabaseURL)
	checkAuth(e, c)
	if c.OpenAI.BaseURL != "" {
		if u, err := url.Parse(c.OpenAI.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			e.fail("OPENAI_BASE_URL must be an http(s) URL such as http://localhost:11434/v1, got %q", c.OpenAI.BaseURL)
		}
	}
	return c, errors.Join(e.errs...)
}

// listenDatabaseURL is LISTEN_DATABASE_URL: direct, the URL that reaches
// PostgreSQL directly (MIGRATE_DATABASE_URL, else DATABASE_URL), when
// unset; "" for none.
func listenDatabaseURL(e *envReader, direct string) string {
	switch u := e.str("LISTEN_DATABASE_URL", direct); {
	case strings.EqualFold(u, "none"):
		return ""
	case u != "" && !isPostgresURL(u):
		e.fail("LISTEN_DATABASE_URL must be a postgres:// URL that reaches PostgreSQL directly (LISTEN does not pass a pooler in transaction mode), or none, got %q", u)
		return ""
	default:
		return u
	}
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

// tracesURL is where spans go: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it
// is, or OTEL_EXPORTER_OTLP_ENDPOINT with the signal's path, as the
// OpenTelemetry specification says; "" when neither is set, or when
// OTEL_SDK_DISABLED or OTEL_TRACES_EXPORTER=none turn tracing off.
func tracesURL(e *envReader) string {
	if e.bool("OTEL_SDK_DISABLED", false) || strings.EqualFold(e.str("OTEL_TRACES_EXPORTER", ""), "none") {
		return ""
	}
	u := e.str("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	if base := e.str("OTEL_EXPORTER_OTLP_ENDPOINT", ""); u == "" && base != "" {
		u = strings.TrimRight(base, "/") + "/v1/traces"
	}
	if u == "" {
		return ""
	}
	if p, err := url.Parse(u); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		e.fail("OTEL_EXPORTER_OTLP_ENDPOINT (or _TRACES_ENDPOINT) must be an http(s) URL such as http://collector:4318, got %q", u)
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"} {
		if p := e.str(name, "http/protobuf"); p != "http/protobuf" {
			e.fail("%s must be http/protobuf, the protocol taskchat exports spans with (port 4318), got %q", name, p)
		}
	}
	return u
}

// authorizationServers are the issuers /mcp's metadata names:
// MCP_AUTHORIZATION_SERVERS, URLs separated by commas, or else JWT_ISSUER
// when it is a URL, as an OAuth issuer is (RFC 8414 §2).
func authorizationServers(e *envReader, issuer string) []string {
	v := e.str("MCP_AUTHORIZATION_SERVERS", "")
	if v == "" {
		if isHTTPURL(issuer) {
			return []string{issuer}
		}
		return nil
	}
	var servers []string
	for s := range strings.SplitSeq(v, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		if !isHTTPURL(s) {
			e.fail("MCP_AUTHORIZATION_SERVERS must be http(s) URLs separated by commas, got %q", s)
			continue
		}
		servers = append(servers, s)
	}
	return servers
}

// approvalTools reads APPROVAL_TOOLS: tool names separated by commas, each
// one of the tools there are.
func approvalTools(e *envReader) []string {
	var tools []string
	known := mcptools.ToolNames()
	for s := range strings.SplitSeq(e.str("APPROVAL_TOOLS", ""), ",") {
		switch s = strings.TrimSpace(s); {
		case s == "" || slices.Contains(tools, s):
		case !slices.Contains(known, s):
			e.fail("APPROVAL_TOOLS must be tool names separated by commas, each one of %s; %q is none of them", strings.Join(known, ", "), s)
		default:
			tools = append(tools, s)
		}
	}
	return tools
}

// corsOrigins reads CORS_ALLOWED_ORIGINS: "*" alone, or origins separated
// by commas, each written as a browser writes it in its Origin header so
// that matching it is comparing two strings (see webOrigin).
func corsOrigins(e *envReader) []string {
	v := e.str("CORS_ALLOWED_ORIGINS", "")
	switch v {
	case "":
		return nil
	case "*":
		return []string{v}
	}
	var origins []string
	problems := len(e.errs)
	for s := range strings.SplitSeq(v, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		origin, err := webOrigin(s)
		if err != nil {
			e.fail("CORS_ALLOWED_ORIGINS must be * alone, or origins separated by commas, each scheme://host[:port] "+
				"such as https://app.example.com or http://localhost:5173; %q %v", s, err)
			continue
		}
		origins = append(origins, origin)
	}
	if len(origins) == 0 && len(e.errs) == problems {
		e.fail("CORS_ALLOWED_ORIGINS lists no origin, got %q; leave it unset for none", v)
	}
	return origins
}

// webOrigin is s, an http(s) origin, as browsers serialize it (RFC 6454
// §6.2, the URL standard): scheme and host in lower case, an IP address in
// its shortest form, no port when it is the scheme's default, and no "/"
// after it (a copy from the address bar has one). A path, a query, a user
// or a host a browser would write otherwise is an error: a browser never
// sends such an origin, and the entry would match nothing.
func webOrigin(s string) (string, error) {
	if s == "*" {
		return "", errors.New("is allowed only alone, for every origin")
	}
	u, err := url.Parse(s)
	switch {
	case err != nil || u.Opaque != "" || u.Host == "":
		return "", errors.New("is not an http(s) URL with a host")
	case u.Scheme != "http" && u.Scheme != "https":
		return "", errors.New("is not http or https")
	case u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return "", errors.New("has more than a scheme, host and port")
	}
	host, err := originHost(u.Hostname())
	if err != nil {
		return "", err
	}
	origin := u.Scheme + "://" + host
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return "", errors.New("has a port out of 1-65535")
		}
		if defaultPort := map[string]int{"http": 80, "https": 443}[u.Scheme]; n != defaultPort {
			origin += ":" + strconv.Itoa(n)
		}
	}
	return origin, nil
}

// originHost is host as browsers write it in an origin.
func originHost(host string) (string, error) {
	if ip := net.ParseIP(host); ip != nil {
		if ip.To4() != nil {
			return ip.String(), nil
		}
		return "[" + ip.String() + "]", nil
	}
	host = strings.ToLower(host)
	for _, c := range []byte(host) {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
			return "", errors.New("has a host that is not letters, digits, '-', '_' and '.' (write an international name in its xn-- form, as browsers send it)")
		}
	}
	return host, nil
}

// isPostgresURL reports whether s is a postgres:// or postgresql:// URL.
func isPostgresURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql")
}

// isHTTPURL reports whether s is an absolute http(s) URL.
func isHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// retentionDays reads RETENTION_DAYS, whole days; 0, the default, keeps
// everything.
func retentionDays(e *envReader) int {
	v := strings.TrimSpace(e.getenv("RETENTION_DAYS"))
	if v == "" {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > maxRetentionDays {
		e.fail("RETENTION_DAYS must be a whole number of days from 1 to %d, or 0 to keep everything, got %q", maxRetentionDays, v)
		return 0
	}
	return n
}

// gcHeadroom reads GC_HEADROOM_MB, unless GOGC is set: an operator who
// chose a GOGC gets exactly that.
func gcHeadroom(e *envReader) uint64 {
	mb := strings.TrimSpace(e.getenv("GC_HEADROOM_MB"))
	if strings.TrimSpace(e.getenv("GOGC")) != "" {
		if mb != "" {
			e.fail("set GOGC or GC_HEADROOM_MB, not both: with GOGC set, the garbage collector follows it alone")
		}
		return 0
	}
	return uint64(e.int("GC_HEADROOM_MB", gctune.DefaultHeadroom>>20, 0, maxGCHeadroomMB)) << 20
}

func logLevel(e *envReader) slog.Level {
	var l slog.Level
	if err := l.UnmarshalText([]byte(e.str("LOG_LEVEL", "info"))); err != nil {
		e.fail("LOG_LEVEL must be debug, info, warn or error, got %q", e.getenv("LOG_LEVEL"))
		return slog.LevelInfo
	}
	return l
}

// checkAuth says what is wrong with the tokens c would trust: a secret
// too weak to sign with, neither a secret nor a JWKS, a JWKS without the
// issuer and audience that say a token is for us, or a development login
// with no secret to sign its tokens with.
func checkAuth(e *envReader, c config) {
	switch {
	case c.JWKS.URL == "" || c.JWTSecret != "":
		if err := checkJWTSecret(c.JWTSecret); err != nil {
			if c.JWKS.URL == "" && c.JWTSecret == "" {
				err = fmt.Errorf("%w; or set JWT_JWKS_URL to an identity provider's key set", err)
			}
			e.errs = append(e.errs, err)
		}
	case c.DevLogin:
		e.fail("DEV_LOGIN signs HS256 tokens and needs JWT_SECRET (at least 32 bytes; generate one with: openssl rand -hex 32)")
	}
	if c.JWKS.URL == "" {
		return
	}
	if err := auth.CheckJWKSURL(c.JWKS.URL); err != nil {
		e.errs = append(e.errs, fromEnv(authVars, err))
	}
	if c.JWTIssuer == "" || c.JWTAudience == "" {
		e.fail("JWT_JWKS_URL needs JWT_ISSUER and JWT_AUDIENCE, the iss and aud of the provider's tokens (Better Auth's base URL, such as https://app.example.com, for both by default)")
	}
	if c.JWKS.Refresh < minJWKSRefresh {
		e.fail("JWT_JWKS_REFRESH must be at least %s, got %s", minJWKSRefresh, c.JWKS.Refresh)
	}
}

// checkJWTSecret says what is wrong with a signing secret, in the words
// both the server and the token command use.
func checkJWTSecret(secret string) error {
	if len(secret) < auth.MinSecretBytes {
		return fmt.Errorf("JWT_SECRET is required and must be at least %d bytes (got %d); generate one with: openssl rand -hex 32", auth.MinSecretBytes, len(secret))
	}
	return nil
}
