package http

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/taskchat/taskchat/internal/agent/openaitest"
	"github.com/taskchat/taskchat/internal/store/storetest"
)

// conversation reads GET /conversations/{id} and checks it against the spec.
func (s *testServer) conversation(tb testing.TB, user string, convID int64) reply {
	tb.Helper()
	r := s.do(tb, call{method: "GET", path: fmt.Sprintf("/api/%s/conversations/%d", user, convID), token: mustToken(tb, user)})
	mustMatchSpec(tb, "GET", "/api/{user_id}/conversations/{conversation_id}", r.status, r.header, r.body)
	return r
}

// compact sends POST /conversations/{id}/compact and checks it against the spec.
func (s *testServer) compact(tb testing.TB, user string, convID int64) reply {
	tb.Helper()
	r := s.do(tb, call{method: "POST", path: fmt.Sprintf("/api/%s/conversations/%d/compact", user, convID), token: mustToken(tb, user)})
	mustMatchSpec(tb, "POST", "/api/{user_id}/conversations/{conversation_id}/compact", r.status, r.header, r.body)
	return r
}

// systemOf is the system prompt of a request to the fake model.
func systemOf(req map[string]any) string {
	msgs, _ := req["messages"].([]any)
	if len(msgs) == 0 {
		return ""
	}
	m, _ := msgs[0].(map[string]any)
	if m["role"] != "system" {
		return ""
	}
	s, _ := m["content"].(string)
	return s
}

// A conversation on an OpenAI-compatible model passes its window of four
// messages: the model is asked for a summary in a request of its own,
// whose tokens count as the user's, and the next turns are given it; GET
// shows it, and POST …/compact carries it on at once, except while a turn
// runs.
func TestAConversationIsCompactedOverTheAPI(t *testing.T) {
	t.Parallel()
	hold := make(chan struct{})
	var mu sync.Mutex
	summaries := 0
	fake := newFakeOpenAI(t)
	fake.Respond = func(req map[string]any, _ int) openaitest.Step {
		system := systemOf(req)
		if strings.HasPrefix(system, "You keep the running summary") {
			mu.Lock()
			defer mu.Unlock()
			summaries++
			return openaitest.Step{Text: fmt.Sprintf("Summary %d: they began by asking to buy milk.", summaries)}
		}
		if msgs, _ := req["messages"].([]any); strings.Contains(fmt.Sprint(msgs[len(msgs)-1]), "wait for me") {
			return openaitest.Step{Text: "Done waiting.", Wait: hold}
		}
		return openaitest.Step{Text: "OK."}
	}
	s := mustServer(t, fake.Model(), func(c *serverConfig) { c.chat.HistoryLimit = 4 })
	user := storetest.UserID(t)

	var conv int64
	for i, msg := range []string{"Buy milk", "two", "three"} {
		r := s.chat(t, user, conv, msg)
		if r.status != 200 {
			t.Fatalf("turn %d = %d %s", i, r.status, r.body)
		}
		conv = int64(r.json(t)["conversation_id"].(float64))
	}
	t.Run("a conversation within its window has no summary", func(t *testing.T) {
		r := s.conversation(t, user, conv)
		if body := r.json(t); r.status != 200 || body["summary"] != nil || body["id"] != float64(conv) {
			t.Fatalf("conversation = %d %s", r.status, r.body)
		}
	})
	before := fake.Requests()
	s.chat(t, user, conv, "four")
	t.Run("past it, the model summarises first, and the turn is given the summary", func(t *testing.T) {
		if n := fake.Requests() - before; n != 2 {
			t.Fatalf("%d model requests, want the summary's and the turn's", n)
		}
		asked := fmt.Sprint(fake.Request(before)["messages"])
		if !strings.Contains(asked, "Person: Buy milk") {
			t.Fatalf("the summary request does not carry the first message: %s", asked)
		}
		turn := fake.Request(before + 1)
		if sys := systemOf(turn); !strings.Contains(sys, "Summary 1: they began by asking to buy milk.") {
			t.Fatalf("the turn's system prompt has no summary:\n%s", sys)
		}
		if msgs := fmt.Sprint(turn["messages"].([]any)[1:]); strings.Contains(msgs, "Buy milk") || strings.Contains(msgs, "two") {
			t.Fatalf("the turn was sent the messages the summary covers: %s", msgs)
		}
	})
	t.Run("GET shows the summary", func(t *testing.T) {
		body := s.conversation(t, user, conv).json(t)
		sum, _ := body["summary"].(map[string]any)
		if sum == nil || sum["text"] != "Summary 1: they began by asking to buy milk." || sum["through_message_id"].(float64) <= 0 {
			t.Fatalf("conversation = %v", body)
		}
	})
	t.Run("its tokens count as the user's", func(t *testing.T) {
		// Five model calls of 10 input and 5 output tokens each: four turns
		// and a summary; the summary is no turn.
		day := dayOf(t, s.usage(t, user, "").json(t), time.Now().UTC().Format(time.DateOnly))
		mustTokens(t, "today", day, 50, 25, 4)
	})
	s.chat(t, user, conv, "five")
	t.Run("POST compact carries it on now", func(t *testing.T) {
		old := s.conversation(t, user, conv).json(t)["summary"].(map[string]any)
		r := s.compact(t, user, conv)
		sum, _ := r.json(t)["summary"].(map[string]any)
		if r.status != 200 || sum == nil || sum["text"] != "Summary 2: they began by asking to buy milk." ||
			sum["through_message_id"].(float64) <= old["through_message_id"].(float64) {
			t.Fatalf("compact = %d %s (before: %v)", r.status, r.body, old)
		}
	})
	t.Run("with nothing more to summarise it answers the summary as it is", func(t *testing.T) {
		r := s.compact(t, user, conv)
		if sum, _ := r.json(t)["summary"].(map[string]any); r.status != 200 || sum["text"] != "Summary 2: they began by asking to buy milk." {
			t.Fatalf("compact = %d %s", r.status, r.body)
		}
	})
	t.Run("while a turn runs, it is busy", func(t *testing.T) {
		done := make(chan reply)
		go func() { done <- s.chat(t, user, conv, "wait for me") }()
		waitFor(t, "the turn to reach the model", func() bool {
			n := fake.Requests()
			return n > 0 && strings.Contains(fmt.Sprint(fake.Request(n - 1)["messages"]), "wait for me")
		})
		r := s.compact(t, user, conv)
		close(hold)
		if r.status != 409 || r.json(t)["code"] != "conversation_busy" {
			t.Fatalf("compact = %d %s", r.status, r.body)
		}
		if r := <-done; r.status != 200 {
			t.Fatalf("turn = %d %s", r.status, r.body)
		}
	})
	t.Run("another user's conversation is not found", func(t *testing.T) {
		other := storetest.UserID(t)
		if r := s.conversation(t, other, conv); r.status != 404 {
			t.Fatalf("GET = %d", r.status)
		}
		if r := s.compact(t, other, conv); r.status != 404 {
			t.Fatalf("POST compact = %d", r.status)
		}
	})
}
