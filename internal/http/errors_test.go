package http

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/agent/agenttest"
	"github.com/taskchat/taskchat/internal/agent/offline"
	"github.com/taskchat/taskchat/internal/agent/openaitest"
	"github.com/taskchat/taskchat/internal/store"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/tasks"
)

// mustProblem checks r is a problem+json answer with status and code.
func mustProblem(tb testing.TB, r reply, status int, code string) {
	tb.Helper()
	if r.status != status || r.header.Get("Content-Type") != "application/problem+json" {
		tb.Fatalf("got %d %s %s, want %d problem+json", r.status, r.header.Get("Content-Type"), r.body, status)
	}
	p := r.json(tb)
	if p["code"] != code || p["status"] != float64(status) || p["title"] == "" || p["detail"] == "" {
		tb.Fatalf("problem = %s, want code %s", r.body, code)
	}
}

func TestChatRefusesBadBodies(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New())
	user := storetest.UserID(t)
	tok := mustToken(t, user)
	cases := []struct {
		name, body, contentType string
		status                  int
		code                    string
	}{
		{"not JSON", `add a task`, "application/json", 400, "invalid_request"},
		{"truncated JSON", `{"message": "hi"`, "application/json", 400, "invalid_request"},
		{"empty body", ``, "application/json", 400, "invalid_request"},
		{"JSON array", `["hi"]`, "application/json", 400, "invalid_request"},
		{"two objects", `{"message":"a"}{"message":"b"}`, "application/json", 400, "invalid_request"},
		{"message a number", `{"message": 42}`, "application/json", 400, "invalid_request"},
		{"conversation id a string", `{"message":"hi","conversation_id":"7"}`, "application/json", 400, "invalid_request"},
		{"conversation id a fraction", `{"message":"hi","conversation_id":1.5}`, "application/json", 400, "invalid_request"},
		{"conversation id negative", `{"message":"hi","conversation_id":-1}`, "application/json", 400, "invalid_request"},
		{"unknown field", `{"message":"hi","user_id":"someone-else"}`, "application/json", 400, "invalid_request"},
		{"missing message", `{}`, "application/json", 400, "invalid_request"},
		{"blank message", `{"message":"   \n"}`, "application/json", 400, "invalid_request"},
		{"message too long", fmt.Sprintf(`{"message":%q}`, strings.Repeat("é", 4001)), "application/json", 400, "invalid_request"},
		{"NUL byte", `{"message":"hi\u0000there"}`, "application/json", 400, "invalid_request"},
		{"invalid UTF-8", "{\"message\":\"hi\xff\"}", "application/json", 400, "invalid_request"},
		{"terminal escape", `{"message":"add \u001b[31mred\u001b[0m"}`, "application/json", 400, "invalid_request"},
		{"C1 control", `{"message":"add a\u009bb"}`, "application/json", 400, "invalid_request"},
		{"right-to-left override", `{"message":"add \u202egpj.exe"}`, "application/json", 400, "invalid_request"},
		{"body too big", fmt.Sprintf(`{"message":%q}`, strings.Repeat("a", 70<<10)), "application/json", 413, "payload_too_large"},
		{"form body", `message=hi`, "application/x-www-form-urlencoded", 415, "unsupported_media_type"},
		{"conversation that does not exist", `{"message":"hi","conversation_id":999999999}`, "application/json", 404, "not_found"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := s.do(t, call{method: "POST", path: "/api/" + user + "/chat", token: tok, body: c.body,
				header: http.Header{"Content-Type": {c.contentType}}})
			mustProblem(t, r, c.status, c.code)
			mustMatchSpec(t, "POST", "/api/{user_id}/chat", r.status, r.header, r.body)
		})
	}
	convs := s.do(t, call{method: "GET", path: "/api/" + user + "/conversations", token: tok}).json(t)["conversations"].([]any)
	if len(convs) != 0 {
		t.Fatalf("refused requests left conversations behind: %v", convs)
	}
}

