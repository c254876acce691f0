package http

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/taskchat/taskchat/internal/telemetry"
)

// requestInfo is what handlers learn about a request that the access log
// reports: filled in as the request goes, read when it ends.
type requestInfo struct {
	id             string
	userID         string
	conversationID int64
	callID         string // the /mcp call's own id, its audit row's call_id
	authError      string // why a 401 was answered; see auth.Reason
}

type requestInfoKey struct{}

func infoFrom(ctx context.Context) *requestInfo {
	if ri, ok := ctx.Value(requestInfoKey{}).(*requestInfo); ok {
		return ri
	}
	return &requestInfo{}
}

// requestID gives every request an id: the client's X-Request-Id when it
// is short and plain, otherwise a new one. It is echoed in the response.
func requestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-Id")
		if !plainID(id) {
			id = newID()
		}
		w.Header().Set("X-Request-Id", id)
		ctx := context.WithValue(r.Context(), requestInfoKey{}, &requestInfo{id: id})
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// newID is 16 random hex digits.
func newID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func plainID(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// statusWriter remembers the status a handler wrote. It unwraps, so
// http.ResponseController still reaches the connection to flush streams.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// accessLog writes one line per request: its id, method, route, user,
// conversation, status and duration. Never a token, never message text.
// It also hands the request to tel, which times it by route pattern and
// gives it a span (the log line then carries its trace_id).
func accessLog(log *slog.Logger, tel *telemetry.Telemetry) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			r, observed := tel.StartRequest(r)
			sw := &statusWriter{ResponseWriter: w}
			next.ServeHTTP(sw, r)
			took := time.Since(start)
			if tel.Metrics() || tel.Tracing() {
				observed.End(r.Method, routePattern(r), sw.status, took)
			}
			ri := infoFrom(r.Context())
			attrs := []slog.Attr{
				slog.String("request_id", ri.id),
				slog.String("method", r.Method),
				slog.String("path", r.URL.Path),
				slog.Int("status", sw.status),
				slog.Float64("duration_ms", float64(took.Microseconds())/1000),
			}
			if id := observed.TraceID(); id != "" {
				attrs = append(attrs, slog.String("trace_id", id))
			}
			if ri.userID != "" {
				attrs = append(attrs, slog.String("user_id", ri.userID))
			}
			if ri.authError != "" {
				attrs = append(attrs, slog.String("auth_error", ri.authError))
			}
			if ri.conversationID != 0 {
				attrs = append(attrs, slog.Int64("conversation_id", ri.conversationID))
			}
			if ri.callID != "" {
				attrs = append(attrs, slog.String("call_id", ri.callID))
			}
			level := slog.LevelInfo
			if (r.URL.Path == "/healthz" || r.URL.Path == "/readyz") && sw.status == http.StatusOK {
				level = slog.LevelDebug // probes every few seconds would drown the log
			}
			log.LogAttrs(r.Context(), level, "request", attrs...)
		})
	}
}

// routePattern is the pattern of the route that served r, such as
// /api/{user_id}/chat; "" when no route matched.
func routePattern(r *http.Request) string {
	if rc := chi.RouteContext(r.Context()); rc != nil {
		return rc.RoutePattern()
	}
	return ""
}

// recoverer answers a panic with a generic 500 and logs it with its stack.
func recoverer(log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				if v := recover(); v != nil {
					if v == http.ErrAbortHandler {
						panic(v)
					}
					log.ErrorContext(r.Context(), "panic", "request_id", infoFrom(r.Context()).id, "panic", v, "stack", string(debug.Stack()))
					if sw, ok := w.(*statusWriter); ok && sw.status != 0 {
						return // the answer has begun (a stream ends itself); nothing more can be said
					}
					writeProblem(w, apiErr(codeInternal, "Something went wrong on our side."))
				}
			}()
			next.ServeHTTP(w, r)
		})
	}
}

// logUser records the verified user for the access log. It runs after
// requireUser.
func logUser(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		infoFrom(r.Context()).userID = userFrom(r.Context())
		next.ServeHTTP(w, r)
	})
}
