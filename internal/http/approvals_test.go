package http

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/agent/offline"
	"github.com/taskchat/taskchat/internal/agent/openaitest"
	"github.com/taskchat/taskchat/internal/http/turnstream"
	"github.com/taskchat/taskchat/internal/store"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/tasks"
)

// withApprovals makes delete_task's calls wait for their person, for ttl.
func withApprovals(ttl time.Duration, tools ...string) func(*serverConfig) {
	return func(c *serverConfig) {
		c.chat.ApprovalTools, c.chat.ApprovalTTL = tools, ttl
	}
}

// chatTurn sends one JSON chat turn and decodes its answer, which must be 200.
func (s *testServer) chatTurn(tb testing.TB, user string, convID int64, message string) turnstream.ChatResponse {
	tb.Helper()
	r := s.chat(tb, user, convID, message)
	if r.status != http.StatusOK {
		tb.Fatalf("%q: status %d: %s", message, r.status, r.body)
	}
	var resp turnstream.ChatResponse
	if err := json.Unmarshal(r.body, &resp); err != nil {
		tb.Fatal(err)
	}
	return resp
}

// decide sends a decision on approval id, checked against the spec.
func (s *testServer) decide(tb testing.TB, user string, id int64, body string) reply {
	tb.Helper()
	r := s.do(tb, call{method: "POST", path: fmt.Sprintf("/api/%s/approvals/%d", user, id), token: mustToken(tb, user), body: body})
	mustMatchSpec(tb, "POST", "/api/{user_id}/approvals/{approval_id}", r.status, r.header, r.body)
	return r
}

// approval reads one approval, checked against the spec.
func (s *testServer) approval(tb testing.TB, user string, id int64) (reply, turnstream.Approval) {
	tb.Helper()
	r := s.do(tb, call{method: "GET", path: fmt.Sprintf("/api/%s/approvals/%d", user, id), token: mustToken(tb, user)})
	mustMatchSpec(tb, "GET", "/api/{user_id}/approvals/{approval_id}", r.status, r.header, r.body)
	var a turnstream.Approval
	if r.status == http.StatusOK {
		if err := json.Unmarshal(r.body, &a); err != nil {
			tb.Fatal(err)
		}
	}
	return r, a
}

// waiting lists the user's approvals that wait, checked against the spec.
func (s *testServer) waiting(tb testing.TB, user, query string) (list []turnstream.Approval, next *string) {
	tb.Helper()
	r := s.do(tb, call{method: "GET", path: "/api/" + user + "/approvals" + query, token: mustToken(tb, user)})
	mustMatchSpec(tb, "GET", "/api/{user_id}/approvals", r.status, r.header, r.body)
	if r.status != http.StatusOK {
		tb.Fatalf("list approvals: status %d: %s", r.status, r.body)
	}
	var resp approvalsResponse
	if err := json.Unmarshal(r.body, &resp); err != nil {
		tb.Fatal(err)
	}
	return resp.Approvals, resp.NextCursor
}

// waitingDelete has user add a task titled by what follows "add " in add,
// then ask to delete it: the approval that call waits for, and its
// conversation.
func (s *testServer) waitingDelete(tb testing.TB, user, add string) (int64, turnstream.Approval) {
	tb.Helper()
	conv := s.chatTurn(tb, user, 0, add).ConversationID
	resp := s.chatTurn(tb, user, conv, "delete task 1")
	if len(resp.Approvals) != 1 {
		tb.Fatalf("approvals = %+v (reply %q)", resp.Approvals, resp.Response)
	}
	return conv, resp.Approvals[0]
}

// deletions counts the user's delete_task calls that deleted a task.
func deletions(tb testing.TB, user string) int {
	tb.Helper()
	return storetest.Count(tb, `SELECT count(*) FROM tool_calls WHERE user_id = $1 AND tool = 'delete_task' AND result->>'status' = 'deleted'`, user)
}

// decideInTheStore approves approval id as a replica does before it
// continues the turn: one that stops there leaves the decision made and
// nothing run.
func decideInTheStore(tb testing.TB, pool *pgxpool.Pool, user string, id int64) {
	tb.Helper()
	if _, err := store.NewTurns(pool).DecideApproval(context.Background(), tasks.Decision{UserID: user, ApprovalID: id, Approved: true}); err != nil {
		tb.Fatal(err)
	}
}

