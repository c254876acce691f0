package http

// CORS, as a browser exercises it: preflights (OPTIONS with
// Access-Control-Request-Method) and the requests of a page of another
// origin, which carry Origin. cors_browser_test.go runs the same in a
// real browser.

import (
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/taskchat/taskchat/internal/agent/offline"
	"github.com/taskchat/taskchat/internal/auth"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/tasks"
)

// appOrigin is a web app's origin that the tests' servers allow.
const appOrigin = "http://app.test:5173"

// exposedHeaders is what a page may read of an answer besides what it
// always may.
const exposedHeaders = "Retry-After, WWW-Authenticate, X-Request-Id, Idempotent-Replayed, X-Vercel-Ai-Ui-Message-Stream"

// withCORS lets pages of origins call the server.
func withCORS(origins ...string) func(*serverConfig) {
	return func(c *serverConfig) { c.api.CORS = CORSConfig{AllowedOrigins: origins, MaxAge: 10 * time.Minute} }
}

// fromOrigin is the header of a request that a page of origin sends.
func fromOrigin(origin string) http.Header { return http.Header{"Origin": {origin}} }

// preflight asks what a browser asks before a page of origin sends method
// to path with the request headers named (lowercase, sorted, as browsers
// list them).
func (s *testServer) preflight(tb testing.TB, path, origin, method, headers string) reply {
	tb.Helper()
	h := http.Header{"Origin": {origin}, "Access-Control-Request-Method": {method}}
	if headers != "" {
		h.Set("Access-Control-Request-Headers", headers)
	}
	return s.do(tb, call{method: "OPTIONS", path: path, header: h})
}

// mustExpiredToken is a token for user that expired an hour ago, such as
// a page holds when it must refresh it.
func mustExpiredToken(tb testing.TB, user string) string {
	tb.Helper()
	tok, err := auth.MintToken(testSecret, user, time.Hour, "", "", time.Now().Add(-2*time.Hour))
	if err != nil {
		tb.Fatal(err)
	}
	return tok
}

// mustBeReadable fails unless a page of origin may read r, and its
// exposed headers, with no credentials of the browser's involved.
func mustBeReadable(tb testing.TB, r reply, origin string) {
	tb.Helper()
	h := r.header
	if got := h.Values("Access-Control-Allow-Origin"); len(got) != 1 || got[0] != origin {
		tb.Fatalf("%d: Access-Control-Allow-Origin %q, want %s once", r.status, got, origin)
	}
	if got := h.Get("Access-Control-Expose-Headers"); !strings.EqualFold(got, exposedHeaders) {
		tb.Fatalf("%d: Access-Control-Expose-Headers %q, want %q", r.status, got, exposedHeaders)
	}
	mustVaryOnOrigin(tb, r)
	if got := h.Get("Access-Control-Allow-Credentials"); got != "" {
		tb.Fatalf("%d: Access-Control-Allow-Credentials %q: tokens are bearer tokens, never credentials", r.status, got)
	}
}

// mustVaryOnOrigin fails unless r says that its CORS headers depend on
// Origin, so that a cache does not give one origin's answer to another.
func mustVaryOnOrigin(tb testing.TB, r reply) {
	tb.Helper()
	if !slices.ContainsFunc(r.header.Values("Vary"), func(v string) bool { return strings.Contains(v, "Origin") }) {
		tb.Fatalf("%d: Vary %q lacks Origin", r.status, r.header.Values("Vary"))
	}
}

// mustHaveNoCORS fails if r carries any CORS header.
func mustHaveNoCORS(tb testing.TB, r reply) {
	tb.Helper()
	for name := range r.header {
		if strings.HasPrefix(name, "Access-Control-") {
			tb.Fatalf("%d: %s %q, want no CORS header", r.status, name, r.header.Values(name))
		}
	}
}

func TestCORSOffByDefault(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New(), withDevLogin)
	user := storetest.UserID(t)
	t.Run("answers carry no CORS header and no Vary", func(t *testing.T) {
		r := s.do(t, call{method: "GET", path: "/api/" + user + "/tasks", token: mustToken(t, user), header: fromOrigin(appOrigin)})
		mustHaveNoCORS(t, r)
		if r.status != 200 || r.header.Get("Vary") != "" {
			t.Fatalf("%d, Vary %q", r.status, r.header.Get("Vary"))
		}
	})
	t.Run("preflights are answered as any OPTIONS request", func(t *testing.T) {
		for _, c := range []struct {
			path, code string
		}{
			{"/api/" + user + "/chat", codeUnauthorized}, // the token is checked first
			{"/mcp", codeMethodNotAllowed},
			{"/auth/dev/token", codeMethodNotAllowed},
		} {
			r := s.preflight(t, c.path, appOrigin, "POST", "authorization,content-type")
			mustHaveNoCORS(t, r)
			mustProblem(t, r, codeStatus[c.code], c.code)
		}
	})
}

