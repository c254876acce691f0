package http

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/agent/agenttest"
	"github.com/taskchat/taskchat/internal/agent/offline"
	"github.com/taskchat/taskchat/internal/agent/openaitest"
	"github.com/taskchat/taskchat/internal/chat"
	"github.com/taskchat/taskchat/internal/http/turnstream"
	"github.com/taskchat/taskchat/internal/store"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/tasks"
)

// getStream asks for a conversation's running turn, as a follower does.
func (s *testServer) getStream(tb testing.TB, user string, conv any, lastEventID string) *http.Response {
	tb.Helper()
	req, _ := http.NewRequest("GET", fmt.Sprintf("%s/api/%s/conversations/%v/stream", s.URL, user, conv), nil)
	req.Header.Set("Authorization", "Bearer "+mustToken(tb, user))
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { resp.Body.Close() })
	return resp
}

func (s *testServer) stop(tb testing.TB, user string, conv any) reply {
	tb.Helper()
	r := s.do(tb, call{method: "POST", path: fmt.Sprintf("/api/%s/conversations/%v/stop", user, conv), token: mustToken(tb, user)})
	mustMatchSpec(tb, "POST", "/api/{user_id}/conversations/{conversation_id}/stop", r.status, r.header, r.body)
	return r
}

func TestStreamAndStopAnswerWhatTheyFind(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New())
	alice, bob := storetest.UserID(t), storetest.UserID(t)
	conv := s.chat(t, alice, 0, "Add a task to buy milk").json(t)["conversation_id"]

	t.Run("nothing runs: 204", func(t *testing.T) {
		if resp := s.getStream(t, alice, conv, ""); resp.StatusCode != 204 {
			t.Fatalf("stream = %d", resp.StatusCode)
		}
		if r := s.stop(t, alice, conv); r.status != 204 || len(r.body) != 0 {
			t.Fatalf("stop = %d %s", r.status, r.body)
		}
	})
	t.Run("another user's or no conversation: 404", func(t *testing.T) {
		for _, c := range []any{conv, 999_999_999, "abc"} {
			if resp := s.getStream(t, bob, c, ""); resp.StatusCode != 404 {
				t.Errorf("bob's stream of %v = %d", c, resp.StatusCode)
			}
			mustProblem(t, s.stop(t, bob, c), 404, "not_found")
		}
	})
	t.Run("a finished turn resumed after its last event: 204", func(t *testing.T) {
		resp := s.stream(t, context.Background(), alice, fmt.Sprintf(`{"conversation_id":%v,"message":"Add a task to pay rent"}`, conv), nil)
		events, _ := readEvents(t, resp.Body)
		resp.Body.Close()
		last := events[len(events)-1].id
		if r := s.getStream(t, alice, conv, last); r.StatusCode != 204 {
			t.Fatalf("after the done event = %d", r.StatusCode)
		}
		// After an earlier event, the rest is sent, once.
		r := s.getStream(t, alice, conv, events[1].id)
		rest, _ := readEvents(t, r.Body)
		if r.StatusCode != 200 || eventNames(rest) != eventNames(events[2:]) || rest[0].id != events[2].id {
			t.Fatalf("after %s: %d %s, want %s", events[1].id, r.StatusCode, eventNames(rest), eventNames(events[2:]))
		}
		// An id of another turn, or none that parses, means nothing here.
		for _, id := range []string{"1-1", "garbage", strings.Split(last, "-")[0] + "-x"} {
			if r := s.getStream(t, alice, conv, id); r.StatusCode != 204 {
				t.Errorf("Last-Event-ID %q = %d", id, r.StatusCode)
			}
		}
	})
}