// storedTitles are the user's tasks' titles, in number order.
func storedTitles(tb testing.TB, user string) []string {
	tb.Helper()
	return storetest.Strings(tb, `SELECT title FROM tasks WHERE user_id = $1 ORDER BY number`, user)
}

func TestApprovalWaitsThenRunsOnce(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New(), withApprovals(time.Hour, "delete_task"))
	user := storetest.UserID(t)
	first := s.chatTurn(t, user, 0, "add buy milk and walk the dog")
	conv := first.ConversationID

	// The call does not run: the turn answers with what waits.
	resp := s.chatTurn(t, user, conv, "delete task 1")
	if len(resp.Approvals) != 1 {
		t.Fatalf("approvals = %+v (reply %q)", resp.Approvals, resp.Response)
	}
	a := resp.Approvals[0]
	if a.Tool != "delete_task" || a.Summary != "Delete task 1, Buy milk" || a.ConversationID != conv || a.State != tasks.ApprovalPending ||
		!a.ExpiresAt.After(time.Now().Add(50*time.Minute)) || string(a.Arguments) != `{"task_id":1}` {
		t.Fatalf("approval = %+v", a)
	}
	if resp.Response != "I'll delete task 1 (Buy milk) once you approve." {
		t.Fatalf("reply %q does not say what waits", resp.Response)
	}
	if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].ApprovalID != a.ID || tasks.AwaitingID(resp.ToolCalls[0].Result) != a.ID {
		t.Fatalf("tool calls = %+v", resp.ToolCalls)
	}
	if got := storedTitles(t, user); len(got) != 2 {
		t.Fatalf("tasks = %v: the call ran before it was approved", got)
	}
	if list, _ := s.waiting(t, user, ""); len(list) != 1 || list[0].ID != a.ID {
		t.Fatalf("waiting = %+v", list)
	}

	// Eight decisions at once: the call runs once, and all answer the same.
	var wg sync.WaitGroup
	answers := make([]reply, 8)
	for i := range answers {
		wg.Go(func() { answers[i] = s.decide(t, user, a.ID, `{"approved": true}`) })
	}
	wg.Wait()
	var want turnstream.ChatResponse
	for i, r := range answers {
		if r.status != http.StatusOK {
			t.Fatalf("decision %d: status %d: %s", i, r.status, r.body)
		}
		var got turnstream.ChatResponse
		if err := json.Unmarshal(r.body, &got); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			want = got
			continue
		}
		if !storetest.SameJSON(mustJSON(t, got), mustJSON(t, want)) {
			t.Fatalf("decision %d answered %s, decision 0 %s", i, mustJSON(t, got), mustJSON(t, want))
		}
	}
	if !strings.HasPrefix(want.Response, "Deleted task 1") {
		t.Fatalf("continued reply %q", want.Response)
	}
	if len(want.ToolCalls) != 1 || want.ToolCalls[0].Tool != "delete_task" || want.ToolCalls[0].IsError ||
		!strings.Contains(string(want.ToolCalls[0].Result), `"deleted"`) || want.ToolCalls[0].ID != a.CallID {
		t.Fatalf("continued turn = %+v", want)
	}
	if got := storedTitles(t, user); len(got) != 1 || got[0] != "Walk the dog" {
		t.Fatalf("tasks = %v", got)
	}
	if n := deletions(t, user); n != 1 {
		t.Fatalf("the approved call ran %d times", n)
	}

	// The decision is audited; the other decision after it is refused.
	if r := s.decide(t, user, a.ID, `{"approved": false}`); r.status != http.StatusConflict || r.json(t)["code"] != codeApprovalClosed {
		t.Fatalf("other decision: %d %s", r.status, r.body)
	}
	if _, got := s.approval(t, user, a.ID); got.State != tasks.ApprovalApproved || got.DecidedAt == nil {
		t.Fatalf("approval afterwards = %+v", got)
	}
	if list, _ := s.waiting(t, user, ""); len(list) != 0 {
		t.Fatalf("still waiting: %+v", list)
	}
	// The conversation shows the call's resolution where it waited.
	msgs := s.do(t, call{method: "GET", path: fmt.Sprintf("/api/%s/conversations/%d/messages", user, conv), token: mustToken(t, user)})
	var stored messagesResponse
	_ = json.Unmarshal(msgs.body, &stored)
	last := stored.Messages[len(stored.Messages)-1]
	if len(stored.Messages) != 4 || len(last.ToolCalls) != 1 || !strings.Contains(string(last.ToolCalls[0].Result), `"deleted"`) {
		t.Fatalf("messages = %s", msgs.body)
	}
}

