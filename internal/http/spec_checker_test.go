package http

// These tests check the checker: mustMatchSpec lets right responses through
// and refuses each kind of wrong one, and the answers no handler test checks
// (streams, replays, auth and query errors, rate limits, an unready
// database) match the contract too.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/agent/agenttest"
	"github.com/taskchat/taskchat/internal/agent/offline"
	"github.com/taskchat/taskchat/internal/auth"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/tasks"
)

// TestSpecCatchesWrongResponses shows that mustMatchSpec lets good answers
// through and catches each kind of mistake.
func TestSpecCatchesWrongResponses(t *testing.T) {
	t.Parallel()
	const (
		chat     = "/api/{user_id}/chat"
		followed = "/api/{user_id}/conversations/{conversation_id}/stream"
		toolCall = `{"id":"c1","tool":"add_task","arguments":{"title":"x"},"result":{"task_id":1,"status":"created","title":"x"},"is_error":false}`
		turn     = `{"conversation_id":1,"response":"Done.","tool_calls":[` + toolCall + `]}`
		problem  = `{"type":"https://taskchat.dev/problems/invalid-request","title":"Bad Request","status":400,"code":"invalid_request","detail":"message is required","errors":[{"field":"message","message":"is required"}]}`
	)
	event := func(id int, name, data string) string {
		return fmt.Sprintf("id: 7-%d\nevent: %s\ndata: %s\n\n", id, name, data)
	}
	stream := event(1, "start", `{"conversation_id":1}`) + ": ping\n\n" +
		event(2, "tool_call", `{"id":"c1","tool":"add_task","arguments":{"title":"x"}}`) +
		event(3, "tool_result", `{"id":"c1","tool":"add_task","result":{"task_id":1},"is_error":false}`) +
		event(4, "delta", `{"text":"Done."}`) + event(5, "done", turn)
	headers := func(kv ...string) http.Header {
		h := http.Header{"X-Request-Id": {"abc123"}}
		for i := 0; i < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	asJSON := headers("Content-Type", "application/json", "Cache-Control", "no-store")
	asProblem := headers("Content-Type", "application/problem+json", "Cache-Control", "no-store")
	asStream := headers("Content-Type", "text/event-stream", "Cache-Control", "no-cache", "X-Accel-Buffering", "no")
	cases := []struct {
		name, method, route string
		status              int
		header              http.Header
		body                string
		wantErr             string // "" when the response is right
	}{
		{"a JSON turn", "POST", chat, 200, asJSON, turn, ""},
		{"a turn whose arguments were not JSON", "POST", chat, 200, asJSON,
			`{"conversation_id":1,"response":"","tool_calls":[{"id":"c","tool":"add_task","arguments":"{\"title\":","result":{"error":"bad"},"is_error":true}]}`, ""},
		{"a replayed turn", "POST", chat, 200, headers("Content-Type", "application/json", "Cache-Control", "no-store", "Idempotent-Replayed", "true"), turn, ""},
		{"a streamed turn", "POST", chat, 200, asStream, stream, ""},
		{"a streamed turn that failed", "POST", chat, 200, asStream,
			event(1, "start", `{"conversation_id":1}`) + event(2, "error", `{"code":"llm_unavailable","message":"Try again."}`), ""},
		{"a replayed streamed turn", "POST", chat, 200, asStream,
			"id: 0-1\nevent: start\ndata: {\"conversation_id\":1,\"turn_id\":1}\n\nid: 0-2\nevent: done\ndata: " + turn + "\n\n", ""},
		{"a stream resumed after an event", "GET", followed, 200, asStream, event(4, "delta", `{"text":"Done."}`) + event(5, "done", turn), ""},
		{"a stopped turn", "POST", chat, 200, asStream, event(1, "start", `{"conversation_id":1,"turn_id":3}`) +
			event(2, "done", `{"conversation_id":1,"response":"","tool_calls":[],"interrupted":true,"stopped":true}`), ""},
		{"a stop", "POST", "/api/{user_id}/conversations/{conversation_id}/stop", 202, asJSON, `{"conversation_id":1,"turn_id":3,"ended":true}`, ""},
		{"nothing to follow", "GET", followed, 204, headers(), "", ""},
		{"a problem", "POST", chat, 400, asProblem, problem, ""},
		{"a deletion", "DELETE", "/api/{user_id}/conversations/{conversation_id}", 204, headers(), "", ""},

		{"a turn without response", "POST", chat, 200, asJSON, `{"conversation_id":1,"tool_calls":[]}`, `missing properties: ["response"]`},
		{"a turn with a string id", "POST", chat, 200, asJSON, `{"conversation_id":"1","response":"","tool_calls":[]}`, `want "integer"`},
		{"a tool call without is_error", "POST", chat, 200, asJSON, strings.Replace(turn, `,"is_error":false`, "", 1), `missing properties: ["is_error"]`},
		{"an undocumented member", "POST", chat, 200, asJSON, strings.Replace(turn, `{"conversation_id":1,`, `{"conversation_id":1,"user_id":"u",`, 1), `unexpected additional properties ["user_id"]`},
		{"a body that is not JSON", "GET", "/healthz", 200, asJSON, `ok`, "not JSON"},
		{"a problem without code", "POST", chat, 400, asProblem, strings.Replace(problem, `"code":"invalid_request",`, "", 1), `missing properties: ["code"]`},
		{"a problem with another status's code", "POST", chat, 400, asProblem, strings.Replace(problem, `"invalid_request"`, `"not_found"`, 1), `const`},
		{"a problem with an unknown code", "POST", chat, 400, asProblem, strings.Replace(problem, `"invalid_request"`, `"oops"`, 1), `enum`},
		{"an undocumented status", "GET", "/healthz", 418, asProblem, problem, "status 418 is not documented"},
		{"an undocumented route", "GET", "/api/{user_id}/nope", 200, asJSON, `{}`, "not documented"},
		{"an undocumented method", "PUT", "/healthz", 200, asJSON, `{"status":"ok"}`, "PUT is not documented"},
		{"an undocumented Content-Type", "POST", chat, 200, headers("Content-Type", "text/plain", "Cache-Control", "no-store"), "Done.", `"text/plain" is not one of`},
		{"a problem sent as plain JSON", "POST", chat, 400, asJSON, problem, `"application/json" is not one of`},
		{"a 401 without WWW-Authenticate", "GET", "/api/{user_id}/tasks", 401, asProblem,
			`{"type":"https://taskchat.dev/problems/unauthorized","title":"Unauthorized","status":401,"code":"unauthorized","detail":"No token."}`, "WWW-Authenticate is required"},
		{"a 429 without Retry-After", "POST", chat, 429, asProblem,
			`{"type":"https://taskchat.dev/problems/rate-limited","title":"Too Many Requests","status":429,"code":"rate_limited","detail":"Slow down."}`, "Retry-After is required"},
		{"a response without X-Request-Id", "DELETE", "/api/{user_id}/conversations/{conversation_id}", 204, http.Header{}, "", "X-Request-Id is required"},
		{"a JSON answer that may be cached", "GET", "/healthz", 200, headers("Content-Type", "application/json"), `{"status":"ok"}`, "Cache-Control is required"},
		{"a body on 204", "DELETE", "/api/{user_id}/conversations/{conversation_id}", 204, headers(), `{}`, "documents no body"},
		{"a stream that proxies may buffer", "POST", chat, 200, headers("Content-Type", "text/event-stream", "Cache-Control", "no-cache"), stream, "X-Accel-Buffering"},
		{"a stream event whose data is not JSON", "POST", chat, 200, asStream, event(1, "start", `{"conversation_id":1}`) + event(2, "delta", `hello`) + event(3, "done", turn), "data is not JSON"},
		{"a stream event without id", "POST", chat, 200, asStream, "event: start\ndata: {\"conversation_id\":1}\n\n" + event(2, "done", turn), "no id"},
		{"a stream event out of order", "POST", chat, 200, asStream, event(1, "start", `{"conversation_id":1}`) + event(3, "done", turn), `id "7-3", want 7-2`},
		{"a stream event of another run", "POST", chat, 200, asStream, event(1, "start", `{"conversation_id":1}`) + "id: 8-2\nevent: done\ndata: " + turn + "\n\n", `id "8-2", want 7-2`},
		{"a stream event id that is not <run>-<n>", "POST", chat, 200, asStream, "id: 1\nevent: start\ndata: {\"conversation_id\":1}\n\n" + event(2, "done", turn), "not <run>-<n>"},
		{"a resumed stream that begins without start at 1", "GET", followed, 200, asStream, event(1, "delta", `{"text":"x"}`) + event(2, "done", turn), "begins with delta"},
		{"a stop without ended", "POST", "/api/{user_id}/conversations/{conversation_id}/stop", 202, asJSON, `{"conversation_id":1,"turn_id":3}`, `missing properties: ["ended"]`},
		{"a delta without text", "POST", chat, 200, asStream, event(1, "start", `{"conversation_id":1}`) + event(2, "delta", `{}`) + event(3, "done", turn), `missing properties: ["text"]`},
		{"an unknown event", "POST", chat, 200, asStream, event(1, "start", `{"conversation_id":1}`) + event(2, "progress", `{}`) + event(3, "done", turn), `"progress" is not a documented event`},
		{"a stream that does not begin with start", "POST", chat, 200, asStream, event(1, "delta", `{"text":"x"}`) + event(2, "done", turn), "begins with delta"},
		{"a stream without done", "POST", chat, 200, asStream, event(1, "start", `{"conversation_id":1}`) + event(2, "delta", `{"text":"x"}`), "does not end with done or error"},
		{"a stream that goes on after done", "POST", chat, 200, asStream, stream + event(6, "delta", `{"text":"x"}`), "after the final done"},
		{"a stream cut mid-event", "POST", chat, 200, asStream, strings.TrimSuffix(stream, "\n"), "blank line"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			err := specMismatch(c.method, c.route, c.status, c.header, []byte(c.body))
			switch {
			case c.wantErr == "" && err != nil:
				t.Fatalf("a right response was refused: %v", err)
			case c.wantErr != "" && err == nil:
				t.Fatalf("a wrong response passed; want an error about %q", c.wantErr)
			case c.wantErr != "" && !strings.Contains(err.Error(), c.wantErr):
				t.Fatalf("error = %v\nwant it to mention %q", err, c.wantErr)
			}
		})
	}
}

