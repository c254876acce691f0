package http

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	mcpauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/taskchat/taskchat/internal/auth"
	"github.com/taskchat/taskchat/internal/limits"
	"github.com/taskchat/taskchat/internal/mcptools"
	"github.com/taskchat/taskchat/internal/tasks"
)

// MCPConfig is how /mcp, the task tools over MCP Streamable HTTP, treats
// its clients.
type MCPConfig struct {
	// Each user's token bucket of /mcp requests.
	RequestsPerMinute float64
	Burst             int
	// Buckets keeps the buckets where every replica takes from them
	// (store.Limits), so that the rate holds across replicas; a request
	// waits for it at most BucketWait, then this replica's own bucket
	// decides. Nil, and only this replica's bucket counts.
	Buckets tasks.RateBuckets
	// BucketWait is that wait; 0 is mcpBucketWait.
	BucketWait time.Duration
	// PublicURL is the server's URL as its clients reach it, such as
	// https://tasks.example.com: the resource /mcp is PublicURL/mcp. ""
	// makes it from each request's Host, over https when the request came
	// over TLS.
	PublicURL string
	// AuthorizationServers are the issuers of the tokens /mcp accepts, as
	// its RFC 9728 metadata lists them; may be empty.
	AuthorizationServers []string
}

func (c MCPConfig) validate() error {
	if c.RequestsPerMinute <= 0 || c.Burst <= 0 {
		return fmt.Errorf("http: the MCP limits must be positive, got %+v", c)
	}
	if c.PublicURL != "" {
		if u, err := url.Parse(c.PublicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return fmt.Errorf("http: the public URL must be an http(s) URL with no query, got %q", c.PublicURL)
		}
	}
	return nil
}

// maxMCPBody bounds one JSON-RPC message; a tool call takes a few hundred
// bytes.
const maxMCPBody = 64 << 10

// mcpBucketWait is how long a request to /mcp waits for the shared
// bucket before this replica's own bucket decides: a database that is slow
// to answer makes the rate a replica's for that while, neither refusing
// every request nor letting all through.
const mcpBucketWait = 250 * time.Millisecond

// mcpFront is what /mcp and its metadata are served with.
type mcpFront struct {
	log      *slog.Logger
	handler  http.Handler // mcptools.NewHTTPHandler, as cmd/server builds it
	rate     tasks.Rate
	shared   tasks.RateBuckets // nil: local only
	wait     time.Duration     // for shared
	local    *limits.LocalBuckets
	resource protectedResource
}

func newMCPFront(log *slog.Logger, handler http.Handler, cfg MCPConfig) *mcpFront {
	r := tasks.Rate{PerMinute: cfg.RequestsPerMinute, Burst: cfg.Burst}
	return &mcpFront{
		log: log, handler: handler,
		rate: r, shared: cfg.Buckets, wait: cmp.Or(cfg.BucketWait, mcpBucketWait), local: limits.NewLocalBuckets(r),
		resource: protectedResource{publicURL: strings.TrimRight(cfg.PublicURL, "/"), authorizationServers: cfg.AuthorizationServers},
	}
}

// take takes a token from the user's bucket of /mcp requests: the shared
// one, or, when that does not answer within f.wait, this replica's. It fails with a *tasks.RateLimitError when the bucket is
// empty.
func (f *mcpFront) take(ctx context.Context, userID string) error {
	if f.shared != nil {
		wait, cancel := context.WithTimeout(ctx, f.wait)
		err := f.shared.TakeToken(wait, userID, tasks.BucketMCP, f.rate)
		cancel()
		if err == nil || errors.Is(err, tasks.ErrRateLimited) {
			return err
		}
		if ctx.Err() == nil { // not a client that left
			f.log.WarnContext(ctx, "the shared MCP rate bucket did not answer; this replica's decides", "error", err)
		}
	}
	return f.local.Take(userID)
}