func TestApprovalDeniedIsToldToTheModel(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New(), withApprovals(time.Hour, "delete_task"))
	user := storetest.UserID(t)
	_, a := s.waitingDelete(t, user, "add renew passport")

	r := s.decide(t, user, a.ID, `{"approved": false, "reason": "I still need it"}`)
	if r.status != http.StatusOK {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	var resp turnstream.ChatResponse
	_ = json.Unmarshal(r.body, &resp)
	if resp.Response != "OK, I won't delete task 1, as you declined." {
		t.Fatalf("reply %q", resp.Response)
	}
	if len(resp.ToolCalls) != 1 || !resp.ToolCalls[0].IsError || !strings.Contains(string(resp.ToolCalls[0].Result), "I still need it") {
		t.Fatalf("continued turn = %+v", resp)
	}
	if got := storedTitles(t, user); len(got) != 1 {
		t.Fatalf("tasks = %v: a declined call ran", got)
	}
	if _, got := s.approval(t, user, a.ID); got.State != tasks.ApprovalDenied || got.Reason != "I still need it" {
		t.Fatalf("approval = %+v", got)
	}
	if r := s.decide(t, user, a.ID, `{"approved": true}`); r.status != http.StatusConflict {
		t.Fatalf("approving a denied call: %d %s", r.status, r.body)
	}
}

func TestApprovalOfSeveralCallsContinuesOnceAllAreDecided(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New(), withApprovals(time.Hour, "delete_task"))
	user := storetest.UserID(t)
	conv := s.chatTurn(t, user, 0, "add eggs, bread and jam").ConversationID
	resp := s.chatTurn(t, user, conv, "delete task 1 and task 2")
	if len(resp.Approvals) != 2 {
		t.Fatalf("approvals = %+v (reply %q)", resp.Approvals, resp.Response)
	}
	first, second := resp.Approvals[0], resp.Approvals[1]

	r := s.decide(t, user, first.ID, `{"approved": true}`)
	if r.status != http.StatusAccepted {
		t.Fatalf("first decision: %d %s", r.status, r.body)
	}
	var partial decisionResponse
	_ = json.Unmarshal(r.body, &partial)
	if partial.Approval.State != tasks.ApprovalApproved || len(partial.Waiting) != 1 || partial.Waiting[0].ID != second.ID {
		t.Fatalf("202 = %s", r.body)
	}
	if got := storedTitles(t, user); len(got) != 3 {
		t.Fatalf("tasks = %v: a call ran before its turn's last approval was decided", got)
	}
	if r := s.decide(t, user, second.ID, `{"approved": false}`); r.status != http.StatusOK {
		t.Fatalf("last decision: %d %s", r.status, r.body)
	}
	if got := storedTitles(t, user); len(got) != 2 || got[0] != "Bread" {
		t.Fatalf("tasks = %v", got)
	}
}

func TestApprovalSupersededByANewMessage(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New(), withApprovals(time.Hour, "delete_task"))
	user := storetest.UserID(t)
	conv, a := s.waitingDelete(t, user, "add call mom")
	s.chatTurn(t, user, conv, "show my tasks")

	if r := s.decide(t, user, a.ID, `{"approved": true}`); r.status != http.StatusConflict || !strings.Contains(string(r.body), "superseded") {
		t.Fatalf("decision after a new message: %d %s", r.status, r.body)
	}
	if got := storedTitles(t, user); len(got) != 1 {
		t.Fatalf("tasks = %v", got)
	}
	if list, _ := s.waiting(t, user, ""); len(list) != 0 {
		t.Fatalf("waiting = %+v", list)
	}
	if _, got := s.approval(t, user, a.ID); got.State != tasks.ApprovalSuperseded {
		t.Fatalf("approval = %+v", got)
	}
	// The model reads that the call did not run.
	msgs := s.do(t, call{method: "GET", path: fmt.Sprintf("/api/%s/conversations/%d/messages", user, conv), token: mustToken(t, user)})
	if !strings.Contains(string(msgs.body), "did not run") {
		t.Fatalf("messages = %s", msgs.body)
	}
}

