package http

import (
	"context"
	"fmt"
	"testing"

	"github.com/taskchat/taskchat/internal/agent/offline"
	"github.com/taskchat/taskchat/internal/store/storetest"
)

// A task is known by its number on its user's list wherever a person or a
// model sees it: in the tool calls and the reply, the stream's events, the
// stored record of the turn and the task listing. Numbers start at 1 for
// each user and are never reused.
func TestTaskNumbersAreWhatEveryoneSees(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New())
	alice, bob := storetest.UserID(t), storetest.UserID(t)

	s.chat(t, alice, 0, "Add a task to buy groceries")
	s.chat(t, alice, 0, "Add a task to pay bills")
	deleted := s.chat(t, alice, 0, "Delete task 1").json(t)
	if got := toolResult(t, deleted)["task_id"]; got != 1.0 {
		t.Fatalf("alice's delete answered task %v, want 1: %+v", got, deleted)
	}

	// Bob's first task is his task 1, in the stream and in its record.
	resp := s.stream(t, context.Background(), bob, `{"message":"Add a task to water the plants"}`, nil)
	events, _ := readEvents(t, resp.Body)
	resp.Body.Close()
	var result map[string]any
	for _, e := range events {
		if e.name == "tool_result" {
			result, _ = e.data["result"].(map[string]any)
		}
	}
	done := events[len(events)-1].data
	if result["task_id"] != 1.0 || done["response"] != "Added task 1: Water the plants." {
		t.Fatalf("bob's tool result %v, reply %q; want task 1", result, done["response"])
	}
	stored := s.do(t, call{method: "GET", token: mustToken(t, bob),
		path: fmt.Sprintf("/api/%s/conversations/%d/messages", bob, int64(done["conversation_id"].(float64)))})
	if calls := stored.json(t)["messages"].([]any)[1].(map[string]any)["tool_calls"].([]any); calls[0].(map[string]any)["result"].(map[string]any)["task_id"] != 1.0 {
		t.Fatalf("bob's stored turn = %s, want task 1 in its record", stored.body)
	}
	s.chat(t, bob, 0, "Mark task 1 as complete")

	// Alice's next task is 3: her deleted task 1 keeps its number.
	if added := s.chat(t, alice, 0, "Add a task to call the dentist").json(t); toolResult(t, added)["task_id"] != 3.0 {
		t.Fatalf("alice's third task = %+v, want task 3", added)
	}
	for user, want := range map[string]string{alice: "[2 false 3 false]", bob: "[1 true]"} {
		list := s.do(t, call{method: "GET", path: "/api/" + user + "/tasks", token: mustToken(t, user)})
		var got []any
		for _, task := range list.json(t)["tasks"].([]any) {
			task := task.(map[string]any)
			got = append(got, task["id"], task["completed"])
		}
		if fmt.Sprint(got) != want {
			t.Errorf("%s's tasks (id, completed) = %v, want %s", user, got, want)
		}
	}
}

// toolResult is the result of a chat answer's only tool call.
func toolResult(tb testing.TB, answer map[string]any) map[string]any {
	tb.Helper()
	calls, _ := answer["tool_calls"].([]any)
	if len(calls) != 1 {
		tb.Fatalf("tool calls = %v, want one", answer["tool_calls"])
	}
	result, _ := calls[0].(map[string]any)["result"].(map[string]any)
	return result
}