func TestErrorCodes(t *testing.T) {
	t.Parallel()
	user := storetest.UserID(t)
	tok := mustToken(t, user)

	t.Run("unauthorized", func(t *testing.T) {
		s := mustServer(t, offline.New())
		r := s.do(t, call{method: "GET", path: "/api/" + user + "/tasks"})
		mustProblem(t, r, 401, "unauthorized")
		if !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
			t.Fatalf("WWW-Authenticate = %q", r.header.Get("WWW-Authenticate"))
		}
	})
	t.Run("forbidden", func(t *testing.T) {
		s := mustServer(t, offline.New())
		mustProblem(t, s.do(t, call{method: "GET", path: "/api/someone-else/tasks", token: tok}), 403, "forbidden")
	})
	t.Run("not found", func(t *testing.T) {
		s := mustServer(t, offline.New())
		mustProblem(t, s.do(t, call{method: "GET", path: "/api/" + user + "/conversations/abc/messages", token: tok}), 404, "not_found")
		mustProblem(t, s.do(t, call{method: "GET", path: "/nowhere"}), 404, "not_found")
	})
	t.Run("invalid query", func(t *testing.T) {
		s := mustServer(t, offline.New())
		mustProblem(t, s.do(t, call{method: "GET", path: "/api/" + user + "/tasks?status=overdue", token: tok}), 400, "invalid_request")
		mustProblem(t, s.do(t, call{method: "GET", path: "/api/" + user + "/conversations?limit=0", token: tok}), 400, "invalid_request")
		mustProblem(t, s.do(t, call{method: "GET", path: "/api/" + user + "/conversations?cursor=zzz", token: tok}), 400, "invalid_request")
	})
	t.Run("method not allowed", func(t *testing.T) {
		s := mustServer(t, offline.New())
		mustProblem(t, s.do(t, call{method: "GET", path: "/api/" + user + "/chat", token: tok}), 405, "method_not_allowed")
	})
	t.Run("rate limited", func(t *testing.T) {
		s := mustServer(t, offline.New(), func(c *serverConfig) { c.chat.TurnRate = tasks.Rate{PerMinute: 1, Burst: 2} })
		other := storetest.UserID(t)
		for range 2 {
			if r := s.chat(t, other, 0, "hello"); r.status != 200 {
				t.Fatalf("within the burst: %d", r.status)
			}
		}
		r := s.chat(t, other, 0, "hello")
		mustProblem(t, r, 429, "rate_limited")
		if ra := r.header.Get("Retry-After"); ra == "" || ra == "0" {
			t.Fatalf("Retry-After = %q", ra)
		}
		if r := s.chat(t, storetest.UserID(t), 0, "hello"); r.status != 200 {
			t.Fatalf("another user is not limited: %d", r.status)
		}
	})
	t.Run("llm unavailable", func(t *testing.T) {
		for _, status := range []int{401, 429, 500} {
			fake := newFakeOpenAI(t, openaitest.Step{Status: status})
			s := mustServer(t, fake.Model())
			r := s.chat(t, user, 0, "Add a task to call the plumber")
			mustProblem(t, r, 502, "llm_unavailable")
			if !strings.Contains(r.json(t)["detail"].(string), "try again") {
				t.Fatalf("detail does not tell the person to try again: %s", r.body)
			}
			convs := s.do(t, call{method: "GET", path: "/api/" + user + "/conversations?limit=1", token: tok}).json(t)["conversations"].([]any)
			id := int64(convs[0].(map[string]any)["id"].(float64))
			msgs := s.do(t, call{method: "GET", path: fmt.Sprintf("/api/%s/conversations/%d/messages", user, id), token: tok}).json(t)["messages"].([]any)
			if len(msgs) != 1 || msgs[0].(map[string]any)["content"] != "Add a task to call the plumber" {
				t.Fatalf("model %d: the user message was not kept: %v", status, msgs)
			}
		}
	})
	t.Run("unavailable", func(t *testing.T) {
		pool, err := store.Open(context.Background(), unreachable(t, storetest.URL(t)), store.Settings{})
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close()
		s := mustServerOn(t, pool, offline.New())
		mustProblem(t, s.chat(t, user, 0, "hello"), 503, "unavailable")
		mustProblem(t, s.do(t, call{method: "GET", path: "/api/" + user + "/tasks", token: tok}), 503, "unavailable")
		mustProblem(t, s.do(t, call{method: "GET", path: "/readyz"}), 503, "unavailable")
		if r := s.do(t, call{method: "GET", path: "/healthz"}); r.status != 200 {
			t.Fatalf("healthz with the database down = %d; the process is up", r.status)
		}
	})
	t.Run("internal", func(t *testing.T) {
		panicky := agenttest.ModelFunc(func(context.Context, agent.Request, func(string)) (agent.Response, error) {
			panic("secret detail that must not leak")
		})
		s := mustServer(t, panicky)
		r := s.chat(t, user, 0, "hello")
		mustProblem(t, r, 500, "internal")
		if strings.Contains(string(r.body), "secret detail") {
			t.Fatalf("details leaked: %s", r.body)
		}
		if !strings.Contains(s.logs.String(), "secret detail") {
			t.Fatal("the panic was not logged")
		}
	})
}

