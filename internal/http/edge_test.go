package http

// These tests try to break the edge of the API, as issue 10 did: clients
// that never read, pages without end, tampered cursors, user ids that need
// escaping, tokens refused without a word why, and 405s without Allow.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/taskchat/taskchat/internal/agent/offline"
	"github.com/taskchat/taskchat/internal/auth"
	"github.com/taskchat/taskchat/internal/auth/authtest"
	"github.com/taskchat/taskchat/internal/logtest"
	"github.com/taskchat/taskchat/internal/store/storetest"
)

// A client that asks for a large answer and never reads it holds the
// handler only until the write deadline; without one, it held it forever.
func TestWriteDeadlineFreesAHandlerWhoseClientDoesNotRead(t *testing.T) {
	t.Parallel()
	written := make(chan error, 1)
	big := make([]byte, 1<<20)
	h := writeDeadline(100 * time.Millisecond)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		for range 64 { // 64 MiB: more than any socket buffer holds
			if _, err := w.Write(big); err != nil {
				written <- err
				return
			}
		}
		written <- nil
	}))
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)

	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.(*net.TCPConn).SetReadBuffer(4 << 10)
	if _, err := io.WriteString(conn, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-written:
		if err == nil {
			t.Fatal("64 MiB reached a client that reads nothing")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the handler is still writing to a client that does not read")
	}
}

// The deadline of one answer must not outlive it: the next request on the
// same kept-alive connection, long after, is answered in full, including
// what the server writes before that answer's own deadline is set (the
// "100 Continue" a client that sends Expect is owed). net/http clears the
// deadline after each answer; this keeps us from relying on it unawares.
func TestWriteDeadlineDoesNotOutliveItsAnswer(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New(), func(c *serverConfig) { c.api.WriteTimeout = 50 * time.Millisecond })
	user := storetest.UserID(t)
	if r := s.do(t, call{method: "GET", path: "/healthz"}); r.status != 200 {
		t.Fatalf("healthz = %d", r.status)
	}
	time.Sleep(150 * time.Millisecond)

	// A POST without an Idempotency-Key is not retried by the client, so
	// a write that failed on the old deadline would show as an error here.
	reused := false
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused },
	})
	req, _ := http.NewRequestWithContext(ctx, "POST", s.URL+"/api/"+user+"/chat", strings.NewReader(chatBody(0, "Add a task to buy milk")))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+mustToken(t, user))
	req.Header.Set("Expect", "100-continue")
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatalf("a turn on a connection whose last answer's deadline passed: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 || !reused {
		t.Fatalf("turn = %d %s, %v (connection reused: %v)", resp.StatusCode, body, err, reused)
	}
}

// A conversation longer than a page is read a page at a time, oldest
// first, following next_cursor until it is null.
func TestMessagesArePaginated(t *testing.T) {
	t.Parallel()
	const route = "/api/{user_id}/conversations/{conversation_id}/messages"
	s := mustServer(t, offline.New())
	user := storetest.UserID(t)
	tok := mustToken(t, user)
	var convID int64
	for _, msg := range []string{"Add a task to buy milk", "Show me all my tasks", "Add a task to pay bills"} {
		var out struct {
			ConversationID int64 `json:"conversation_id"`
		}
		if err := json.Unmarshal(s.chat(t, user, convID, msg).body, &out); err != nil {
			t.Fatal(err)
		}
		convID = out.ConversationID
	}
	messages := fmt.Sprintf("/api/%s/conversations/%d/messages", user, convID)
	get := func(t *testing.T, query string) messagePage {
		t.Helper()
		r := s.do(t, call{method: "GET", path: messages + query, token: tok})
		if r.status != 200 {
			t.Fatalf("GET %s = %d %s", query, r.status, r.body)
		}
		mustMatchSpec(t, "GET", route, r.status, r.header, r.body)
		var p messagePage
		if err := json.Unmarshal(r.body, &p); err != nil {
			t.Fatal(err)
		}
		return p
	}

	whole := get(t, "")
	if len(whole.Messages) != 6 || whole.NextCursor != nil {
		t.Fatalf("the default page holds %d messages, next %v; want all 6 and null", len(whole.Messages), whole.NextCursor)
	}
	var ids []int64
	query, pages := "?limit=2", 0
	for ; ; pages++ {
		p := get(t, query)
		ids = append(ids, p.ids()...)
		if p.NextCursor == nil {
			break
		}
		query = "?limit=2&cursor=" + url.QueryEscape(*p.NextCursor)
	}
	if want := fmt.Sprint(whole.ids()); fmt.Sprint(ids) != want || pages != 2 {
		t.Fatalf("pages of 2 gave %v in %d pages, want %s in 3", ids, pages+1, want)
	}
	if p := get(t, "?limit=500"); len(p.Messages) != 6 {
		t.Fatalf("limit=500 gave %d messages", len(p.Messages))
	}
	for _, q := range []string{"limit=0", "limit=501", "limit=ten", "cursor=nope", "cursor=LTMwMDAwMDAwMDAwMDAwMDAwMC4x"} {
		t.Run(q, func(t *testing.T) {
			r := s.do(t, call{method: "GET", path: messages + "?" + q, token: tok})
			mustProblem(t, r, 400, "invalid_request")
			mustMatchSpec(t, "GET", route, r.status, r.header, r.body)
		})
	}
}