// TestSpecMatchesTheServer checks the answers the handler tests do not
// check against the contract: streams, replays, auth and query errors,
// rate limits, and an unready database.
func TestSpecMatchesTheServer(t *testing.T) {
	t.Parallel()
	const chat, tasksRoute = "/api/{user_id}/chat", "/api/{user_id}/tasks"
	stream := http.Header{"Accept": {"text/event-stream"}}
	s := mustServer(t, offline.New())
	user := storetest.UserID(t)
	tok := mustToken(t, user)
	check := func(t *testing.T, route string, c call, status int) reply {
		t.Helper()
		r := s.do(t, c)
		if r.status != status {
			t.Fatalf("%s %s = %d %s, want %d", c.method, c.path, r.status, r.body, status)
		}
		mustMatchSpec(t, c.method, route, r.status, r.header, r.body)
		return r
	}
	send := func(msg string, h http.Header) call {
		return call{method: "POST", path: "/api/" + user + "/chat", token: tok, body: chatBody(0, msg), header: h}
	}

	t.Run("a streamed turn and its replay", func(t *testing.T) {
		keyed := http.Header{"Accept": {"text/event-stream"}, "Idempotency-Key": {"spec-1"}}
		check(t, chat, send("Add a task to buy milk", keyed), 200)
		if r := check(t, chat, send("Add a task to buy milk", keyed), 200); r.header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("the replay is not marked: %v", r.header)
		}
		check(t, chat, send("Show me all my tasks", stream), 200)
	})
	t.Run("idempotency key reused", func(t *testing.T) {
		check(t, chat, send("Add a task to walk", http.Header{"Idempotency-Key": {"spec-2"}}), 200)
		check(t, chat, send("Add a task to run", http.Header{"Idempotency-Key": {"spec-2"}}), 422)
		check(t, chat, send("Add a task to run", http.Header{"Idempotency-Key": {"bad\tkey"}}), 400)
	})
	t.Run("auth", func(t *testing.T) {
		check(t, tasksRoute, call{method: "GET", path: "/api/" + user + "/tasks"}, 401)
		check(t, tasksRoute, call{method: "GET", path: "/api/" + user + "/tasks", token: "not.a.token"}, 401)
		check(t, tasksRoute, call{method: "GET", path: "/api/someone-else/tasks", token: tok}, 403)
	})
	t.Run("query errors", func(t *testing.T) {
		convs := "/api/{user_id}/conversations"
		check(t, convs, call{method: "GET", path: "/api/" + user + "/conversations?limit=0", token: tok}, 400)
		check(t, convs, call{method: "GET", path: "/api/" + user + "/conversations?cursor=nope", token: tok}, 400)
		check(t, convs, call{method: "GET", path: "/api/" + user + "/conversations?limit=1", token: tok}, 200)
		check(t, tasksRoute, call{method: "GET", path: "/api/" + user + "/tasks?status=done", token: tok}, 400)
		check(t, "/api/{user_id}/conversations/{conversation_id}/messages",
			call{method: "GET", path: "/api/" + user + "/conversations/abc/messages", token: tok}, 404)
	})
	t.Run("a model failure mid-stream", func(t *testing.T) {
		broken := mustServer(t, specFailingModel{})
		r := broken.do(t, send("Add a task to fail", stream))
		mustMatchSpec(t, "POST", chat, r.status, r.header, r.body)
		if r.status != 200 || !bytes.Contains(r.body, []byte("event: error")) {
			t.Fatalf("got %d, want a stream ending in an error event:\n%s", r.status, r.body)
		}
		if r := broken.do(t, send("Add a task to fail", nil)); r.status != 502 {
			t.Fatalf("JSON turn = %d %s, want 502", r.status, r.body)
		} else {
			mustMatchSpec(t, "POST", chat, r.status, r.header, r.body)
		}
	})
	t.Run("rate limited", func(t *testing.T) {
		limited := mustServer(t, offline.New(), func(c *serverConfig) { c.chat.TurnRate = tasks.Rate{PerMinute: 1, Burst: 1} })
		for _, want := range []int{200, 429} {
			if r := limited.do(t, send("Show me all my tasks", nil)); r.status != want {
				t.Fatalf("status %d, want %d: %s", r.status, want, r.body)
			} else {
				mustMatchSpec(t, "POST", chat, r.status, r.header, r.body)
			}
		}
	})
	t.Run("a followed turn, stopped", func(t *testing.T) { specFollowAndStop(t) })
	t.Run("database down", func(t *testing.T) {
		verifier, _ := auth.NewVerifier(auth.Config{Secret: bytes.Repeat([]byte("k"), auth.MinSecretBytes)})
		h := NewServer(slog.New(slog.DiscardHandler), verifier, specDeadDB{}, nil, nil, idleEngine, nil, nil, withLimits(testAPIConfig, storetest.Pool(t)))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/readyz", nil))
		mustMatchSpec(t, "GET", "/readyz", w.Code, w.Header(), w.Body.Bytes())
		if w.Code != 503 {
			t.Fatalf("readyz = %d", w.Code)
		}
	})
}