func TestApprovalExpires(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New(), withApprovals(time.Millisecond, "delete_task"))
	user := storetest.UserID(t)
	_, a := s.waitingDelete(t, user, "add pay rent")
	if r := s.decide(t, user, a.ID, `{"approved": true}`); r.status != http.StatusConflict || !strings.Contains(string(r.body), "expired") {
		t.Fatalf("decision after expiry: %d %s", r.status, r.body)
	}
	if got := storedTitles(t, user); len(got) != 1 {
		t.Fatalf("tasks = %v", got)
	}
}

func TestApprovalIsItsUsersAlone(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New(), withApprovals(time.Hour, "delete_task"))
	owner, other := storetest.UserID(t), storetest.UserID(t)
	_, a := s.waitingDelete(t, owner, "add water plants")

	if r, _ := s.approval(t, other, a.ID); r.status != http.StatusNotFound {
		t.Fatalf("another user's GET: %d", r.status)
	}
	if r := s.decide(t, other, a.ID, `{"approved": true}`); r.status != http.StatusNotFound {
		t.Fatalf("another user's decision: %d %s", r.status, r.body)
	}
	if list, _ := s.waiting(t, other, ""); len(list) != 0 {
		t.Fatalf("another user sees %+v", list)
	}
	if got := storedTitles(t, owner); len(got) != 1 {
		t.Fatalf("tasks = %v", got)
	}
}

func TestApprovalDecisionRefusesBadInput(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New(), withApprovals(time.Hour, "delete_task"))
	user := storetest.UserID(t)
	_, a := s.waitingDelete(t, user, "add feed the cat")
	for _, tc := range []struct {
		path, body string
		status     int
	}{
		{fmt.Sprint(a.ID), `{}`, http.StatusBadRequest},
		{fmt.Sprint(a.ID), `{"approved": "yes"}`, http.StatusBadRequest},
		{fmt.Sprint(a.ID), `{"approved": false, "reason": "` + strings.Repeat("x", tasks.MaxReasonLength+1) + `"}`, http.StatusBadRequest},
		{"abc", `{"approved": true}`, http.StatusNotFound},
		{"999999999", `{"approved": true}`, http.StatusNotFound},
	} {
		r := s.do(t, call{method: "POST", path: "/api/" + user + "/approvals/" + tc.path, token: mustToken(t, user), body: tc.body})
		mustMatchSpec(t, "POST", "/api/{user_id}/approvals/{approval_id}", r.status, r.header, r.body)
		if r.status != tc.status {
			t.Errorf("POST …/approvals/%s %.40s: %d, want %d: %s", tc.path, tc.body, r.status, tc.status, r.body)
		}
	}
	if _, got := s.approval(t, user, a.ID); got.State != tasks.ApprovalPending {
		t.Fatalf("a refused decision changed the approval: %+v", got)
	}
	if _, next := s.waiting(t, user, "?limit=1"); next != nil {
		t.Fatalf("next_cursor %q after the only approval", *next)
	}
	if r := s.do(t, call{method: "GET", path: "/api/" + user + "/approvals?cursor=x", token: mustToken(t, user)}); r.status != http.StatusBadRequest {
		t.Fatalf("bad cursor: %d", r.status)
	}
}

func TestApprovalsListNewestFirstAPageAtATime(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New(), withApprovals(time.Hour, "delete_task"))
	user := storetest.UserID(t)
	var ids []int64
	for i := range 3 {
		conv := s.chatTurn(t, user, 0, fmt.Sprintf("add chore %d", i)).ConversationID
		resp := s.chatTurn(t, user, conv, fmt.Sprintf("delete task %d", i+1))
		ids = append(ids, resp.Approvals[0].ID)
	}
	page, next := s.waiting(t, user, "?limit=2")
	if len(page) != 2 || page[0].ID != ids[2] || page[1].ID != ids[1] || next == nil {
		t.Fatalf("first page = %+v, next %v", page, next)
	}
	page, next = s.waiting(t, user, "?limit=2&cursor="+*next)
	if len(page) != 1 || page[0].ID != ids[0] || next != nil {
		t.Fatalf("second page = %+v, next %v", page, next)
	}
}