// messagePage is what a test reads of a page of messages.
type messagePage struct {
	Messages []struct {
		ID int64 `json:"id"`
	} `json:"messages"`
	NextCursor *string `json:"next_cursor"`
}

func (p messagePage) ids() []int64 {
	ids := make([]int64, len(p.Messages))
	for i, m := range p.Messages {
		ids[i] = m.ID
	}
	return ids
}

// Every cursor the service did not write is the client's mistake: 400,
// never the 500 a tampered timestamp once caused.
func TestTamperedConversationCursorIsInvalid(t *testing.T) {
	t.Parallel()
	const route = "/api/{user_id}/conversations"
	s := mustServer(t, offline.New())
	user := storetest.UserID(t)
	tok := mustToken(t, user)
	for _, c := range []string{
		"LTMwMDAwMDAwMDAwMDAwMDAwMC4x", // "-300000000000000000.1"
		"OTIyMzM3MjAzNjg1NDc3NTgwNy4x", // "9223372036854775807.1"
		"MTcwMDAwMDAwMDAwMDAwMC4w",     // id 0
		"bTE",                          // a message cursor
		"%00", "====", "a.b",
	} {
		t.Run(c, func(t *testing.T) {
			r := s.do(t, call{method: "GET", path: "/api/" + user + "/conversations?cursor=" + url.QueryEscape(c), token: tok})
			mustProblem(t, r, 400, "invalid_request")
			mustMatchSpec(t, "GET", route, r.status, r.header, r.body)
		})
	}
	if strings.Contains(s.logs.String(), `"level":"ERROR"`) {
		t.Fatalf("a bad cursor was logged as an error:\n%s", s.logs)
	}
}

