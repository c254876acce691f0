package http

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/agent/agenttest"
	"github.com/taskchat/taskchat/internal/agent/offline"
	"github.com/taskchat/taskchat/internal/agent/openaitest"
	"github.com/taskchat/taskchat/internal/http/turnstream"
	"github.com/taskchat/taskchat/internal/store/storetest"
)

func TestChatJSONTurn(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New())
	user := storetest.UserID(t)

	r := s.chat(t, user, 0, "  Add a task to buy groceries  ")
	if r.status != http.StatusOK {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	var resp turnstream.ChatResponse
	if err := json.Unmarshal(r.body, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.ConversationID <= 0 || !strings.HasPrefix(resp.Response, "Added task ") || len(resp.ToolCalls) != 1 {
		t.Fatalf("response = %+v", resp)
	}
	tc := resp.ToolCalls[0]
	if tc.Tool != "add_task" || string(tc.Arguments) != `{"title":"Buy groceries"}` || tc.IsError || !strings.Contains(string(tc.Result), `"status":"created"`) {
		t.Fatalf("tool call = %+v", tc)
	}

	// The turn is stored: both messages, the audit, and the task itself.
	msgs := s.do(t, call{method: "GET", path: fmt.Sprintf("/api/%s/conversations/%d/messages", user, resp.ConversationID), token: mustToken(t, user)})
	mustMatchSpec(t, "GET", "/api/{user_id}/conversations/{conversation_id}/messages", msgs.status, msgs.header, msgs.body)
	var stored messagesResponse
	_ = json.Unmarshal(msgs.body, &stored)
	if len(stored.Messages) != 2 || stored.Messages[0].Content != "Add a task to buy groceries" || stored.Messages[1].Content != resp.Response {
		t.Fatalf("stored messages = %+v", stored.Messages)
	}
	if calls := stored.Messages[1].ToolCalls; len(calls) != 1 || calls[0].ID != tc.ID || calls[0].Tool != "add_task" {
		t.Fatalf("stored audit = %+v", calls)
	}
	list := s.do(t, call{method: "GET", path: "/api/" + user + "/tasks?status=pending", token: mustToken(t, user)})
	mustMatchSpec(t, "GET", "/api/{user_id}/tasks", list.status, list.header, list.body)
	if tasks := list.json(t)["tasks"].([]any); len(tasks) != 1 || tasks[0].(map[string]any)["title"] != "Buy groceries" {
		t.Fatalf("tasks = %s", list.body)
	}
	convs := s.do(t, call{method: "GET", path: "/api/" + user + "/conversations", token: mustToken(t, user)})
	mustMatchSpec(t, "GET", "/api/{user_id}/conversations", convs.status, convs.header, convs.body)
	if c := convs.json(t)["conversations"].([]any); len(c) != 1 || c[0].(map[string]any)["title"] != "Add a task to buy groceries" {
		t.Fatalf("conversations = %s", convs.body)
	}
}

func TestChatStreamedTurn(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New())
	user := storetest.UserID(t)
	resp := s.stream(t, context.Background(), user, `{"message":"I need to remember to pay bills"}`, nil)
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" ||
		resp.Header.Get("Cache-Control") != "no-cache" || resp.Header.Get("X-Accel-Buffering") != "no" {
		t.Fatalf("status %d, headers %v", resp.StatusCode, resp.Header)
	}
	events, _ := readEvents(t, resp.Body)
	names := eventNames(events)
	if !strings.HasPrefix(names, "start,tool_call,tool_result,delta") || !strings.HasSuffix(names, ",done") || strings.Count(names, "done") != 1 {
		t.Fatalf("events = %s", names)
	}
	var deltas strings.Builder
	run := strings.Split(events[0].id, "-")[0]
	for i, e := range events {
		// "<run>-<n>", n counting from 1: what a client resumes after.
		if e.id != fmt.Sprintf("%s-%d", run, i+1) || run == "0" {
			t.Fatalf("event %d has id %q", i, e.id)
		}
		if e.name == "delta" {
			deltas.WriteString(e.data["text"].(string))
		}
	}
	done := events[len(events)-1].data
	if deltas.String() != done["response"] || !strings.HasPrefix(deltas.String(), "Added task ") {
		t.Fatalf("deltas %q, final reply %q", deltas.String(), done["response"])
	}
	convID := events[0].data["conversation_id"].(float64)
	if done["conversation_id"] != convID || events[1].data["tool"] != "add_task" || events[2].data["is_error"] != false {
		t.Fatalf("events = %+v", events)
	}
	stored := s.do(t, call{method: "GET", path: fmt.Sprintf("/api/%s/conversations/%d/messages", user, int64(convID)), token: mustToken(t, user)})
	if msgs := stored.json(t)["messages"].([]any); len(msgs) != 2 || msgs[1].(map[string]any)["content"] != done["response"] {
		t.Fatalf("stored = %s", stored.body)
	}
}