func TestApprovalStreamsItsEvent(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New(), withApprovals(time.Hour, "delete_task"))
	user := storetest.UserID(t)
	conv := s.chatTurn(t, user, 0, "add buy stamps").ConversationID
	resp := s.stream(t, context.Background(), user, chatBody(conv, "delete task 1"), nil)
	defer resp.Body.Close()
	events, _ := readEvents(t, resp.Body)
	names := eventNames(events)
	if !strings.Contains(names, "tool_result,approval_required") || !strings.HasSuffix(names, ",done") {
		t.Fatalf("events = %s", names)
	}
	var a map[string]any
	for _, e := range events {
		if e.name == "approval_required" {
			a = e.data
		}
	}
	done := events[len(events)-1].data["approvals"].([]any)
	if a["summary"] != "Delete task 1, Buy stamps" || len(done) != 1 || done[0].(map[string]any)["id"] != a["id"] {
		t.Fatalf("approval event %v, done approvals %v", a, done)
	}

	// Decided with a stream, the turn continues as a streamed turn.
	req, _ := http.NewRequest("POST", fmt.Sprintf("%s/api/%s/approvals/%v", s.URL, user, a["id"]), strings.NewReader(`{"approved":true}`))
	req.Header.Set("Authorization", "Bearer "+mustToken(t, user))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	dec, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Body.Close()
	events, _ = readEvents(t, dec.Body)
	if names := eventNames(events); !strings.HasPrefix(names, "start,tool_call,tool_result") || !strings.HasSuffix(names, ",done") {
		t.Fatalf("continued events = %s", names)
	}
	if got := storedTitles(t, user); len(got) != 0 {
		t.Fatalf("tasks = %v", got)
	}
}

// Two replicas on one database decide the same approval at once: the call
// runs once.
func TestApprovalDecidedOnTwoReplicasAtOnce(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	a := mustServerOn(t, pool, offline.New(), withApprovals(time.Hour, "delete_task"))
	b := mustServerOn(t, pool, offline.New(), withApprovals(time.Hour, "delete_task"))
	user := storetest.UserID(t)
	_, ap := a.waitingDelete(t, user, "add mow the lawn")
	var wg sync.WaitGroup
	answers := make([]reply, 6)
	for i := range answers {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Go(func() { answers[i] = s.decide(t, user, ap.ID, `{"approved":true}`) })
	}
	wg.Wait()
	for i, r := range answers {
		if r.status != http.StatusOK {
			t.Fatalf("decision %d: %d %s", i, r.status, r.body)
		}
	}
	if n := deletions(t, user); n != 1 {
		t.Fatalf("the approved call ran %d times", n)
	}
}

// A replica that stopped between the decision and the call's run leaves
// the decision made and nothing run: the next decision request finishes it.
func TestApprovalDecidedBeforeACrashRunsOnTheNextRequest(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	s := mustServerOn(t, pool, offline.New(), withApprovals(time.Hour, "delete_task"))
	user := storetest.UserID(t)
	_, a := s.waitingDelete(t, user, "add sort the mail")
	// The decision is stored; its replica stops before it continues the turn.
	decideInTheStore(t, pool, user, a.ID)
	if got := storedTitles(t, user); len(got) != 1 {
		t.Fatalf("tasks = %v", got)
	}
	if r := s.decide(t, user, a.ID, `{"approved":true}`); r.status != http.StatusOK {
		t.Fatalf("the retried decision: %d %s", r.status, r.body)
	}
	if got := storedTitles(t, user); len(got) != 0 {
		t.Fatalf("tasks = %v: the decided call never ran", got)
	}
}