func TestConversationBusy(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	fake := newFakeOpenAI(t, openaitest.Step{Text: "first"})
	s := mustServer(t, fake.Model())
	user := storetest.UserID(t)
	first := s.chat(t, user, 0, "hello")
	convID := int64(first.json(t)["conversation_id"].(float64))

	var wg sync.WaitGroup
	var slow reply
	fake.SetScript(openaitest.Step{Text: "slow", Wait: release}, openaitest.Step{Text: "other"})
	wg.Go(func() { slow = s.chat(t, user, convID, "a slow turn") })
	waitFor(t, "the slow turn to reach the model", func() bool { return fake.Requests() == 1 })

	busy := s.chat(t, user, convID, "too soon")
	mustProblem(t, busy, 409, "conversation_busy")
	// Another conversation of the same user runs meanwhile.
	if r := s.chat(t, user, 0, "in parallel"); r.status != 200 {
		t.Fatalf("a second conversation waited for the first: %d %s", r.status, r.body)
	}
	close(release)
	wg.Wait()
	if slow.status != 200 {
		t.Fatalf("slow turn = %d %s", slow.status, slow.body)
	}
}

func TestConversationDelete(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New())
	user := storetest.UserID(t)
	tok := mustToken(t, user)
	id := int64(s.chat(t, user, 0, "Add a task to read").json(t)["conversation_id"].(float64))
	path := fmt.Sprintf("/api/%s/conversations/%d", user, id)
	r := s.do(t, call{method: "DELETE", path: path, token: tok})
	if r.status != 204 || len(r.body) != 0 {
		t.Fatalf("delete = %d %s", r.status, r.body)
	}
	mustMatchSpec(t, "DELETE", "/api/{user_id}/conversations/{conversation_id}", r.status, r.header, r.body)
	mustProblem(t, s.do(t, call{method: "GET", path: path + "/messages", token: tok}), 404, "not_found")
	mustProblem(t, s.do(t, call{method: "DELETE", path: path, token: tok}), 404, "not_found")
	// The task the conversation created stays: deleting a chat is not deleting work.
	if tasks := s.do(t, call{method: "GET", path: "/api/" + user + "/tasks", token: tok}).json(t)["tasks"].([]any); len(tasks) != 1 {
		t.Fatalf("tasks after deleting the conversation = %v", tasks)
	}
}

func TestHealth(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New())
	for _, path := range []string{"/healthz", "/readyz"} {
		r := s.do(t, call{method: "GET", path: path})
		if r.status != 200 {
			t.Fatalf("%s = %d", path, r.status)
		}
		mustMatchSpec(t, "GET", path, r.status, r.header, r.body)
	}
}

// unreachable is databaseURL moved to an address where nothing listens,
// whether it named a host and port or a socket's directory (storetest's
// own cluster).
func unreachable(tb testing.TB, databaseURL string) string {
	tb.Helper()
	u, err := url.Parse(databaseURL)
	if err != nil {
		tb.Fatal(err)
	}
	u.Host = "127.0.0.1:1"
	if q := u.Query(); q.Has("host") {
		q.Del("host")
		u.RawQuery = q.Encode()
	}
	return u.String()
}