func TestChatReplaysToolCallsToTheModel(t *testing.T) {
	t.Parallel()
	fake := newFakeOpenAI(t,
		openaitest.Step{Calls: []agent.ToolCall{{ID: "call_a", Name: "add_task", Arguments: `{"title":"Buy milk"}`}}},
		openaitest.Step{Text: "Added task: Buy milk."},
		openaitest.Step{Text: "You asked me to buy milk."},
	)
	s := mustServer(t, fake.Model())
	user := storetest.UserID(t)
	first := s.chat(t, user, 0, "add buy milk").json(t)
	convID := int64(first["conversation_id"].(float64))
	if r := s.chat(t, user, convID, "what did I ask?"); r.status != 200 {
		t.Fatalf("second turn: %d %s", r.status, r.body)
	}
	if fake.Requests() != 3 {
		t.Fatalf("model calls = %d", fake.Requests())
	}
	msgs := fake.Request(2)["messages"].([]any)
	var roles []string
	for _, m := range msgs {
		roles = append(roles, m.(map[string]any)["role"].(string))
	}
	if strings.Join(roles, ",") != "system,user,assistant,tool,assistant,user" {
		t.Fatalf("second turn's messages have roles %v", roles)
	}
	call := msgs[2].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)
	result := msgs[3].(map[string]any)
	if call["id"] != "call_a" || call["function"].(map[string]any)["name"] != "add_task" ||
		result["tool_call_id"] != "call_a" || !strings.Contains(result["content"].(string), `"status": "created"`) && !strings.Contains(result["content"].(string), `"status":"created"`) {
		t.Fatalf("replayed call %v, result %v", call, result)
	}
	sys := msgs[0].(map[string]any)["content"].(string)
	if strings.Contains(sys, user) {
		t.Fatal("the system prompt shows the model the user id")
	}
	// What a real model needs to resolve "task 3" and "delete it" from the
	// history above: per-user numbers, follow-ups, several intents, bulk.
	for _, want := range []string{"numbered 1, 2, 3", "Follow-ups refer to the conversation", "in the order asked", "bulk request"} {
		if !strings.Contains(sys, want) {
			t.Errorf("the system prompt does not say %q", want)
		}
	}
}

func TestChatContinuesOnANewServerInstance(t *testing.T) {
	t.Parallel()
	user := storetest.UserID(t)
	first := mustServer(t, offline.New())
	r := first.chat(t, user, 0, "Add a task to water the plants").json(t)
	convID := int64(r["conversation_id"].(float64))
	first.Close() // the process is gone; only the database remembers

	fake := newFakeOpenAI(t, openaitest.Step{Text: "Your plants are on the list."})
	second := mustServer(t, fake.Model())
	if r := second.chat(t, user, convID, "did you get that?"); r.status != 200 {
		t.Fatalf("continuing on a new instance: %d %s", r.status, r.body)
	}
	msgs := fake.Request(0)["messages"].([]any)
	if len(msgs) != 6 || !strings.Contains(fmt.Sprint(msgs[1]), "water the plants") || !strings.Contains(fmt.Sprint(msgs[3]), "Water the plants") {
		t.Fatalf("the new instance replayed %v", msgs)
	}
}