func mustJSON(tb testing.TB, v any) []byte {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// The AI SDK's own client answers a call that waits as useChat does:
// addToolApprovalResponse(), then the automatic send of the chat's
// messages, whose last part answers the approval. Approved, the call runs
// once and the reply's part shows its output; denied, it does not run.
func TestApprovalWithTheAISDK(t *testing.T) {
	t.Parallel()
	node, script := mustAISDK(t, "ui-chat.mjs")
	for _, approve := range []bool{true, false} {
		s := mustServer(t, offline.New(), withApprovals(time.Hour, "delete_task"))
		user := storetest.UserID(t)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		decision := "approve"
		if !approve {
			decision = "deny"
		}
		out, err := exec.CommandContext(ctx, node, script, s.URL+"/api/"+user+"/chat/ui", mustToken(t, user), "approval-chat", "approval", "-", decision).Output()
		if err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				t.Fatalf("%s: %v\n%s", script, err, ee.Stderr)
			}
			t.Fatal(err)
		}
		var run struct {
			Asked, Answered uiMessage
			Errors          []string
		}
		if err := json.Unmarshal(out, &run); err != nil {
			t.Fatalf("%s printed %q: %v", script, out, err)
		}
		if len(run.Errors) > 0 || run.Asked.tools() != "delete_task:approval-requested" {
			t.Fatalf("%s: the reply that asked = %+v, errors %v", decision, run.Asked, run.Errors)
		}
		want, tasksLeft := "delete_task:output-available", 0
		if !approve {
			want, tasksLeft = "delete_task:output-error", 1
		}
		if got := run.Answered.tools(); !strings.HasSuffix(got, want) {
			t.Fatalf("%s: the continued reply's tools = %s, want %s: %+v", decision, got, want, run.Answered)
		}
		if got := storedTitles(t, user); len(got) != tasksLeft {
			t.Fatalf("%s: tasks = %v", decision, got)
		}
		if n := deletions(t, user); n != 1-tasksLeft {
			t.Fatalf("%s: the call ran %d times", decision, n)
		}
	}
}

// A request of several parts goes on past the part that waits.
func TestApprovalKeepsTheRestOfTheRequestGoing(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New(), withApprovals(time.Hour, "delete_task"))
	user := storetest.UserID(t)
	conv := s.chatTurn(t, user, 0, "add buy milk").ConversationID
	resp := s.chatTurn(t, user, conv, "add eggs and delete task 1")
	if got := storedTitles(t, user); len(got) != 2 || got[1] != "Eggs" {
		t.Fatalf("tasks = %v", got)
	}
	if len(resp.Approvals) != 1 || resp.Approvals[0].Tool != "delete_task" ||
		!strings.Contains(resp.Response, "Added task 2") || !strings.Contains(resp.Response, "I'll delete task 1 (Buy milk) once you approve.") {
		t.Fatalf("reply %q, approvals %+v", resp.Response, resp.Approvals)
	}
}

// A model behind the OpenAI API asks for a call that waits, is told it
// waits, and, once the person approves it, reads the call's result in the
// history it is sent: one call of that id, with the result it got, which
// the OpenAI API accepts (every tool message answers a call of the
// assistant message before it).
func TestApprovalWithAnOpenAIModel(t *testing.T) {
	t.Parallel()
	fake := newFakeOpenAI(t,
		openaitest.Step{Calls: []agent.ToolCall{{ID: "call_del", Name: "delete_task", Arguments: `{"task_id":1}`}}},
		openaitest.Step{Text: "Task 1 will be deleted once you approve."},
		openaitest.Step{Text: "Deleted task 1."},
	)
	s := mustServer(t, fake.Model(), withApprovals(time.Hour, "delete_task"))
	user := storetest.UserID(t)
	addTask(t, user, "Buy milk")
	resp := s.chatTurn(t, user, 0, "delete the milk one")
	if len(resp.Approvals) != 1 || resp.Response != "Task 1 will be deleted once you approve." {
		t.Fatalf("turn = %+v", resp)
	}
	told := lastToolMessage(t, fake.Request(1))
	if tasks.AwaitingID(json.RawMessage(told)) != resp.Approvals[0].ID {
		t.Fatalf("the model was told %s", told)
	}

	r := s.decide(t, user, resp.Approvals[0].ID, `{"approved":true}`)
	if r.status != http.StatusOK || !strings.Contains(string(r.body), "Deleted task 1.") {
		t.Fatalf("decision: %d %s", r.status, r.body)
	}
	sent := fake.Request(2)["messages"].([]any)
	var calls, results int
	for _, m := range sent {
		m := m.(map[string]any)
		for _, c := range asSlice(m["tool_calls"]) {
			if c.(map[string]any)["id"] == "call_del" {
				calls++
			}
		}
		if m["role"] == "tool" {
			results++
			if m["tool_call_id"] != "call_del" || !strings.Contains(m["content"].(string), `"deleted"`) {
				t.Fatalf("tool message %v", m)
			}
		}
	}
	if calls != 1 || results != 1 {
		t.Fatalf("the continued model call holds %d calls and %d results of call_del: %v", calls, results, sent)
	}
	if got := storedTitles(t, user); len(got) != 0 {
		t.Fatalf("tasks = %v", got)
	}
}