// A JSON client whose turn someone stops hears how far it got.
func TestAStoppedJSONTurnAnswersWhatItDid(t *testing.T) {
	t.Parallel()
	fake := newFakeOpenAI(t,
		openaitest.Step{Calls: []agent.ToolCall{{ID: "c1", Name: "add_task", Arguments: `{"title":"Buy milk"}`}}},
		openaitest.Step{Text: "Added it, and ", Pause: make(chan struct{}), Rest: "never this."})
	s := mustServer(t, fake.Model())
	user := storetest.UserID(t)
	answered := make(chan reply, 1)
	go func() { answered <- s.chat(t, user, 0, "add buy milk") }()
	var conv any
	waitFor(t, "the reply to be under way", func() bool {
		if fake.Requests() < 2 {
			return false
		}
		convs := s.do(t, call{method: "GET", path: "/api/" + user + "/conversations", token: mustToken(t, user)}).json(t)["conversations"].([]any)
		conv = convs[0].(map[string]any)["id"]
		return true
	})
	var stopped reply
	waitFor(t, "the stop to find the turn", func() bool {
		stopped = s.stop(t, user, conv)
		return stopped.status == 202
	})
	if got := stopped.json(t); got["ended"] != true || got["conversation_id"] != conv {
		t.Fatalf("stop = %s", stopped.body)
	}
	r := <-answered
	got := r.json(t)
	calls := got["tool_calls"].([]any)
	if r.status != 200 || got["stopped"] != true || got["interrupted"] != true || len(calls) != 1 || !strings.HasPrefix(got["response"].(string), "Added it") {
		t.Fatalf("the stopped turn answered %d %s", r.status, r.body)
	}
	if again := s.stop(t, user, conv); again.status != 204 {
		t.Fatalf("a second stop = %d", again.status)
	}
}

// A user runs at most MaxRunningTurns turns at once; one more is refused
// with 429 and saved nowhere.
func TestRunningTurnsAreCapped(t *testing.T) {
	t.Parallel()
	pause := make(chan struct{})
	fake := newFakeOpenAI(t, openaitest.Step{Text: "Working ", Pause: pause, Rest: "done."})
	s := mustServer(t, fake.Model(), func(c *serverConfig) { c.chat.MaxRunningTurns = 1 })
	user := storetest.UserID(t)
	first := make(chan reply, 1)
	go func() { first <- s.chat(t, user, 0, "one") }()
	waitFor(t, "the first turn to reach the model", func() bool { return fake.Requests() == 1 })
	r := s.chat(t, user, 0, "two")
	mustProblem(t, r, 429, "rate_limited")
	if r.header.Get("Retry-After") == "" {
		t.Fatal("no Retry-After")
	}
	close(pause)
	if r := <-first; r.status != 200 {
		t.Fatalf("the first turn = %d %s", r.status, r.body)
	}
	convs := s.do(t, call{method: "GET", path: "/api/" + user + "/conversations", token: mustToken(t, user)}).json(t)["conversations"].([]any)
	if len(convs) != 1 {
		t.Fatalf("%d conversations: the refused turn was saved", len(convs))
	}
	if r := s.chat(t, user, 0, "three"); r.status != 200 {
		t.Fatalf("a turn after the first ended = %d %s", r.status, r.body)
	}
}

// A follower of a turn whose replica died hears that it was cut short
// once its lease has lapsed, instead of waiting for ever.
func TestAFollowerOfATurnCutShortIsTold(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New())
	user := storetest.UserID(t)
	pool := storetest.Pool(t)
	// A replica started this turn, wrote its first event, and died.
	turn, err := store.NewTurns(pool).StartTurn(context.Background(), tasks.TurnStart{UserID: user, Message: "hi", HistoryLimit: 50, ClaimFor: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	started := turnstream.EncodeEvent(chat.Event{Kind: chat.EventStarted, ConversationID: turn.Conversation.ID, TurnID: turn.ID(), RunID: turn.RunID})
	if _, err := store.NewRuns(pool).AppendRunEvents(context.Background(), user, turn.RunID, 1, [][]byte{started}, false); err != nil {
		t.Fatal(err)
	}
	resp := s.getStream(t, user, turn.Conversation.ID, "")
	events, _ := readEvents(t, resp.Body)
	if resp.StatusCode != 200 || eventNames(events) != "start,error" || events[1].data["code"] != "unavailable" ||
		events[1].id != fmt.Sprintf("%d-2", turn.RunID) {
		t.Fatalf("%d %v", resp.StatusCode, events)
	}
}

// A keyed turn stopped before it said or did anything answers that it was
// stopped, and a retry of it replays that, rather than running it again.
func TestAKeyedTurnStoppedBeforeItSaidAnythingReplaysTheStop(t *testing.T) {
	t.Parallel()
	calls := 0
	var mu sync.Mutex
	model := agenttest.ModelFunc(func(ctx context.Context, _ agent.Request, _ func(string)) (agent.Response, error) {
		mu.Lock()
		calls++
		mu.Unlock()
		<-ctx.Done() // thinks until stopped
		return agent.Response{}, ctx.Err()
	})
	s := mustServer(t, model)
	user := storetest.UserID(t)
	send := func() reply {
		return s.do(t, call{method: "POST", path: "/api/" + user + "/chat", token: mustToken(t, user),
			body: chatBody(0, "think hard"), header: keyed("stop-" + user)})
	}
	answered := make(chan reply, 1)
	go func() { answered <- send() }()
	var conv any
	waitFor(t, "the turn to reach the model", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return calls == 1
	})
	convs := s.do(t, call{method: "GET", path: "/api/" + user + "/conversations", token: mustToken(t, user)}).json(t)["conversations"].([]any)
	conv = convs[0].(map[string]any)["id"]
	if r := s.stop(t, user, conv); r.status != 202 {
		t.Fatalf("stop = %d %s", r.status, r.body)
	}
	first := <-answered
	if got := first.json(t); first.status != 200 || got["stopped"] != true || got["response"] != "" {
		t.Fatalf("the stopped turn answered %d %s", first.status, first.body)
	}
	again := send()
	if got := again.json(t); again.status != 200 || got["stopped"] != true || again.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("the retry answered %d %v %s", again.status, again.header, again.body)
	}
	if calls != 1 {
		t.Fatalf("the model was called %d times: the retry ran the turn again", calls)
	}
}

