package http

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/tasks"
)

// ChatConfig is how chat turns run.
type ChatConfig struct {
	Model         agent.Model
	Prompt        agent.Prompt
	Limits        agent.Limits
	HistoryLimit  int // stored messages replayed to the model
	HistoryTokens int // their estimated token budget

	// Per-user limits of this replica: a token bucket of chat turns
	// (TurnsPerMinute, TurnBurst) and a cap on concurrent streams.
	TurnsPerMinute float64
	TurnBurst      int
	MaxStreams     int

	// How long an Idempotency-Key is kept, how often a stream pings, and
	// how long one event may take to reach a stream's client before the
	// client counts as gone.
	IdempotencyTTL     time.Duration
	PingInterval       time.Duration
	StreamWriteTimeout time.Duration
}

// Defaults for the zero fields of ChatConfig.
const (
	DefaultHistoryLimit   = 50
	DefaultTurnsPerMinute = 30
	DefaultTurnBurst      = 10
	DefaultMaxStreams     = 4
	DefaultIdempotencyTTL = 24 * time.Hour
	DefaultPingInterval   = 15 * time.Second
	DefaultStreamWrite    = 10 * time.Second
)

func (c ChatConfig) withDefaults() ChatConfig {
	if c.HistoryLimit <= 0 {
		c.HistoryLimit = DefaultHistoryLimit
	}
	if c.HistoryTokens <= 0 {
		c.HistoryTokens = agent.DefaultHistoryTokens
	}
	if c.TurnsPerMinute <= 0 {
		c.TurnsPerMinute = DefaultTurnsPerMinute
	}
	if c.TurnBurst <= 0 {
		c.TurnBurst = DefaultTurnBurst
	}
	if c.MaxStreams <= 0 {
		c.MaxStreams = DefaultMaxStreams
	}
	if c.IdempotencyTTL < DefaultIdempotencyTTL {
		c.IdempotencyTTL = DefaultIdempotencyTTL
	}
	if c.PingInterval <= 0 {
		c.PingInterval = DefaultPingInterval
	}
	if c.StreamWriteTimeout <= 0 {
		c.StreamWriteTimeout = DefaultStreamWrite
	}
	c.Limits = c.Limits.WithDefaults()
	return c
}

// Pinger reports whether the database answers; /readyz uses it.
type Pinger interface {
	Ping(ctx context.Context) error
}

// NewServer returns taskchat's HTTP handler. Every dependency is a
// parameter; nothing is read from globals or the environment.
func NewServer(log *slog.Logger, auth *Authenticator, db Pinger, svc *tasks.Service, convs tasks.ConversationStore, chat ChatConfig) http.Handler {
	chat = chat.withDefaults()
	r := chi.NewRouter()
	r.Use(requestID, accessLog(log), recoverer(log))
	r.NotFound(func(w http.ResponseWriter, _ *http.Request) {
		writeProblem(w, errorf(http.StatusNotFound, codeNotFound, "There is no such route."))
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, _ *http.Request) {
		writeProblem(w, errorf(http.StatusMethodNotAllowed, codeMethodNotAllowed, "This route does not take that method."))
	})
	addRoutes(r, log, auth, db, svc, convs, chat)
	return r
}

// addRoutes lists every route of the API; it reads like api/openapi.yaml.
func addRoutes(r chi.Router, log *slog.Logger, auth *Authenticator, db Pinger, svc *tasks.Service, convs tasks.ConversationStore, chat ChatConfig) {
	r.Method(http.MethodGet, "/healthz", handleHealthz())
	r.Method(http.MethodGet, "/readyz", handleReadyz(log, db))
	r.Route("/api/{user_id}", func(r chi.Router) {
		r.Use(auth.RequireUser, logUser, RequirePathUser)
		r.Method(http.MethodPost, "/chat", handleChatCreate(log, svc, convs, chat))
		r.Method(http.MethodGet, "/conversations", handleConversationsList(log, convs))
		r.Method(http.MethodGet, "/conversations/{conversation_id}/messages", handleMessagesList(log, convs))
		r.Method(http.MethodDelete, "/conversations/{conversation_id}", handleConversationDelete(log, convs))
		r.Method(http.MethodGet, "/tasks", handleTasksList(log, svc))
	})
}