func TestCORSPreflight(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New(), withCORS(appOrigin, "https://app.example.com"), withDevLogin)
	api := "/api/" + storetest.UserID(t)
	const mcpHeaders = "accept,authorization,content-type,last-event-id,mcp-method,mcp-name,mcp-protocol-version,mcp-session-id"
	t.Run("allowed: every route a page calls, with the headers its clients send", func(t *testing.T) {
		for _, c := range []struct {
			path, method, headers string
		}{
			{api + "/chat", "POST", "accept,authorization,content-type,idempotency-key,last-event-id,x-request-id"},
			{api + "/chat/ui", "POST", "authorization,content-type,traceparent,tracestate"},
			{api + "/chat/ui", "POST", "authorization,content-type,idempotency-key"},
			{api + "/conversations", "GET", "authorization"},
			{api + "/conversations/7/messages", "GET", "authorization"},
			{api + "/conversations/7", "DELETE", "authorization"},
			{api + "/tasks", "HEAD", "authorization"},
			{api + "/usage", "GET", "authorization,x-request-id"},
			{api + "/settings", "PUT", "authorization,content-type"},
			{"/mcp", "POST", mcpHeaders},
			{"/.well-known/oauth-protected-resource/mcp", "GET", "mcp-protocol-version"},
			{"/auth/dev/token", "POST", "content-type"},
			{api + "/tasks", "GET", ""}, // a GET with simple headers only
		} {
			r := s.preflight(t, c.path, "https://app.example.com", c.method, c.headers)
			// No token, yet no 401: a preflight never reaches the routes.
			if r.status != 204 || len(r.body) != 0 {
				t.Fatalf("%s %s: %d %s, want 204 and nothing", c.method, c.path, r.status, r.body)
			}
			h := r.header
			if h.Get("Access-Control-Allow-Origin") != "https://app.example.com" || h.Get("Access-Control-Allow-Methods") != c.method ||
				h.Get("Access-Control-Allow-Headers") != c.headers || h.Get("Access-Control-Max-Age") != "600" || h.Get("Access-Control-Allow-Credentials") != "" {
				t.Fatalf("%s %s: %v", c.method, c.path, h)
			}
			mustVaryOnOrigin(t, r)
		}
	})
	t.Run("refused: the browser then sends nothing", func(t *testing.T) {
		for _, c := range []struct {
			name, path, origin, method, headers string
		}{
			{"another origin", api + "/chat", "https://evil.example.com", "POST", "authorization,content-type"},
			{"another port", api + "/chat", "http://app.test:5174", "POST", "authorization,content-type"},
			{"another scheme", api + "/chat", "https://app.test:5173", "POST", "authorization,content-type"},
			{"a sandboxed page", api + "/chat", "null", "POST", "authorization,content-type"},
			{"a method no route takes", api + "/tasks", appOrigin, "PATCH", "authorization"},
			{"another header", api + "/chat", appOrigin, "POST", "authorization,content-type,x-api-key"},
		} {
			r := s.preflight(t, c.path, c.origin, c.method, c.headers)
			if r.status != 204 {
				t.Errorf("%s: %d %s, want 204", c.name, r.status, r.body)
			}
			mustHaveNoCORS(t, r)
		}
	})
	t.Run("an OPTIONS request that is no preflight is answered as ever", func(t *testing.T) {
		r := s.do(t, call{method: "OPTIONS", path: "/mcp", header: fromOrigin(appOrigin)})
		mustProblem(t, r, 405, codeMethodNotAllowed)
		mustBeReadable(t, r, appOrigin)
		if r.header.Get("Allow") != "POST" {
			t.Fatalf("Allow %q", r.header.Get("Allow"))
		}
		r = s.do(t, call{method: "OPTIONS", path: api + "/tasks", header: fromOrigin(appOrigin)})
		mustProblem(t, r, 401, codeUnauthorized)
	})
}

