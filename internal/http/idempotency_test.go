package http

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/agent/offline"
	"github.com/taskchat/taskchat/internal/agent/openaitest"
	"github.com/taskchat/taskchat/internal/store/storetest"
)

func keyed(key string) http.Header { return http.Header{"Idempotency-Key": {key}} }

func TestIdempotentRetryReplaysWithoutRunningAgain(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New())
	user := storetest.UserID(t)
	tok := mustToken(t, user)
	body := `{"message":"Add a task to renew the passport"}`
	send := func(h http.Header) reply {
		return s.do(t, call{method: "POST", path: "/api/" + user + "/chat", token: tok, body: body, header: h})
	}

	first := send(keyed("retry-1"))
	if first.status != 200 || first.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("first = %d %v", first.status, first.header)
	}
	again := send(keyed("retry-1"))
	mustMatchSpec(t, "POST", "/api/{user_id}/chat", again.status, again.header, again.body)
	if again.status != 200 || again.header.Get("Idempotent-Replayed") != "true" || !jsonSame(t, again.body, first.body) {
		t.Fatalf("retry = %d %s, want the first response replayed:\n%s", again.status, again.body, first.body)
	}

	// As a stream, the replay is a start and a done event carrying the same object.
	resp := s.stream(t, context.Background(), user, body, keyed("retry-1"))
	events, _ := readEvents(t, resp.Body)
	resp.Body.Close()
	if eventNames(events) != "start,done" || events[1].data["response"] != first.json(t)["response"] {
		t.Fatalf("streamed replay = %+v", events)
	}

	tasks := s.do(t, call{method: "GET", path: "/api/" + user + "/tasks", token: tok}).json(t)["tasks"].([]any)
	if len(tasks) != 1 {
		t.Fatalf("the retries created %d tasks, want 1", len(tasks))
	}
	convs := s.do(t, call{method: "GET", path: "/api/" + user + "/conversations", token: tok}).json(t)["conversations"].([]any)
	if len(convs) != 1 {
		t.Fatalf("the retries created %d conversations, want 1", len(convs))
	}

	// The same key with another body is refused; other keys and users are separate.
	other := s.do(t, call{method: "POST", path: "/api/" + user + "/chat", token: tok, body: `{"message":"something else"}`, header: keyed("retry-1")})
	mustProblem(t, other, 422, "idempotency_key_reused")
	mustMatchSpec(t, "POST", "/api/{user_id}/chat", other.status, other.header, other.body)
	bob := storetest.UserID(t)
	if r := s.do(t, call{method: "POST", path: "/api/" + bob + "/chat", token: mustToken(t, bob), body: body, header: keyed("retry-1")}); r.status != 200 || r.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("another user's identical key = %d %v", r.status, r.header)
	}
}

// A retry that comes while the first request's turn runs follows that
// turn to its end and answers its result, as a replay; the turn runs once.
func TestIdempotencyKeyInFlight(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	fake := newFakeOpenAI(t, openaitest.Step{Text: "done", Wait: release}, openaitest.Step{Text: "done"})
	s := mustServer(t, fake.Model())
	user := storetest.UserID(t)
	tok := mustToken(t, user)
	body := `{"message":"hello"}`
	var wg sync.WaitGroup
	var first, retry reply
	wg.Go(func() {
		first = s.do(t, call{method: "POST", path: "/api/" + user + "/chat", token: tok, body: body, header: keyed("slow")})
	})
	waitFor(t, "the first request to reach the model", func() bool { return fake.Requests() == 1 })
	wg.Go(func() {
		retry = s.do(t, call{method: "POST", path: "/api/" + user + "/chat", token: tok, body: body, header: keyed("slow")})
	})
	close(release)
	wg.Wait()
	if first.status != 200 || retry.status != 200 || retry.header.Get("Idempotent-Replayed") != "true" || retry.json(t)["response"] != "done" {
		t.Fatalf("first = %d %s, retry = %d %v %s", first.status, first.body, retry.status, retry.header, retry.body)
	}
	if fake.Requests() != 1 {
		t.Fatalf("the model ran %d times", fake.Requests())
	}
}