// A user whose id needs escaping in a path reaches their own data, however
// the client escapes it, and only theirs.
func TestPathUserIsComparedDecoded(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New())
	base := storetest.UserID(t)
	for _, tc := range []struct{ user, path string }{
		{base + "/b", url.PathEscape(base + "/b")},
		{base + "-josé", base + "-jos%c3%a9"},
		{base + "-josé", base + "-jos%C3%A9"},
		{base + "-josé", base + "-josé"},
		{base + ";b,c", base + ";b,c"},
		{base + ";b,c", url.PathEscape(base + ";b,c")},
		{base + " d", base + "%20d"},
		{base + "%2Fb", base + "%252Fb"},
		{base + "-100%", base + "-100%25"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			tok := mustToken(t, tc.user)
			for _, p := range []string{"/tasks", "/conversations"} {
				if r := s.do(t, call{method: "GET", path: "/api/" + tc.path + p, token: tok}); r.status != 200 {
					t.Fatalf("GET /api/%s%s as %q = %d %s", tc.path, p, tc.user, r.status, r.body)
				}
			}
			r := s.do(t, call{method: "POST", path: "/api/" + tc.path + "/chat", token: tok, body: chatBody(0, "Add a task to call mom")})
			if r.status != 200 {
				t.Fatalf("chat as %q = %d %s", tc.user, r.status, r.body)
			}
		})
	}
	t.Run("an escaped slash is not a literal one", func(t *testing.T) {
		// The id "<base>%2Fb" is not "<base>/b", in either direction.
		mustProblem(t, s.do(t, call{method: "GET", path: "/api/" + base + "%2Fb/tasks", token: mustToken(t, base+"%2Fb")}), 403, "forbidden")
		mustProblem(t, s.do(t, call{method: "GET", path: "/api/" + base + "%252Fb/tasks", token: mustToken(t, base+"/b")}), 403, "forbidden")
	})
	t.Run("each sees only their own tasks", func(t *testing.T) {
		r := s.do(t, call{method: "GET", path: "/api/" + url.PathEscape(base+"/b") + "/tasks", token: mustToken(t, base+"/b")})
		var out struct {
			Tasks []json.RawMessage `json:"tasks"`
		}
		if err := json.Unmarshal(r.body, &out); err != nil || len(out.Tasks) != 1 {
			t.Fatalf("tasks of %q = %s, want the one its chat added", base+"/b", r.body)
		}
	})
}

// A 401's access-log line says why the token was refused, in a word an
// operator can act on, and never holds the token.
func TestUnauthorizedLogsItsReason(t *testing.T) {
	t.Parallel()
	now := time.Now()
	cfg := auth.Config{Secret: authtest.Secret, Issuer: "https://id.taskchat.dev", Audience: "taskchat-api"}
	good := func(sub string, start time.Time, ttl time.Duration) string {
		return mustMint(t, authtest.Secret, sub, start, ttl, cfg.Issuer, cfg.Audience)
	}
	claims := func(extra jwt.MapClaims) jwt.MapClaims {
		c := jwt.MapClaims{"sub": "alice", "iss": cfg.Issuer, "aud": cfg.Audience, "exp": now.Add(time.Hour).Unix()}
		for k, v := range extra {
			c[k] = v
		}
		return c
	}
	otherSecret := []byte("ffffffffffffffffffffffffffffffff")
	cases := []struct {
		name, authorization, reason string
	}{
		{"no header", "", auth.ReasonMissing},
		{"another scheme", "Basic YWxpY2U6c2VjcmV0", auth.ReasonMissing},
		{"an empty token", "Bearer ", auth.ReasonEmpty},
		{"an oversized token", "Bearer " + strings.Repeat("A", auth.MaxTokenBytes+1), auth.ReasonOversized},
		{"not a JWT", "Bearer not-a-jwt", auth.ReasonMalformed},
		{"another secret", "Bearer " + mustMint(t, otherSecret, "alice", now, time.Hour, cfg.Issuer, cfg.Audience), auth.ReasonBadSignature},
		{"a tampered signature", "Bearer " + authtest.WithFlippedSignature(good("alice", now, time.Hour)), auth.ReasonBadSignature},
		{"alg none", "Bearer " + authtest.AlgNone(t, "alice", now.Add(time.Hour)), auth.ReasonWrongAlgorithm},
		{"HS512", "Bearer " + authtest.Sign(t, jwt.SigningMethodHS512, claims(nil), authtest.Secret), auth.ReasonWrongAlgorithm},
		{"expired", "Bearer " + good("alice", now.Add(-2*time.Hour), time.Hour), auth.ReasonExpired},
		{"not yet valid", "Bearer " + good("alice", now.Add(time.Hour), time.Hour), auth.ReasonNotYetValid},
		{"no exp", "Bearer " + authtest.Sign(t, jwt.SigningMethodHS256, jwt.MapClaims{"sub": "alice", "iss": cfg.Issuer, "aud": cfg.Audience}, authtest.Secret), auth.ReasonMissingExp},
		{"another issuer", "Bearer " + mustMint(t, authtest.Secret, "alice", now, time.Hour, "https://evil.example", cfg.Audience), auth.ReasonWrongIssuer},
		{"another audience", "Bearer " + mustMint(t, authtest.Secret, "alice", now, time.Hour, cfg.Issuer, "billing"), auth.ReasonWrongAudience},
		{"no sub", "Bearer " + authtest.Sign(t, jwt.SigningMethodHS256, claims(jwt.MapClaims{"sub": ""}), authtest.Secret), auth.ReasonBadSubject},
	}
	logs := &logtest.Buffer{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	v := mustVerifier(t, cfg)
	h := requestID(accessLog(log, nil)(requireUser(v)(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))))
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id := fmt.Sprintf("reason-%d", len(logs.String()))
			req, _ := http.NewRequest("GET", srv.URL+"/api/alice/tasks", nil)
			req.Header.Set("X-Request-Id", id)
			if tc.authorization != "" {
				req.Header.Set("Authorization", tc.authorization)
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			line := logLine(t, logs.String(), id)
			if resp.StatusCode != 401 || line["level"] != "INFO" || line["status"] != float64(401) || line["auth_error"] != tc.reason {
				t.Fatalf("got %d, logged %v; want 401 logged at INFO with auth_error %q", resp.StatusCode, line, tc.reason)
			}
			if _, token, _ := strings.Cut(tc.authorization, " "); len(token) > 8 && strings.Contains(logs.String(), token[:len(token)/2]) {
				t.Fatalf("the log holds the token:\n%s", logs)
			}
		})
	}
}