// A preflight carries no token and is not a request of the API: it spends
// nothing of a user's limits, and shows in the access log as what it is.
func TestCORSPreflightsAreNotRequests(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New(), withCORS(appOrigin), func(c *serverConfig) {
		c.chat.TurnRate = tasks.Rate{PerMinute: 1, Burst: 1}
		c.api.MCP.RequestsPerMinute, c.api.MCP.Burst = 1, 1
	})
	user := storetest.UserID(t)
	tok := mustToken(t, user)
	for range 5 {
		for _, path := range []string{"/api/" + user + "/chat", "/mcp"} {
			if r := s.preflight(t, path, appOrigin, "POST", "authorization,content-type,idempotency-key"); r.status != 204 {
				t.Fatalf("preflight of %s: %d", path, r.status)
			}
		}
	}
	if r := s.do(t, call{method: "POST", path: "/api/" + user + "/chat", token: tok, body: chatBody(0, "Add a task to call mum"),
		header: http.Header{"Origin": {appOrigin}, "Idempotency-Key": {"after-preflights"}}}); r.status != 200 || r.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("the turn after five preflights: %d %s", r.status, r.body)
	}
	if r := s.mcpPost(t, tok, listToolsMessage, fromOrigin(appOrigin)); r.status != 200 {
		t.Fatalf("the MCP request after five preflights: %d %s", r.status, r.body)
	}
	if logs := s.logs.String(); !strings.Contains(logs, `"method":"OPTIONS","path":"/mcp","status":204`) {
		t.Fatalf("the access log lacks the preflights:\n%s", logs)
	}
}

// Every answer to a page of an allowed origin is one it can read: errors
// (a 401 most of all, to refresh its token), limits and streams too.
func TestCORSAnswersAreReadable(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New(), withCORS(appOrigin), withDevLogin, func(c *serverConfig) {
		c.api.MCP.RequestsPerMinute, c.api.MCP.Burst = 1, 1
	})
	user := storetest.UserID(t)
	tok := mustToken(t, user)
	api := "/api/" + user
	origin := fromOrigin(appOrigin)
	streamed := http.Header{"Origin": {appOrigin}, "Accept": {"text/event-stream"}}
	for _, c := range []struct {
		name   string
		call   call
		status int
		code   string // of a problem
	}{
		{"a list", call{method: "GET", path: api + "/tasks", token: tok}, 200, ""},
		{"a JSON turn", call{method: "POST", path: api + "/chat", token: tok, body: chatBody(0, "Add a task to water the plants")}, 200, ""},
		{"a streamed turn", call{method: "POST", path: api + "/chat", token: tok, body: chatBody(0, "What is on my list?"), header: streamed}, 200, ""},
		{"an AI SDK stream", call{method: "POST", path: api + "/chat/ui", token: tok, body: uiBody("cors-1", "submit-message", "", "Add a task to buy bread")}, 200, ""},
		{"a HEAD", call{method: "HEAD", path: api + "/usage", token: tok}, 200, ""},
		{"MCP", call{method: "POST", path: "/mcp", token: tok, body: listToolsMessage, header: http.Header{"Accept": {"application/json, text/event-stream"}}}, 200, ""},
		{"MCP past its limit", call{method: "POST", path: "/mcp", token: tok, body: listToolsMessage, header: http.Header{"Accept": {"application/json, text/event-stream"}}}, 429, codeRateLimited},
		{"no token", call{method: "GET", path: api + "/tasks"}, 401, codeUnauthorized},
		{"an expired token", call{method: "GET", path: api + "/tasks", token: mustExpiredToken(t, user)}, 401, codeUnauthorized},
		{"MCP without a token", call{method: "POST", path: "/mcp", body: listToolsMessage}, 401, codeUnauthorized},
		{"another user's path", call{method: "GET", path: "/api/someone-else/tasks", token: tok}, 403, codeForbidden},
		{"no such conversation", call{method: "DELETE", path: api + "/conversations/999999999", token: tok}, 404, codeNotFound},
		{"no such route", call{method: "GET", path: api + "/nothing", token: tok}, 404, codeNotFound},
		{"a method the route does not take", call{method: "DELETE", path: api + "/tasks", token: tok}, 405, codeMethodNotAllowed},
		{"a bad body", call{method: "POST", path: api + "/chat", token: tok, body: `{"message":`}, 400, codeInvalidRequest},
		{"a development token", call{method: "POST", path: "/auth/dev/token", body: `{"user_id":"ada"}`}, 200, ""},
		{"a development token asked under another name", call{method: "POST", path: "/auth/dev/token", body: `{"user_id":"ada"}`, host: "rebound.example:8080"}, 421, codeMisdirected},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.call.header = merged(origin, c.call.header)
			r := s.do(t, c.call)
			if c.code != "" {
				mustProblem(t, r, c.status, c.code)
			} else if r.status != c.status {
				t.Fatalf("%d %s, want %d", r.status, r.body, c.status)
			}
			mustBeReadable(t, r, appOrigin)
		})
	}
	t.Run("a turn past the user's limit", func(t *testing.T) {
		limited := mustServer(t, offline.New(), withCORS(appOrigin), func(c *serverConfig) { c.chat.TurnRate = tasks.Rate{PerMinute: 1, Burst: 1} })
		send := call{method: "POST", path: api + "/chat", token: tok, body: chatBody(0, "Add a task to rest"), header: origin}
		limited.do(t, send)
		r := limited.do(t, send)
		mustProblem(t, r, 429, codeRateLimited)
		mustBeReadable(t, r, appOrigin)
	})
	t.Run("a page of another origin is answered, and cannot read it", func(t *testing.T) {
		r := s.do(t, call{method: "GET", path: api + "/tasks", token: tok, header: fromOrigin("https://evil.example.com")})
		mustHaveNoCORS(t, r)
		mustVaryOnOrigin(t, r)
	})
	t.Run("a client that is no page gets no CORS header", func(t *testing.T) {
		r := s.do(t, call{method: "GET", path: api + "/tasks", token: tok})
		mustHaveNoCORS(t, r)
		mustVaryOnOrigin(t, r) // a cache in between may see both
	})
}

