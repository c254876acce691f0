package http

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/agent/openaitest"
	"github.com/taskchat/taskchat/internal/store/storetest"
)

// The model adds a task, then fails. A client must not take the failure
// for "nothing happened": the 502 problem, and a stream's error event,
// carry the conversation and the change, and say it in words.
func TestModelFailureAfterAToolTellsWhatWasDone(t *testing.T) {
	t.Parallel()
	const title = "Call the plumber"
	script := []openaitest.Step{
		{Calls: []agent.ToolCall{{ID: "call_1", Name: "add_task", Arguments: `{"title":"` + title + `"}`}}},
		{Status: 500}, // and every retry after it
	}

	t.Run("json", func(t *testing.T) {
		t.Parallel()
		s := mustServer(t, newFakeOpenAI(t, script...).Model())
		user := storetest.UserID(t)
		r := s.chat(t, user, 0, "Add a task to call the plumber") // checked against the spec
		mustProblem(t, r, 502, "llm_unavailable")
		p := r.json(t)
		if p["conversation_id"] != float64(mustConversationOf(t, user)) {
			t.Fatalf("conversation_id = %v, want %d: %s", p["conversation_id"], mustConversationOf(t, user), r.body)
		}
		taskID := mustOnlyTask(t, s, user, title)
		mustBeTheAdd(t, p["tool_calls"], taskID, title)
		if want := fmt.Sprintf("Added task %d (%s).", taskID, title); !strings.Contains(p["detail"].(string), want) {
			t.Fatalf("detail %q does not say %q", p["detail"], want)
		}
	})

	t.Run("stream", func(t *testing.T) {
		t.Parallel()
		s := mustServer(t, newFakeOpenAI(t, script...).Model())
		user := storetest.UserID(t)
		r := s.do(t, call{method: "POST", path: "/api/" + user + "/chat", token: mustToken(t, user),
			body: chatBody(0, "Add a task to call the plumber"), header: http.Header{"Accept": {"text/event-stream"}}})
		mustMatchSpec(t, "POST", "/api/{user_id}/chat", r.status, r.header, r.body)
		events, _ := readEvents(t, bytes.NewReader(r.body))
		if got := eventNames(events); got != "start,tool_call,tool_result,error" {
			t.Fatalf("events %s, want start,tool_call,tool_result,error", got)
		}
		last := events[len(events)-1].data
		taskID := mustOnlyTask(t, s, user, title)
		if last["code"] != "llm_unavailable" || !strings.Contains(fmt.Sprint(last["message"]), fmt.Sprintf("Added task %d (%s).", taskID, title)) {
			t.Fatalf("error event = %v", last)
		}
		mustBeTheAdd(t, last["tool_calls"], taskID, title)
		if res := events[2].data["result"]; fmt.Sprint(res) != fmt.Sprint(last["tool_calls"].([]any)[0].(map[string]any)["result"]) {
			t.Fatalf("the error event's call %v is not the one the stream showed: %v", last["tool_calls"], res)
		}
	})
}

// A model may write arguments that Go reads but PostgreSQL's jsonb cannot
// store: a lone surrogate, a number past numeric's range. Neither call
// runs, the turn still answers 200, and the conversation shows both calls
// with the model's text as a JSON string. Nothing is a 500.
func TestArgumentsPostgreSQLCannotStore(t *testing.T) {
	t.Parallel()
	unstorable := []string{`{"title":"\ud83d"}`, `{"title":"x","n":1e999999}`}
	fake := newFakeOpenAI(t,
		openaitest.Step{Calls: []agent.ToolCall{
			{ID: "call_1", Name: "add_task", Arguments: unstorable[0]},
			{ID: "call_2", Name: "add_task", Arguments: unstorable[1]},
		}},
		openaitest.Step{Text: "Neither of those worked."},
	)
	s := mustServer(t, fake.Model())
	user := storetest.UserID(t)
	tok := mustToken(t, user)

	r := s.chat(t, user, 0, "Add two odd tasks") // checked against the spec
	if r.status != 200 {
		t.Fatalf("chat = %d %s", r.status, r.body)
	}
	mustBeRefusedAsText(t, r.json(t)["tool_calls"], unstorable)

	path := fmt.Sprintf("/api/%s/conversations/%d/messages", user, int64(r.json(t)["conversation_id"].(float64)))
	got := s.do(t, call{method: "GET", path: path, token: tok})
	if got.status != 200 {
		t.Fatalf("messages = %d %s", got.status, got.body)
	}
	mustMatchSpec(t, "GET", "/api/{user_id}/conversations/{conversation_id}/messages", got.status, got.header, got.body)
	msgs := got.json(t)["messages"].([]any)
	if len(msgs) != 2 {
		t.Fatalf("messages = %s", got.body)
	}
	mustBeRefusedAsText(t, msgs[1].(map[string]any)["tool_calls"], unstorable)

	if tasks := s.do(t, call{method: "GET", path: "/api/" + user + "/tasks", token: tok}).json(t)["tasks"].([]any); len(tasks) != 0 {
		t.Fatalf("tasks = %v, want none", tasks)
	}
	if strings.Contains(s.logs.String(), `"level":"ERROR"`) {
		t.Fatalf("the server logged an error:\n%s", s.logs)
	}
}

// mustOnlyTask returns the id of the user's one task, failing unless it is
// titled title.
func mustOnlyTask(tb testing.TB, s *testServer, user, title string) int64 {
	tb.Helper()
	r := s.do(tb, call{method: "GET", path: "/api/" + user + "/tasks", token: mustToken(tb, user)})
	list, _ := r.json(tb)["tasks"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["title"] != title {
		tb.Fatalf("tasks = %s, want the one %q", r.body, title)
	}
	return int64(list[0].(map[string]any)["id"].(float64))
}

// mustBeTheAdd checks that calls, a decoded tool_calls member, is exactly
// the add_task call that created task taskID.
func mustBeTheAdd(tb testing.TB, calls any, taskID int64, title string) {
	tb.Helper()
	list, _ := calls.([]any)
	if len(list) != 1 {
		tb.Fatalf("tool_calls = %v, want the one add_task", calls)
	}
	c := list[0].(map[string]any)
	args, _ := c["arguments"].(map[string]any)
	res, _ := c["result"].(map[string]any)
	if c["id"] != "call_1" || c["tool"] != "add_task" || c["is_error"] != false || args["title"] != title ||
		res["task_id"] != float64(taskID) || res["status"] != "created" {
		tb.Fatalf("tool_calls = %v, want the add_task that created task %d", calls, taskID)
	}
}

// mustBeRefusedAsText checks that calls, a decoded tool_calls member, are
// error results whose arguments are the model's texts, as JSON strings.
func mustBeRefusedAsText(tb testing.TB, calls any, texts []string) {
	tb.Helper()
	list, _ := calls.([]any)
	if len(list) != len(texts) {
		tb.Fatalf("tool_calls = %v, want %d", calls, len(texts))
	}
	for i, c := range list {
		c := c.(map[string]any)
		if c["is_error"] != true || c["arguments"] != texts[i] {
			b, _ := json.Marshal(c)
			tb.Fatalf("call %d = %s, want an error with arguments the string %q", i, b, texts[i])
		}
	}
}