func TestChatStaysWithinTheUser(t *testing.T) {
	t.Parallel()
	alice, bob := storetest.UserID(t), storetest.UserID(t)
	offServer := mustServer(t, offline.New())
	r := offServer.chat(t, alice, 0, "Add a task to buy a gift").json(t)
	aliceConv := int64(r["conversation_id"].(float64))
	taskID := r["tool_calls"].([]any)[0].(map[string]any)["result"].(map[string]any)["task_id"].(float64)

	// Bob cannot continue, read or delete Alice's conversation.
	for _, c := range []call{
		{method: "POST", path: "/api/" + bob + "/chat", body: chatBody(aliceConv, "hello")},
		{method: "GET", path: fmt.Sprintf("/api/%s/conversations/%d/messages", bob, aliceConv)},
		{method: "DELETE", path: fmt.Sprintf("/api/%s/conversations/%d", bob, aliceConv)},
	} {
		c.token = mustToken(t, bob)
		if got := offServer.do(t, c); got.status != 404 || got.json(t)["code"] != "not_found" {
			t.Errorf("%s %s = %d %s, want 404", c.method, c.path, got.status, got.body)
		}
	}
	// A model told to act on Alice's task for Bob gets a failed tool call.
	fake := newFakeOpenAI(t,
		openaitest.Step{Calls: []agent.ToolCall{
			{ID: "c1", Name: "complete_task", Arguments: fmt.Sprintf(`{"task_id":%d}`, int64(taskID))},
			{ID: "c2", Name: "delete_task", Arguments: fmt.Sprintf(`{"task_id":%d}`, int64(taskID))},
			{ID: "c3", Name: "update_task", Arguments: fmt.Sprintf(`{"task_id":%d,"title":"mine now"}`, int64(taskID))},
		}},
		openaitest.Step{Text: "I couldn't find that task."},
	)
	model := mustServer(t, fake.Model())
	got := model.chat(t, bob, 0, "complete, delete and rename task "+fmt.Sprint(taskID)).json(t)
	for _, c := range got["tool_calls"].([]any) {
		c := c.(map[string]any)
		if c["is_error"] != true || !strings.Contains(fmt.Sprint(c["result"]), "was not found") {
			t.Errorf("%v on alice's task succeeded for bob: %v", c["tool"], c)
		}
	}
	list := offServer.do(t, call{method: "GET", path: "/api/" + alice + "/tasks", token: mustToken(t, alice)}).json(t)["tasks"].([]any)
	if task := list[0].(map[string]any); len(list) != 1 || task["title"] != "Buy a gift" || task["completed"] != false {
		t.Fatalf("alice's task after bob's turn: %v", list)
	}
}

// A client that leaves in the middle of a reply does not end the turn: it
// runs to its end, and its reply is stored whole, as if the client had
// stayed.
func TestChatTurnOutlivesItsClient(t *testing.T) {
	t.Parallel()
	wait := make(chan struct{})
	script := []openaitest.Step{
		{Calls: []agent.ToolCall{{ID: "c1", Name: "add_task", Arguments: `{"title":"Write report"}`}}},
		{Text: "Added the report task, and now a long story that goes on.", Wait: wait},
		{Text: "Hi."}, // the next turn's
	}
	fake := newFakeOpenAI(t)
	fake.Respond = func(_ map[string]any, n int) openaitest.Step { return script[n%len(script)] }
	s := mustServer(t, fake.Model())
	user := storetest.UserID(t)
	for _, stream := range []bool{true, false} {
		ctx, cancel := context.WithCancel(context.Background())
		var convID string
		if stream {
			resp := s.stream(t, ctx, user, `{"message":"add write report"}`, nil)
			// Read until the tool has run, then leave.
			var seen strings.Builder
			buf := make([]byte, 1)
			for !strings.Contains(seen.String(), "event: tool_result") {
				if _, err := resp.Body.Read(buf); err != nil {
					t.Fatalf("stream ended early: %v (%q)", err, seen.String())
				}
				seen.Write(buf)
			}
			convID = strings.SplitN(strings.SplitN(seen.String(), `"conversation_id":`, 2)[1], ",", 2)[0]
			cancel()
			resp.Body.Close()
		} else {
			// A JSON client gives up while the model still writes.
			go func() { time.Sleep(100 * time.Millisecond); cancel() }()
			req, _ := http.NewRequestWithContext(ctx, "POST", s.URL+"/api/"+user+"/chat", strings.NewReader(`{"message":"add write report"}`))
			req.Header.Set("Authorization", "Bearer "+mustToken(t, user))
			if _, err := s.Client().Do(req); err == nil {
				t.Fatal("the JSON client did not give up")
			}
			var convs []any
			waitFor(t, "the second conversation", func() bool {
				convs = s.do(t, call{method: "GET", path: "/api/" + user + "/conversations", token: mustToken(t, user)}).json(t)["conversations"].([]any)
				return len(convs) == 2
			})
			convID = fmt.Sprint(convs[0].(map[string]any)["id"])
		}
		time.Sleep(50 * time.Millisecond)
		wait <- struct{}{} // the model goes on, with nobody reading

		path := fmt.Sprintf("/api/%s/conversations/%s/messages", user, convID)
		var msgs []any
		waitFor(t, "the reply to be stored", func() bool {
			msgs, _ = s.do(t, call{method: "GET", path: path, token: mustToken(t, user)}).json(t)["messages"].([]any)
			return len(msgs) == 2
		})
		reply := msgs[1].(map[string]any)
		if reply["interrupted"] != false || reply["content"] != "Added the report task, and now a long story that goes on." {
			t.Fatalf("stream=%v: stored reply = %v, want it whole", stream, reply)
		}
		if calls := reply["tool_calls"].([]any); len(calls) != 1 || calls[0].(map[string]any)["tool"] != "add_task" {
			t.Fatalf("the executed tool call was not audited: %v", reply)
		}
		// The conversation is free again for the next turn.
		if r := s.chat(t, user, mustAtoi(t, convID), "hello again"); r.status != http.StatusOK {
			t.Fatalf("the next turn = %d %s", r.status, r.body)
		}
	}
}