func TestIdempotencyKeyFreedByAModelFailure(t *testing.T) {
	t.Parallel()
	fake := newFakeOpenAI(t, openaitest.Step{Status: 500}, openaitest.Step{Status: 500}, openaitest.Step{Text: "Back again."})
	s := mustServer(t, fake.Model())
	user := storetest.UserID(t)
	tok := mustToken(t, user)
	send := func() reply {
		return s.do(t, call{method: "POST", path: "/api/" + user + "/chat", token: tok, body: `{"message":"hello"}`, header: keyed("k")})
	}
	mustProblem(t, send(), 502, "llm_unavailable")
	if r := send(); r.status != 200 || r.json(t)["response"] != "Back again." {
		t.Fatalf("retry after a model failure = %d %s, want it to run again", r.status, r.body)
	}
}

func TestIdempotencyKeyMustBeSane(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New())
	user := storetest.UserID(t)
	for _, key := range []string{strings.Repeat("k", 256), "tab\there"} {
		r := s.do(t, call{method: "POST", path: "/api/" + user + "/chat", token: mustToken(t, user), body: `{"message":"hi"}`, header: keyed(key)})
		mustProblem(t, r, 400, "invalid_request")
	}
}

func jsonSame(tb testing.TB, a, b []byte) bool {
	tb.Helper()
	return reply{body: a}.json(tb)["response"] == reply{body: b}.json(tb)["response"] &&
		reply{body: a}.json(tb)["conversation_id"] == reply{body: b}.json(tb)["conversation_id"]
}

func TestIdempotencyKeyKeptOnceAToolRan(t *testing.T) {
	t.Parallel()
	fake := newFakeOpenAI(t,
		openaitest.Step{Calls: []agent.ToolCall{{ID: "c1", Name: "add_task", Arguments: `{"title":"Only once"}`}}},
		openaitest.Step{Status: 500},
		openaitest.Step{Status: 500},
		openaitest.Step{Text: "never reached"},
	)
	s := mustServer(t, fake.Model())
	user := storetest.UserID(t)
	tok := mustToken(t, user)
	send := func() reply {
		return s.do(t, call{method: "POST", path: "/api/" + user + "/chat", token: tok, body: `{"message":"add only once"}`, header: keyed("k")})
	}
	mustProblem(t, send(), 502, "llm_unavailable")
	retry := send()
	if retry.status != 200 || retry.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("retry = %d %s, want the partial turn replayed", retry.status, retry.body)
	}
	if calls := retry.json(t)["tool_calls"].([]any); len(calls) != 1 || calls[0].(map[string]any)["tool"] != "add_task" || retry.json(t)["interrupted"] != true {
		t.Fatalf("replay = %s, want the interrupted turn's tool call", retry.body)
	}
	mustMatchSpec(t, "POST", "/api/{user_id}/chat", retry.status, retry.header, retry.body)
	tasks := s.do(t, call{method: "GET", path: "/api/" + user + "/tasks", token: tok}).json(t)["tasks"].([]any)
	if len(tasks) != 1 || fake.Requests() != 3 {
		t.Fatalf("tasks = %v after %d model calls; the retry must not run the tools again", tasks, fake.Requests())
	}
}

func TestKeyedTurnSurvivesAModelsGarbage(t *testing.T) {
	t.Parallel()
	fake := newFakeOpenAI(t,
		openaitest.Step{Calls: []agent.ToolCall{{ID: "", Name: "add_task", Arguments: `{"title":"Buy milk","note":"\u0000"}`}, {ID: "c2", Name: "add_task", Arguments: `{"title":"Buy milk"}`}}},
		openaitest.Step{Text: "Added.\u0000"},
	)
	s := mustServer(t, fake.Model())
	user := storetest.UserID(t)
	tok := mustToken(t, user)
	send := func(key string) reply {
		return s.do(t, call{method: "POST", path: "/api/" + user + "/chat", token: tok, body: `{"message":"add milk"}`, header: keyed(key)})
	}
	first := send(`"k-1"`)
	if first.status != 200 {
		t.Fatalf("first = %d %s", first.status, first.body)
	}
	again := send("k-1") // the same key, without the optional quotes
	if again.status != 200 || again.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("retry = %d %v %s", again.status, again.header, again.body)
	}
	mustMatchSpec(t, "POST", "/api/{user_id}/chat", again.status, again.header, again.body)
	if tasks := s.do(t, call{method: "GET", path: "/api/" + user + "/tasks", token: tok}).json(t)["tasks"].([]any); len(tasks) != 1 {
		t.Fatalf("tasks = %v, want the one the first turn added", tasks)
	}
}