// merged is a copy of a with b's values added.
func merged(a, b http.Header) http.Header {
	h := a.Clone()
	maps.Copy(h, b)
	return h
}

// The chat page, its files and the probes are for the server's own origin
// and for orchestrators: no page of another needs them.
func TestCORSOnlyWhereAPageNeedsIt(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New(), withCORS(appOrigin))
	for _, path := range []string{"/", "/healthz", "/readyz"} {
		r := s.do(t, call{method: "GET", path: path, header: fromOrigin(appOrigin)})
		mustHaveNoCORS(t, r)
		if r.status != 200 || r.header.Get("Vary") != "" {
			t.Errorf("GET %s: %d, Vary %q", path, r.status, r.header.Get("Vary"))
		}
		r = s.preflight(t, path, appOrigin, "GET", "authorization")
		mustHaveNoCORS(t, r)
		mustProblem(t, r, 405, codeMethodNotAllowed)
	}
}

// "*" opens the API to every page: a page still needs a token to do
// anything. Not the development login, which hands out tokens.
func TestCORSAnyOrigin(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New(), withCORS("*"), withDevLogin)
	user := storetest.UserID(t)
	r := s.preflight(t, "/api/"+user+"/chat", "https://anyone.example", "POST", "authorization,content-type")
	if r.status != 204 || r.header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("preflight: %d %v", r.status, r.header)
	}
	r = s.do(t, call{method: "GET", path: "/api/" + user + "/tasks", header: fromOrigin("https://anyone.example")})
	mustProblem(t, r, 401, codeUnauthorized)
	mustBeReadable(t, r, "*")

	r = s.preflight(t, "/auth/dev/token", "https://anyone.example", "POST", "content-type")
	mustHaveNoCORS(t, r)
	mustProblem(t, r, 405, codeMethodNotAllowed)
	r = s.do(t, call{method: "POST", path: "/auth/dev/token", body: `{"user_id":"ada"}`, header: fromOrigin("https://anyone.example")})
	mustHaveNoCORS(t, r)
	if r.status != 200 {
		t.Fatalf("the development login itself: %d %s", r.status, r.body)
	}
}

// The metadata of /mcp is public and readable from any origin, whatever
// CORS_ALLOWED_ORIGINS says, with one Access-Control-Allow-Origin.
func TestCORSResourceMetadataIsPublic(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		origins []string
	}{
		{"CORS off", nil},
		{"one origin allowed", []string{appOrigin}},
		{"every origin allowed", []string{"*"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := mustServer(t, offline.New(), withCORS(c.origins...))
			for _, origin := range []string{appOrigin, "https://inspector.example"} {
				r := s.do(t, call{method: "GET", path: "/.well-known/oauth-protected-resource/mcp", header: fromOrigin(origin)})
				if got := r.header.Values("Access-Control-Allow-Origin"); r.status != 200 || len(got) != 1 || got[0] != "*" {
					t.Fatalf("from %s: %d, Access-Control-Allow-Origin %q; want * once", origin, r.status, got)
				}
			}
		})
	}
}