func lastToolMessage(tb testing.TB, req map[string]any) string {
	tb.Helper()
	msgs := req["messages"].([]any)
	last := msgs[len(msgs)-1].(map[string]any)
	if last["role"] != "tool" {
		tb.Fatalf("the last message is %v", last)
	}
	return last["content"].(string)
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

// addTask adds a task for user straight through the service.
func addTask(tb testing.TB, user, title string) {
	tb.Helper()
	if _, err := tasks.NewService(store.NewTasks(storetest.Pool(tb))).Add(context.Background(), user, tasks.NewTask{Title: title, Description: ""}, nil); err != nil {
		tb.Fatal(err)
	}
}

// A decision sent while the turn that asked is still writing its reply
// waits for it, then continues the turn.
func TestApprovalDecidedWhileItsTurnStillWrites(t *testing.T) {
	t.Parallel()
	hold := make(chan struct{})
	fake := newFakeOpenAI(t,
		openaitest.Step{Calls: []agent.ToolCall{{ID: "call_del", Name: "delete_task", Arguments: `{"task_id":1}`}}},
		openaitest.Step{Text: "Task 1 will be deleted once you approve.", Wait: hold},
		openaitest.Step{Text: "Deleted task 1."},
	)
	s := mustServer(t, fake.Model(), withApprovals(time.Hour, "delete_task"))
	user := storetest.UserID(t)
	addTask(t, user, "Buy milk")
	asking := make(chan reply, 1)
	go func() { asking <- s.chat(t, user, 0, "delete the milk one") }()
	var id int64
	waitFor(t, "the approval", func() bool {
		if list, _ := s.waiting(t, user, ""); len(list) == 1 {
			id = list[0].ID
		}
		return id != 0
	})
	deciding := make(chan reply, 1)
	go func() { deciding <- s.decide(t, user, id, `{"approved":true}`) }()
	waitFor(t, "the decision made, waiting for the turn", func() bool {
		_, a := s.approval(t, user, id)
		return a.State == tasks.ApprovalApproved
	})
	close(hold)
	if r := <-asking; r.status != http.StatusOK {
		t.Fatalf("the asking turn: %d %s", r.status, r.body)
	}
	if r := <-deciding; r.status != http.StatusOK || !strings.Contains(string(r.body), "Deleted task 1.") {
		t.Fatalf("the decision: %d %s", r.status, r.body)
	}
	if got := storedTitles(t, user); len(got) != 0 {
		t.Fatalf("tasks = %v", got)
	}
}

// A decision made whose turn never went on (its replica stopped), then a
// new message: the call never runs, and the approval says so.
func TestApprovalDecidedThenSupersededReadsSuperseded(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	s := mustServerOn(t, pool, offline.New(), withApprovals(time.Hour, "delete_task"))
	user := storetest.UserID(t)
	conv, a := s.waitingDelete(t, user, "add sort the mail")
	decideInTheStore(t, pool, user, a.ID)
	s.chatTurn(t, user, conv, "show my tasks")
	if _, got := s.approval(t, user, a.ID); got.State != tasks.ApprovalSuperseded {
		t.Fatalf("approval = %+v, want superseded: its call never ran", got)
	}
	if r := s.decide(t, user, a.ID, `{"approved":true}`); r.status != http.StatusConflict {
		t.Fatalf("decision again: %d %s", r.status, r.body)
	}
	if got := storedTitles(t, user); len(got) != 1 {
		t.Fatalf("tasks = %v", got)
	}
}

// A model that numbers its calls afresh in each response ("0", "0"…):
// each call of the turn gets an id of its own, and the approved call runs.
func TestApprovalWithAModelThatReusesCallIDs(t *testing.T) {
	t.Parallel()
	fake := newFakeOpenAI(t,
		openaitest.Step{Calls: []agent.ToolCall{{ID: "0", Name: "delete_task", Arguments: `{"task_id":1}`}}},
		openaitest.Step{Calls: []agent.ToolCall{{ID: "0", Name: "list_tasks", Arguments: `{}`}}},
		openaitest.Step{Text: "Task 1 will be deleted once you approve."},
		openaitest.Step{Text: "Deleted task 1."},
	)
	s := mustServer(t, fake.Model(), withApprovals(time.Hour, "delete_task"))
	user := storetest.UserID(t)
	addTask(t, user, "Buy milk")
	resp := s.chatTurn(t, user, 0, "delete the milk one")
	if len(resp.Approvals) != 1 || len(resp.ToolCalls) != 2 || resp.ToolCalls[0].ID == resp.ToolCalls[1].ID {
		t.Fatalf("turn = %+v", resp)
	}
	if r := s.decide(t, user, resp.Approvals[0].ID, `{"approved":true}`); r.status != http.StatusOK {
		t.Fatalf("decision: %d %s", r.status, r.body)
	}
	if got := storedTitles(t, user); len(got) != 0 {
		t.Fatalf("approved, but the call never ran: tasks %v", got)
	}
}

// A regenerated reply whose call still waits asks for it again.
func TestApprovalAskedAgainByARegeneratedReply(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New(), withApprovals(time.Hour, "delete_task"))
	user := storetest.UserID(t)
	s.ui(t, user, uiBody("regen-appr", "submit-message", "", "add buy milk"), nil)
	first := s.ui(t, user, uiBody("regen-appr", "submit-message", "", "delete task 1"), nil)
	if !strings.Contains(string(first.body), `"tool-approval-request"`) || !strings.Contains(string(first.body), `"data-approval"`) {
		t.Fatalf("the first reply asks for nothing: %s", first.body)
	}
	_, turnID := mustLastTurn(t, user)
	again := s.ui(t, user, uiBody("regen-appr", "regenerate-message", fmt.Sprintf("reply-%d", turnID), "delete task 1"), nil)
	if !strings.Contains(string(again.body), `"tool-approval-request"`) {
		t.Fatalf("the approval still waits, but the regenerated reply does not ask for it: %s", again.body)
	}
	if list, _ := s.waiting(t, user, ""); len(list) != 1 {
		t.Fatalf("waiting = %+v", list)
	}
}