func mustAtoi(tb testing.TB, s string) int64 {
	tb.Helper()
	var n int64
	if _, err := fmt.Sscan(s, &n); err != nil {
		tb.Fatalf("%q: %v", s, err)
	}
	return n
}

func TestStreamPingsWhileTheModelThinks(t *testing.T) {
	t.Parallel()
	fake := newFakeOpenAI(t, openaitest.Step{Text: "Here you go.", Delay: 150 * time.Millisecond})
	s := mustServer(t, fake.Model(), func(c *serverConfig) { c.api.Stream.PingInterval = 20 * time.Millisecond })
	user := storetest.UserID(t)
	resp := s.stream(t, context.Background(), user, `{"message":"hello"}`, nil)
	defer resp.Body.Close()
	events, pings := readEvents(t, resp.Body)
	if pings == 0 || eventNames(events) != "start,delta,delta,delta,done" {
		t.Fatalf("pings %d, events %s", pings, eventNames(events))
	}
}

func TestStreamClientThatStopsReadingEndsTheTurn(t *testing.T) {
	t.Parallel()
	// The model says, in eight chunks of 1 MiB (a line of the stream may
	// not pass 4 MiB), far more than the socket buffers hold.
	fake := newFakeOpenAI(t,
		openaitest.Step{Calls: []agent.ToolCall{{ID: "c1", Name: "add_task", Arguments: `{"title":"Read later"}`}}},
		openaitest.Step{Text: strings.Repeat(strings.Repeat("blah", 256<<10)+" ", 8)},
	)
	s := mustServer(t, fake.Model(), func(c *serverConfig) { c.api.Stream.WriteTimeout = 200 * time.Millisecond })
	user := storetest.UserID(t)
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.(*net.TCPConn).SetReadBuffer(4 << 10) // a small window fills fast
	body := `{"message":"add read later"}`
	fmt.Fprintf(conn, "POST /api/%s/chat HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nAccept: text/event-stream\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		user, mustToken(t, user), len(body), body)
	// ...and never reads. The turn must end and store what it did.
	var msgs []any
	defer func() {
		if t.Failed() {
			t.Log(s.logs.String())
		}
	}()
	waitFor(t, "the stalled turn to be stored", func() bool {
		convs := s.do(t, call{method: "GET", path: "/api/" + user + "/conversations", token: mustToken(t, user)}).json(t)["conversations"].([]any)
		if len(convs) == 0 {
			return false
		}
		id := int64(convs[0].(map[string]any)["id"].(float64))
		// The reply, 8 MiB, is a page of its own: the page before it holds
		// the user's message alone (a page is bounded by bytes).
		msgs = nil
		for cursor := ""; ; {
			page := s.do(t, call{method: "GET", path: fmt.Sprintf("/api/%s/conversations/%d/messages?cursor=%s", user, id, cursor), token: mustToken(t, user)}).json(t)
			msgs = append(msgs, page["messages"].([]any)...)
			next, _ := page["next_cursor"].(string)
			if next == "" {
				break
			}
			cursor = next
		}
		return len(msgs) == 2
	})
	// Whether the model had finished when the write gave up decides
	// whether the reply is marked interrupted; either way it is stored.
	if reply := msgs[1].(map[string]any); len(reply["tool_calls"].([]any)) != 1 || reply["content"] == "" {
		t.Fatalf("stored reply = %v", reply)
	}
	if !strings.Contains(s.logs.String(), "stream client gone") {
		t.Fatal("the stalled client was not noticed")
	}
}

func TestStreamEndsWithAnErrorEventWhenTheTurnPanics(t *testing.T) {
	t.Parallel()
	model := agenttest.ModelFunc(func(_ context.Context, _ agent.Request, onText func(string)) (agent.Response, error) {
		onText("Let me ")
		panic("a bug mid-stream")
	})
	s := mustServer(t, model)
	user := storetest.UserID(t)
	resp := s.stream(t, context.Background(), user, `{"message":"hello"}`, nil)
	defer resp.Body.Close()
	events, _ := readEvents(t, resp.Body)
	if eventNames(events) != "start,delta,error" || events[2].data["code"] != "internal" {
		t.Fatalf("events = %s %v", eventNames(events), events)
	}
}