// logLine returns the access-log line of the request with id.
func logLine(tb testing.TB, logs, id string) map[string]any {
	tb.Helper()
	sc := bufio.NewScanner(strings.NewReader(logs))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line map[string]any
		if json.Unmarshal(sc.Bytes(), &line) == nil && line["msg"] == "request" && line["request_id"] == id {
			return line
		}
	}
	tb.Fatalf("no access-log line for request %s in:\n%s", id, logs)
	return nil
}

// A 405 lists the methods the path does take (RFC 9110 §15.5.6).
func TestMethodNotAllowedSaysWhatIsAllowed(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New())
	user := storetest.UserID(t) + "/x"
	tok := mustToken(t, user)
	api := "/api/" + url.PathEscape(user)
	for _, tc := range []struct{ method, path, allow string }{
		{"POST", "/healthz", "GET, HEAD"},
		{"BREW", "/readyz", "GET, HEAD"},
		{"GET", api + "/chat", "POST"},
		{"PUT", api + "/tasks", "GET, HEAD"},
		{"PUT", api + "/conversations/1", "GET, HEAD, DELETE"},
		{"GET", api + "/conversations/1/compact", "POST"},
		{"DELETE", api + "/conversations/1/messages", "GET, HEAD"},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			r := s.do(t, call{method: tc.method, path: tc.path, token: tok})
			mustProblem(t, r, 405, "method_not_allowed")
			if got := r.header.Values("Allow"); strings.Join(got, ", ") != tc.allow {
				t.Fatalf("Allow = %q, want %q", got, tc.allow)
			}
		})
	}
}

// HEAD is answered wherever GET is, with GET's status and headers and no
// body (RFC 9110 §9.3.2).
func TestHeadIsAnsweredWhereverGetIs(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New())
	user := storetest.UserID(t)
	for _, path := range []string{"/", "/healthz", "/api/" + user + "/tasks"} {
		t.Run(path, func(t *testing.T) {
			get := s.do(t, call{method: "GET", path: path, token: mustToken(t, user)})
			head := s.do(t, call{method: "HEAD", path: path, token: mustToken(t, user)})
			if head.status != get.status || head.status != 200 || len(head.body) != 0 ||
				head.header.Get("Content-Type") != get.header.Get("Content-Type") {
				t.Fatalf("HEAD %s = %d %q (%d bytes), GET = %d %q", path, head.status, head.header.Get("Content-Type"), len(head.body), get.status, get.header.Get("Content-Type"))
			}
		})
	}
}