// The turn rate refuses a decision before it is made.
func TestApprovalRefusedByTheTurnRateIsNotMade(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New(), withApprovals(time.Hour, "delete_task"), func(c *serverConfig) { c.chat.TurnRate = tasks.Rate{PerMinute: 1, Burst: 2} })
	user := storetest.UserID(t)
	_, a := s.waitingDelete(t, user, "add wash the car")
	if r := s.decide(t, user, a.ID, `{"approved":true}`); r.status != http.StatusTooManyRequests {
		t.Fatalf("decision over the rate: %d %s", r.status, r.body)
	}
	if _, got := s.approval(t, user, a.ID); got.State != tasks.ApprovalPending {
		t.Fatalf("a refused decision was made: %+v", got)
	}
}

// An approved call whose task changed since the person saw it does not run.
func TestApprovalOfATaskChangedSinceDoesNotRun(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New(), withApprovals(time.Hour, "delete_task"))
	user := storetest.UserID(t)
	_, a := s.waitingDelete(t, user, "add buy milk")
	title := "Pay the rent"
	if _, err := tasks.NewService(store.NewTasks(storetest.Pool(t))).Update(context.Background(), user, 1, tasks.TaskUpdate{Title: &title}, nil); err != nil {
		t.Fatal(err)
	}
	r := s.decide(t, user, a.ID, `{"approved":true}`)
	if r.status != http.StatusOK || !strings.Contains(string(r.body), `Pay the rent`) {
		t.Fatalf("decision: %d %s", r.status, r.body)
	}
	if got := storedTitles(t, user); len(got) != 1 || got[0] != title {
		t.Fatalf("the person approved %q, and the tasks are %v", a.Summary, got)
	}
}
