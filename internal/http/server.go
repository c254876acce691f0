package http

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/taskchat/taskchat/internal/auth"
	"github.com/taskchat/taskchat/internal/chat"
	"github.com/taskchat/taskchat/internal/http/turnstream"
	"github.com/taskchat/taskchat/internal/limits"
	"github.com/taskchat/taskchat/internal/runs"
	"github.com/taskchat/taskchat/internal/tasks"
	"github.com/taskchat/taskchat/internal/telemetry"
	"github.com/taskchat/taskchat/internal/web"
)

// Config is how the API treats its clients. Every field is required: the
// defaults live with the rest of the configuration, in cmd/server.
type Config struct {
	// MaxStreams caps each user's open streams, on every replica together:
	// each holds a lease in Streams. (The rate of turns is the engine's:
	// chat.Config.TurnRate.)
	MaxStreams int
	// Streams keeps the leases of every replica's open streams
	// (store.Limits), which MaxStreams counts.
	Streams tasks.StreamLeases
	Stream  StreamConfig
	// WriteTimeout is how long any answer but a stream may take to reach
	// its client, from its first byte (see writeDeadline).
	WriteTimeout time.Duration
	// DevLogin, when enabled, serves POST /auth/dev/token; see DevLogin.
	DevLogin DevLogin
	// Telemetry observes every request (its duration by route, method and
	// status, and a span) and the open streams; nil observes nothing. Its
	// metrics are served elsewhere, never by this handler.
	Telemetry *telemetry.Telemetry
	// MCP is how /mcp serves the task tools to outside MCP clients.
	MCP MCPConfig
	// CORS is which pages of other origins may call the API; see
	// allowCrossOrigin.
	CORS CORSConfig
}

func (c Config) validate() error {
	if c.MaxStreams <= 0 || c.Streams == nil || c.Stream.PingInterval <= 0 || c.Stream.WriteTimeout <= 0 || c.WriteTimeout <= 0 {
		return fmt.Errorf("http: every setting must be positive, got %+v", c)
	}
	if c.DevLogin.Enabled && c.DevLogin.TTL <= 0 {
		return fmt.Errorf("http: the development login needs a positive token lifetime, got %s", c.DevLogin.TTL)
	}
	if err := c.CORS.validate(); err != nil {
		return err
	}
	return c.MCP.validate()
}

// StreamConfig is how often a turn's stream pings, and how long one event
// may take to reach its client before the client counts as gone; the
// streams themselves are turnstream's.
type StreamConfig = turnstream.Config

// Pinger reports whether the database answers; /readyz uses it.
type Pinger interface {
	Ping(ctx context.Context) error
}

// NewServer returns taskchat's HTTP handler. Every dependency is a
// parameter; nothing is read from globals or the environment. verifier
// says which user each request acts for; mcp serves the task tools over
// MCP (mcptools.NewHTTPHandler), and NewServer puts it behind the same
// authentication and limits as the API, at /mcp. A Config with a zero
// setting is a programming error, and panics.
func NewServer(log *slog.Logger, verifier *auth.Verifier, db Pinger, svc *tasks.Service, convs tasks.ConversationStore,
	engine *chat.Engine, hub *runs.Hub, mcp http.Handler, cfg Config) http.Handler {
	if err := cfg.validate(); err != nil {
		panic(err)
	}
	r := chi.NewRouter()
	// HEAD is answered wherever GET is (RFC 9110 §9.3.2), by the GET handler.
	r.Use(writeDeadline(cfg.WriteTimeout), requestID, accessLog(log, cfg.Telemetry), recoverer(log), allowCrossOrigin(cfg.CORS), middleware.GetHead)
	r.NotFound(func(w http.ResponseWriter, _ *http.Request) {
		writeProblem(w, apiErr(codeNotFound, "There is no such route."))
	})
	r.MethodNotAllowed(handleMethodNotAllowed(r))
	leases := limits.NewLeases(cfg.Streams, cfg.MaxStreams, log)
	cfg.Telemetry.ObserveStreams(leases.OpenStreams)
	addRoutes(r, log, verifier, db, svc, convs, engine, hub, leases, cfg.Stream, cfg.DevLogin, newMCPFront(log, mcp, cfg.MCP))
	return r
}

// addRoutes lists every route of the API; it reads like api/openapi.yaml.
func addRoutes(r chi.Router, log *slog.Logger, verifier *auth.Verifier, db Pinger, svc *tasks.Service, convs tasks.ConversationStore,
	engine *chat.Engine, hub *runs.Hub, leases *limits.Leases, stream StreamConfig, dev DevLogin, mcp *mcpFront) {
	r.Method(http.MethodGet, "/healthz", handleHealthz())
	r.Method(http.MethodGet, "/readyz", handleReadyz(log, db))
	page := web.Embedded()
	r.Method(http.MethodGet, "/", handlePageShow(page, dev))
	r.Method(http.MethodGet, "/app/{file}", handlePageAsset(page))
	if dev.Enabled {
		r.Method(http.MethodPost, "/auth/dev/token", handleDevTokenCreate(verifier, dev.TTL))
	}
	r.Method(http.MethodPost, "/mcp", handleMCP(log, verifier, mcp))
	r.Method(http.MethodGet, "/.well-known/oauth-protected-resource", handleResourceMetadataShow(mcp.resource))
	r.Method(http.MethodGet, "/.well-known/oauth-protected-resource/mcp", handleResourceMetadataShow(mcp.resource))
	r.Route("/api/{user_id}", func(r chi.Router) {
		r.Use(requireUser(verifier), logUser, requirePathUser)
		r.Method(http.MethodPost, "/chat", handleChatCreate(log, engine, hub, leases, stream))
		r.Method(http.MethodPost, "/chat/ui", handleChatUICreate(log, engine, hub, leases, stream))
		r.Method(http.MethodGet, "/chat/ui/{chat_id}/stream", handleChatUIStreamShow(log, hub, leases, stream))
		r.Method(http.MethodGet, "/conversations", handleConversationsList(log, convs))
		r.Method(http.MethodGet, "/conversations/{conversation_id}", handleConversationShow(log, convs))
		r.Method(http.MethodGet, "/conversations/{conversation_id}/messages", handleMessagesList(log, convs))
		r.Method(http.MethodPost, "/conversations/{conversation_id}/compact", handleConversationCompact(log, engine))
		r.Method(http.MethodGet, "/conversations/{conversation_id}/stream", handleConversationStreamShow(log, hub, leases, stream))
		r.Method(http.MethodPost, "/conversations/{conversation_id}/stop", handleConversationStop(log, hub))
		r.Method(http.MethodDelete, "/conversations/{conversation_id}", handleConversationDelete(log, convs))
		r.Method(http.MethodGet, "/tasks", handleTasksList(log, svc))
		r.Method(http.MethodGet, "/approvals", handleApprovalsList(log, engine.Approvals()))
		r.Method(http.MethodGet, "/approvals/{approval_id}", handleApprovalShow(log, engine.Approvals()))
		r.Method(http.MethodPost, "/approvals/{approval_id}", handleApprovalDecide(log, engine, hub, leases, stream))
		r.Method(http.MethodGet, "/usage", handleUsageShow(log, engine))
		r.Method(http.MethodGet, "/settings", handleSettingsShow(log, svc))
		r.Method(http.MethodPut, "/settings", handleSettingsUpdate(log, svc))
	})
}