// A keyed request whose client left while its turn runs on is retried:
// the retry follows that turn to its end and answers as its replay —
// streamed, the turn's events; as JSON, its outcome — and nothing runs
// twice.
func TestAKeyedRetryFollowsItsRunningTurn(t *testing.T) {
	t.Parallel()
	for _, streamed := range []bool{false, true} {
		t.Run(map[bool]string{false: "json", true: "sse"}[streamed], func(t *testing.T) {
			t.Parallel()
			pause := make(chan struct{})
			fake := newFakeOpenAI(t,
				openaitest.Step{Calls: []agent.ToolCall{{ID: "c1", Name: "add_task", Arguments: `{"title":"Buy milk"}`}}},
				openaitest.Step{Text: "Added task 1, ", Pause: pause, Rest: "Buy milk."})
			s := mustServer(t, fake.Model())
			user := storetest.UserID(t)
			key := keyed("retry-" + user)
			ctx, leave := context.WithCancel(context.Background())
			first := s.stream(t, ctx, user, chatBody(0, "add buy milk"), key)
			buf := make([]byte, 4096)
			var seen strings.Builder
			for !strings.Contains(seen.String(), "event: delta") {
				n, err := first.Body.Read(buf)
				if err != nil {
					t.Fatalf("the first stream ended early: %v", err)
				}
				seen.Write(buf[:n])
			}
			leave()
			first.Body.Close()

			go func() { time.Sleep(100 * time.Millisecond); close(pause) }() // the model finishes while the retry waits
			var status int
			var replayed, body string
			if streamed {
				resp := s.stream(t, context.Background(), user, chatBody(0, "add buy milk"), key)
				events, _ := readEvents(t, resp.Body)
				resp.Body.Close()
				status, replayed = resp.StatusCode, resp.Header.Get("Idempotent-Replayed")
				var text strings.Builder
				for _, e := range events {
					if e.name == "delta" {
						text.WriteString(e.data["text"].(string))
					}
				}
				if names := eventNames(events); !strings.HasPrefix(names, "start,tool_call,tool_result,delta") || !strings.HasSuffix(names, ",done") {
					t.Fatalf("the retry streamed %s", names)
				}
				body = text.String()
			} else {
				r := s.do(t, call{method: "POST", path: "/api/" + user + "/chat", token: mustToken(t, user), body: chatBody(0, "add buy milk"), header: key})
				status, replayed = r.status, r.header.Get("Idempotent-Replayed")
				body, _ = r.json(t)["response"].(string)
			}
			if status != 200 || replayed != "true" || body != "Added task 1, Buy milk." {
				t.Fatalf("the retry answered %d (replayed %q) %q", status, replayed, body)
			}
			if n := fake.Requests(); n != 2 {
				t.Fatalf("the model was called %d times, want 2: the retry ran the turn again", n)
			}
		})
	}
}