// handleMCP serves the task tools over MCP to the user of the request's
// bearer token, verified as the API verifies it. Without a valid one the
// 401 points at the resource's metadata (RFC 9728 §5.1). Each request
// spends one of the user's request tokens and carries one JSON-RPC message.
// The user is the token's and nobody else's: nothing in the body can name
// another.
func handleMCP(log *slog.Logger, v *auth.Verifier, f *mcpFront) http.Handler {
	// The SDK's middleware hands the user to the SDK (mcpauth.TokenInfo),
	// which binds each request to that user's server. requireUser has
	// verified the token already, exp included.
	toSDK := mcpauth.RequireBearerToken(verifiedUser, &mcpauth.RequireBearerTokenOptions{AllowMissingExpiration: true})(f.handler)
	serve := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var re *tasks.RateLimitError
		if err := f.take(r.Context(), userFrom(r.Context())); errors.As(err, &re) {
			writeProblem(w, rateLimited(re, "MCP requests"))
			return
		}
		if err := oneMessage(w, r); err != nil {
			writeError(w, r, log, err)
			return
		}
		// The call's audit row takes an id of the server's own, never the
		// client's X-Request-Id, which many calls may share: the request's
		// log line pairs the two.
		ri := infoFrom(r.Context())
		ri.callID = "mcp-" + newID()
		toSDK.ServeHTTP(w, r.WithContext(mcptools.WithCallID(r.Context(), ri.callID)))
	})
	authenticated := requireUser(v)(logUser(serve))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		authenticated.ServeHTTP(&challengeWriter{ResponseWriter: w, param: `resource_metadata="` + f.resource.metadataURL(r) + `"`}, r)
	})
}

// verifiedUser is the mcpauth.TokenVerifier of a request requireUser let
// through: its user, with no second verification of the token.
func verifiedUser(ctx context.Context, _ string, _ *http.Request) (*mcpauth.TokenInfo, error) {
	userID := userFrom(ctx)
	if userID == "" {
		return nil, mcpauth.ErrInvalidToken
	}
	return &mcpauth.TokenInfo{UserID: userID}, nil
}

// oneMessage checks the body, and puts it back for the MCP handler: JSON
// of at most maxMCPBody bytes, and not a JSON-RPC batch. MCP dropped
// batches in 2025-06-18; refusing them keeps a request one message, so
// that the budget of requests is a budget of tool calls.
func oneMessage(w http.ResponseWriter, r *http.Request) error {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return apiErr(codeUnsupportedMediaType, "Send the JSON-RPC message as application/json.")
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxMCPBody))
	if err != nil {
		return decodeError(err, maxMCPBody)
	}
	if trimmed := bytes.TrimLeft(body, " \t\r\n"); len(trimmed) > 0 && trimmed[0] == '[' {
		return apiErr(codeInvalidRequest, "Send one JSON-RPC message per request: batches are not accepted (MCP removed them in 2025-06-18).")
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return nil
}

// challengeWriter adds param to the bearer challenge of a 401. It unwraps,
// so http.ResponseController still reaches the connection.
type challengeWriter struct {
	http.ResponseWriter
	param string
}

func (w *challengeWriter) WriteHeader(code int) {
	if h := w.Header(); code == http.StatusUnauthorized && h.Get("WWW-Authenticate") != "" {
		h.Set("WWW-Authenticate", h.Get("WWW-Authenticate")+", "+w.param)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *challengeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// protectedResource is /mcp as an OAuth 2.0 protected resource (RFC 9728).
type protectedResource struct {
	publicURL            string // without a trailing slash; "" for the request's
	authorizationServers []string
}

// base is the server's URL for r: the configured one, or r's own.
func (p protectedResource) base(r *http.Request) string {
	if p.publicURL != "" {
		return p.publicURL
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// metadataURL is where the metadata of the resource /mcp is: the
// well-known path with the resource's path after it (RFC 9728 §3.1).
func (p protectedResource) metadataURL(r *http.Request) string {
	return p.base(r) + "/.well-known/oauth-protected-resource/mcp"
}

// handleResourceMetadataShow answers the RFC 9728 metadata of /mcp: its
// identifier, the issuers of the tokens it accepts, and that the token goes
// in the Authorization header. It is public, and readable from any origin.
func handleResourceMetadataShow(p protectedResource) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		writeJSON(w, http.StatusOK, &oauthex.ProtectedResourceMetadata{
			Resource:               p.base(r) + "/mcp",
			AuthorizationServers:   p.authorizationServers,
			BearerMethodsSupported: []string{"header"},
			ResourceName:           "taskchat",
		})
	})
}