// specFollowAndStop checks the answers of the routes that follow and stop a
// running turn: a streamed turn whose client leaves, its follower from the
// start and one after an event id, the stop that ends it, and the same for
// a /chat/ui turn; then the 204s, 404s, 400 and 429 of those routes.
func specFollowAndStop(t *testing.T) {
	const (
		followed = "/api/{user_id}/conversations/{conversation_id}/stream"
		stopped  = "/api/{user_id}/conversations/{conversation_id}/stop"
		uiFollow = "/api/{user_id}/chat/ui/{chat_id}/stream"
	)
	waiting := agenttest.ModelFunc(func(ctx context.Context, _ agent.Request, onText func(string)) (agent.Response, error) {
		onText("Working on it")
		<-ctx.Done() // until stopped
		return agent.Response{Text: "Working on it"}, ctx.Err()
	})
	s := mustServer(t, waiting, func(c *serverConfig) { c.api.MaxStreams = 2 })
	user := storetest.UserID(t)
	tok := mustToken(t, user)
	api := "/api/" + user
	get := func(path string, header http.Header) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("GET", s.URL+api+path, nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		for k, v := range header {
			req.Header[k] = v
		}
		resp, err := s.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	// check reads resp whole and checks it against route.
	check := func(method, route string, resp *http.Response, status int) []byte {
		t.Helper()
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != status {
			t.Fatalf("%s %s = %d %s, want %d", method, route, resp.StatusCode, body, status)
		}
		mustMatchSpec(t, method, route, resp.StatusCode, resp.Header, body)
		return body
	}
	stop := func(convID string, status int) {
		t.Helper()
		r := s.do(t, call{method: "POST", path: api + "/conversations/" + convID + "/stop", token: tok})
		if r.status != status {
			t.Fatalf("stop = %d %s, want %d", r.status, r.body, status)
		}
		mustMatchSpec(t, "POST", stopped, r.status, r.header, r.body)
	}
	// firstEvent reads a stream until its first id line is written whole,
	// and returns what it read.
	firstEvent := func(resp *http.Response) string {
		t.Helper()
		var got strings.Builder
		buf := make([]byte, 1024)
		for !strings.Contains(got.String(), "id: ") || !strings.HasSuffix(got.String(), "\n\n") {
			n, err := resp.Body.Read(buf)
			got.Write(buf[:n])
			if err != nil {
				t.Fatalf("the stream ended before its first event: %v: %q", err, got.String())
			}
		}
		return got.String()
	}
	number := func(text, after string) string {
		_, rest, _ := strings.Cut(text, after)
		return rest[:strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })]
	}

	// A streamed turn whose client leaves after its first event.
	ctx, leave := context.WithCancel(context.Background())
	first := firstEvent(s.stream(t, ctx, user, chatBody(0, "Add a task to buy milk"), nil))
	leave()
	conv, run := number(first, `"conversation_id":`), number(first, "id: ")
	// The POST's stream stops counting once the server sees its client
	// gone and deletes its lease (a follower let in beside it would leave
	// the next one no room); then two followers hold the two streams
	// allowed.
	waitFor(t, "the stream of the client that left to be let go", func() bool {
		return storetest.Count(t, `SELECT count(*) FROM stream_leases WHERE user_id = $1`, user) == 0
	})
	fromStart := get("/conversations/"+conv+"/stream", nil)
	afterOne := get("/conversations/"+conv+"/stream", http.Header{"Last-Event-ID": {run + "-1"}})
	if r := get("/conversations/"+conv+"/stream", nil); r.StatusCode != 429 {
		t.Fatalf("a third follower = %d, want 429", r.StatusCode)
	} else {
		check("GET", followed, r, 429)
	}
	stop(conv, 202)
	check("GET", followed, fromStart, 200)
	check("GET", followed, afterOne, 200)
	check("GET", followed, get("/conversations/"+conv+"/stream", nil), 204)
	check("GET", followed, get("/conversations/"+conv+"/stream", http.Header{"Last-Event-ID": {run + "-1"}}), 200)
	stop(conv, 204)

	// A /chat/ui turn, followed as a UI message stream.
	req, _ := http.NewRequestWithContext(context.Background(), "POST", s.URL+api+"/chat/ui",
		strings.NewReader(`{"id":"spec-chat","messages":[{"role":"user","parts":[{"type":"text","text":"Hi"}]}]}`))
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	turn, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	first = firstEvent(turn)
	uiFollower := get("/chat/ui/spec-chat/stream", nil)
	stop(number(first, `"conversation_id":`), 202)
	check("GET", uiFollow, uiFollower, 200)
	check("POST", uiRoute, turn, 200)
	check("GET", uiFollow, get("/chat/ui/spec-chat/stream", nil), 204)
	check("GET", uiFollow, get("/chat/ui/no-such-chat/stream", nil), 204)
	check("GET", uiFollow, get("/chat/ui/a%20b/stream", nil), 400)
	check("GET", followed, get("/conversations/999999999/stream", nil), 404)
	stop("999999999", 404)
}

// specFailingModel fails every call, as an unreachable model does.
type specFailingModel struct{}

func (specFailingModel) Name() string { return "failing" }
func (specFailingModel) Stream(context.Context, agent.Request, func(string)) (agent.Response, error) {
	return agent.Response{}, &agent.ModelError{Kind: agent.ErrModelServer, Err: errors.New("connection refused")}
}

// specDeadDB is a database that does not answer.
type specDeadDB struct{}

func (specDeadDB) Ping(context.Context) error { return errors.New("connection refused") }
