package http

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/rs/cors"
)

// CORSConfig is which web pages of other origins may call the API from a
// browser (CORS, as the Fetch standard defines it). Tokens go in the
// Authorization header and never in a cookie, so no answer ever allows
// credentials: a page gets nothing from the browser that it did not send
// itself.
type CORSConfig struct {
	// AllowedOrigins are origins as browsers write them in Origin
	// (scheme://host[:port], lowercase, without the scheme's default
	// port), or "*" alone for every origin. None turns CORS off: no header
	// is added, and an OPTIONS request is answered as it always was.
	AllowedOrigins []string
	// MaxAge is how long a browser may reuse a preflight's answer for the
	// same URL; at least a second.
	MaxAge time.Duration
}

func (c CORSConfig) validate() error {
	if len(c.AllowedOrigins) > 0 && c.MaxAge < time.Second {
		return fmt.Errorf("http: CORS needs a preflight max age of a second or more, got %s", c.MaxAge)
	}
	return nil
}

// corsMethods are the methods the routes take, HEAD as GET does.
var corsMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodDelete}

// corsRequestHeaders are the headers the API's clients send. A browser
// asks before sending any that the Fetch standard does not deem simple,
// and then sends the request only if they are all here.
var corsRequestHeaders = []string{
	"Authorization",   // the bearer token
	"Content-Type",    // application/json, which is not simple
	"Accept",          // text/event-stream; simple unless longer than 128 bytes
	"Idempotency-Key", // a turn sent again is answered, not run again
	"X-Request-Id",    // the client's own id, echoed back and logged
	// A client that resumes a stream (fetch-event-source) sends the id of
	// the last event it read. The API ignores it: the turn is sent again,
	// and its Idempotency-Key replays it.
	"Last-Event-ID",
	// MCP's Streamable HTTP clients send these. /mcp is stateless and
	// never gives a session id, so a client sends one only if it kept it
	// from elsewhere, and the SDK ignores it. Mcp-Method and Mcp-Name
	// repeat the message's method and tool (2026-07-28); no tool of ours
	// asks for the Mcp-Param-* headers.
	"Mcp-Protocol-Version", "Mcp-Session-Id", "Mcp-Method", "Mcp-Name",
	// W3C Trace Context: the server continues a caller's trace, and a page
	// traced by OpenTelemetry's fetch instrumentation sends both.
	"Traceparent", "Tracestate",
}

// corsExposedHeaders are the headers of the API's answers a page may read,
// besides those the Fetch standard lets it read anyway (Content-Type,
// Cache-Control and a few more). The rest stay hidden on purpose: the
// page needs neither Allow, nor X-Accel-Buffering, which is meant for a
// proxy. /mcp sends no Mcp-Session-Id, being stateless.
var corsExposedHeaders = []string{
	"Retry-After",                   // how long a 429 asks to wait
	"WWW-Authenticate",              // why a 401, and where /mcp's token comes from
	"X-Request-Id",                  // to quote when reporting a problem
	"Idempotent-Replayed",           // this answer is a turn sent before
	"X-Vercel-Ai-Ui-Message-Stream", // the AI SDK's stream and its version
}

// allowCrossOrigin answers the preflights of the routes a page of an
// allowed origin may call, and lets it read their answers. It runs before
// routing and authentication: a preflight carries no token, is not a
// request of the API, and spends none of a user's limits. Its headers are
// set before the route runs, so every answer carries them, errors and
// streams included. A preflight it refuses (another origin, method or
// header) is answered 204 without them, and the browser then sends
// nothing.
func allowCrossOrigin(cfg CORSConfig) func(http.Handler) http.Handler {
	if len(cfg.AllowedOrigins) == 0 {
		return func(next http.Handler) http.Handler { return next }
	}
	c := cors.New(cors.Options{
		AllowedOrigins: cfg.AllowedOrigins,
		AllowedMethods: corsMethods,
		AllowedHeaders: corsRequestHeaders,
		ExposedHeaders: corsExposedHeaders,
		MaxAge:         int(cfg.MaxAge / time.Second),
	})
	anyOrigin := slices.Contains(cfg.AllowedOrigins, "*")
	return func(next http.Handler) http.Handler {
		withCORS := c.Handler(next)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if crossOriginRoute(r.URL.Path, anyOrigin) {
				withCORS.ServeHTTP(w, r)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// crossOriginRoute reports whether a page of another origin may call the
// route at path: the API, /mcp and its metadata, and the development
// login. Not the chat page and its files, nor the probes, which no page
// needs. The development login gives any user's token to whoever asks, so
// it is opened to the origins listed by name, never to every origin: with
// "*", any web site its developer visits could take tokens from it.
func crossOriginRoute(path string, anyOrigin bool) bool {
	switch path {
	case "/mcp", "/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp":
		return true
	case "/auth/dev/token":
		return !anyOrigin
	}
	return strings.HasPrefix(path, "/api/")
}