// Every header the API answers with is one a page may read, or one it has
// no use for; and every header exposed is one the API sends.
func TestCORSExposesWhatTheAPISends(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New(), withCORS(appOrigin), withDevLogin, func(c *serverConfig) {
		c.api.MCP.RequestsPerMinute, c.api.MCP.Burst = 1, 4
	})
	user := storetest.UserID(t)
	tok := mustToken(t, user)
	api := "/api/" + user
	key := http.Header{"Idempotency-Key": {"exposed-1"}}
	mcp := http.Header{"Accept": {"application/json, text/event-stream"}}
	calls := []call{
		{method: "POST", path: api + "/chat", token: tok, body: chatBody(0, "Add a task to buy stamps"), header: key},
		{method: "POST", path: api + "/chat", token: tok, body: chatBody(0, "Add a task to buy stamps"), header: key},
		{method: "POST", path: api + "/chat", token: tok, body: chatBody(0, "Show my tasks"), header: http.Header{"Accept": {"text/event-stream"}}},
		{method: "POST", path: api + "/chat/ui", token: tok, body: uiBody("exposed-1", "submit-message", "", "Add a task to post them")},
		{method: "GET", path: api + "/conversations", token: tok},
		{method: "GET", path: api + "/tasks", token: tok},
		{method: "HEAD", path: api + "/usage", token: tok},
		{method: "GET", path: api + "/tasks"},
		{method: "GET", path: api + "/tasks", token: mustExpiredToken(t, user)},
		{method: "GET", path: "/api/someone-else/tasks", token: tok},
		{method: "DELETE", path: api + "/conversations/999999999", token: tok},
		{method: "DELETE", path: api + "/tasks", token: tok},
		{method: "POST", path: api + "/chat", token: tok, body: "message=hi", header: http.Header{"Content-Type": {"text/plain"}}},
		{method: "POST", path: "/mcp", token: tok, header: mcp, body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"cors-test","version":"1.0.0"}}}`},
		{method: "POST", path: "/mcp", token: tok, header: mcp, body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{method: "POST", path: "/mcp", token: tok, header: mcp, body: `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_tasks","arguments":{}}}`},
		{method: "POST", path: "/mcp", token: tok, header: mcp, body: listToolsMessage},
		{method: "POST", path: "/mcp", token: tok, header: mcp, body: listToolsMessage},
		{method: "POST", path: "/mcp", header: mcp, body: listToolsMessage},
		{method: "GET", path: "/mcp", token: tok},
		{method: "GET", path: "/.well-known/oauth-protected-resource/mcp"},
		{method: "POST", path: "/auth/dev/token", body: `{"user_id":"ada"}`},
		{method: "POST", path: "/auth/dev/token", body: `{"user_id":"ada"}`, host: "rebound.example"},
	}
	// What a page may always read (the Fetch standard's CORS-safelisted
	// response headers), and what it has no use for.
	readable := map[string]bool{"Cache-Control": true, "Content-Language": true, "Content-Length": true, "Content-Type": true, "Expires": true, "Last-Modified": true, "Pragma": true}
	unneeded := map[string]bool{"Date": true, "Vary": true, "Allow": true, "X-Accel-Buffering": true, "X-Content-Type-Options": true, "Connection": true}
	exposed := map[string]bool{}
	for name := range strings.SplitSeq(exposedHeaders, ", ") {
		exposed[http.CanonicalHeaderKey(name)] = false
	}
	statuses := map[int]bool{}
	for _, c := range calls {
		c.header = merged(fromOrigin(appOrigin), c.header)
		r := s.do(t, c)
		statuses[r.status] = true
		for name := range r.header {
			switch _, ok := exposed[name]; {
			case ok:
				exposed[name] = true
			case !readable[name] && !unneeded[name] && !strings.HasPrefix(name, "Access-Control-"):
				t.Errorf("%s %s answers %d with %s, which a page cannot read: expose it, or say why it needs not", c.method, c.path, r.status, name)
			}
		}
	}
	for name, sent := range exposed {
		if !sent {
			t.Errorf("%s is exposed, and no answer here carries it", name)
		}
	}
	for _, status := range []int{200, 202, 401, 403, 404, 405, 415, 421, 429} {
		if !statuses[status] {
			t.Errorf("no answer was a %d; the calls no longer cover what they meant to", status)
		}
	}
}
