package http

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/agent/agenttest"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/tasks"
)

// The turn's central promise, tried under every fault at every step: a
// tool's effect and its audit row commit together or not at all, no retry
// runs a committed tool call again, a turn cut short is finished by whoever
// comes next, and a client that can still hear is told what was done.
//
// Each case runs one turn whose model adds two tasks, one per round, then
// replies; a fault strikes once, at one step of that turn:
//
//	step 1: before the first tool    (during model call 1)
//	step 2: between the two tools    (during model call 2, after the first committed)
//	step 3: after the last tool      (during model call 3, before the final write)
//	step 4: during the final write
//
// The faults: the replica crashes (its database connections die and its
// client is gone: nothing it does afterwards reaches the database; at step
// 4 the write commits and the answer is lost), the database is cut and the
// turn goes on, or the user deletes the conversation. Then the database
// comes back, the turn's claim and key lock lapse (time passes), and the
// client does what a client does: retries with its key, or reads the
// conversation.
func TestExactlyOnceUnderFaults(t *testing.T) {
	for _, fault := range []string{"crash", "outage", "delete"} {
		for step := 1; step <= 4; step++ {
			for _, stream := range []bool{false, true} {
				for _, keyed := range []bool{false, true} {
					name := fmt.Sprintf("%s/step %d/%s/%s", fault, step, map[bool]string{false: "json", true: "sse"}[stream], map[bool]string{false: "no key", true: "key"}[keyed])
					t.Run(name, func(t *testing.T) {
						// A crash or an outage cuts the package's database, so
						// those cases run one at a time (and the whole test runs
						// alone); a delete touches only its user, and those cases
						// run in parallel, once the others are done.
						if fault == "delete" {
							t.Parallel()
						}
						runFaultCase(t, faultCase{fault: fault, step: step, stream: stream, keyed: keyed})
					})
				}
			}
		}
	}
}

type faultCase struct {
	fault         string
	step          int
	stream, keyed bool
}

// changed is how many tasks the turn made before the fault: the tools that
// ran before it.
func (c faultCase) changed() int { return min(c.step-1, 2) }

func runFaultCase(t *testing.T, c faultCase) {
	user := storetest.UserID(t)
	clientCtx, clientGone := context.WithCancel(context.Background())
	defer clientGone()
	var s *testServer
	var armed, dead atomic.Bool
	armed.Store(true)
	restore := func() {}
	strike := func(ctx context.Context) {
		switch c.fault {
		case "crash":
			dead.Store(true)
			restore = storetest.CutDatabase(t)
			clientGone()
			s.hub.Interrupt() // the process dies: its turns end with it
			if ctx != nil {
				waitDone(t, ctx)
			}
		case "outage":
			restore = storetest.CutDatabase(t)
		case "delete":
			id := mustConversationOf(t, user)
			if r := s.do(t, call{method: "DELETE", path: fmt.Sprintf("/api/%s/conversations/%d", user, id), token: mustToken(t, user)}); r.status != 204 {
				t.Errorf("delete during the turn = %d %s", r.status, r.body)
			}
		}
	}
	model := twoAdds(func(ctx context.Context, call int) {
		if call == c.step && armed.CompareAndSwap(true, false) {
			strike(ctx)
		}
	})
	s = mustServer(t, model, func(cfg *serverConfig) {
		cfg.wrapTurns = func(inner tasks.TurnStore) tasks.TurnStore {
			return &faultyTurns{TurnStore: inner, dead: &dead, finish: func(write func() error) error {
				if c.step != 4 || !armed.CompareAndSwap(true, false) {
					return write()
				}
				if c.fault == "crash" { // the write commits; the replica dies before it hears so
					err := write()
					strike(nil)
					if err == nil {
						err = errCrashed
					}
					if err != nil {
						return err
					}
					return errors.New("connection lost")
				}
				strike(nil)
				return write()
			}}
		}
	})
	message := "Add two tasks"
	header := http.Header{}
	if c.keyed {
		header = keyed("key-" + user)
	}

	first := sendTurn(t, s, clientCtx, user, message, header, c.stream)
	if c.fault == "crash" {
		// The crashed replica's turn has ended once its conversation's
		// claim is all that is left of it; then a new replica takes over.
		waitFor(t, "the crashed turn to end", func() bool {
			return strings.Contains(s.logs.String(), `"path":"/api/`+user+`/chat"`) // its access log line
		})
	}
	restore()
	mustReach(t)
	dead.Store(false) // the replica that answers from now on is a new one
	want := c.changed()
	if got := mustAuditedTasks(t, user); got != want {
		t.Fatalf("after the fault: %d tasks, want %d", got, want)
	}
	if c.fault != "crash" {
		mustBeToldTheTruth(t, c, first)
	}
	if c.fault == "delete" && strings.Contains(s.logs.String(), `"level":"ERROR"`) {
		t.Errorf("a deleted conversation logged an error:\n%s", s.logs)
	}
	mustLetTimePass(t, user)

	if c.keyed {
		again := sendTurn(t, s, context.Background(), user, message, header, c.stream)
		if again.status != 200 {
			t.Fatalf("keyed retry = %d %s", again.status, again.body)
		}
		got := mustAuditedTasks(t, user)
		switch {
		case want > 0 && got != want:
			t.Fatalf("the keyed retry ran the tools again: %d tasks, want %d", got, want)
		case want > 0 && !again.replayed:
			t.Fatalf("the keyed retry was not a replay: %s", again.body)
		case want > 0 && len(again.outcome["tool_calls"].([]any)) < want:
			t.Fatalf("the replay does not show the %d changes: %s", want, again.body)
		case want > 0 && (again.outcome["interrupted"] == true) != (c.fault != "crash" || c.step != 4):
			// Only the crash during the final write stored the whole turn.
			t.Fatalf("the replay's interrupted flag is wrong: %s", again.body)
		case want == 0 && got != 2:
			t.Fatalf("a retry of a turn that changed nothing should run: %d tasks", got)
		}
	}
	if c.fault != "delete" {
		mustShowWhatHappened(t, s, user, want)
	}
	if got, again := mustAuditedTasks(t, user), mustAuditedTasks(t, user); got != again {
		t.Fatalf("unstable: %d then %d", got, again)
	}
}

// twoAdds is a model that adds a task, then another, one per round, then
// replies. Before each call it runs before(ctx, n) with the call's number
// in the turn, from 1.
func twoAdds(before func(ctx context.Context, call int)) agent.Model {
	return agenttest.ModelFunc(func(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
		done := 0 // the tool results since the turn's user message
		for _, m := range req.Messages {
			switch m.Role {
			case agent.RoleUser:
				done = 0
			case agent.RoleTool:
				done++
			}
		}
		before(ctx, done+1)
		if err := ctx.Err(); err != nil {
			return agent.Response{}, err
		}
		if done < 2 {
			title := []string{"First of two", "Second of two"}[done]
			return agent.Response{ToolCalls: []agent.ToolCall{{ID: fmt.Sprintf("call_%d", done+1), Name: "add_task", Arguments: `{"title":"` + title + `"}`}}}, nil
		}
		onText("Added both.")
		return agent.Response{Text: "Added both."}, nil
	})
}

// faultyTurns lets a test act around the engine's final write: finish
// decides whether and when write, the real FinishTurn, runs. Once dead is
// set, the replica has crashed: nothing it tries reaches the database, not
// even after the database is back.
type faultyTurns struct {
	tasks.TurnStore
	finish func(write func() error) error
	dead   *atomic.Bool
}

var errCrashed = errors.New("the replica crashed")

func (f *faultyTurns) FinishTurn(ctx context.Context, e tasks.TurnEnd) (tasks.Message, error) {
	var m tasks.Message
	err := f.finish(func() error {
		if f.dead.Load() {
			return errCrashed
		}
		var err error
		m, err = f.TurnStore.FinishTurn(ctx, e)
		return err
	})
	if f.dead.Load() {
		return tasks.Message{}, errCrashed
	}
	return m, err
}

func (f *faultyTurns) StartTurn(ctx context.Context, s tasks.TurnStart) (tasks.Turn, error) {
	if f.dead.Load() {
		return tasks.Turn{}, errCrashed
	}
	return f.TurnStore.StartTurn(ctx, s)
}

func (f *faultyTurns) AbandonTurn(ctx context.Context, userID string, conversationID int64, claimToken string) error {
	if f.dead.Load() {
		return errCrashed
	}
	return f.TurnStore.AbandonTurn(ctx, userID, conversationID, claimToken)
}

func (f *faultyTurns) ForgetIdempotent(ctx context.Context, userID, key string) error {
	if f.dead.Load() {
		return errCrashed
	}
	return f.TurnStore.ForgetIdempotent(ctx, userID, key)
}

func (f *faultyTurns) CompleteIdempotent(ctx context.Context, userID, key string, response json.RawMessage) error {
	if f.dead.Load() {
		return errCrashed
	}
	return f.TurnStore.CompleteIdempotent(ctx, userID, key, response)
}

// turnAnswer is what a client heard of a turn: a JSON body (outcome or
// problem), or a stream's last event; status 0 when it heard nothing.
type turnAnswer struct {
	status   int
	replayed bool
	body     string
	outcome  map[string]any // the chat response, or the problem / error event
}

func sendTurn(t *testing.T, s *testServer, ctx context.Context, user, message string, header http.Header, stream bool) turnAnswer {
	t.Helper()
	if !stream {
		req, _ := http.NewRequestWithContext(ctx, "POST", s.URL+"/api/"+user+"/chat", strings.NewReader(chatBody(0, message)))
		req.Header.Set("Authorization", "Bearer "+mustToken(t, user))
		req.Header.Set("Content-Type", "application/json")
		for k, v := range header {
			req.Header[k] = v
		}
		resp, err := s.Client().Do(req)
		if err != nil {
			return turnAnswer{} // the client is gone
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatalf("answer %d is not JSON: %v", resp.StatusCode, err)
		}
		b, _ := json.Marshal(out)
		return turnAnswer{status: resp.StatusCode, replayed: resp.Header.Get("Idempotent-Replayed") == "true", body: string(b), outcome: out}
	}
	resp := s.stream(t, ctx, user, chatBody(0, message), header)
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		b, _ := json.Marshal(out)
		return turnAnswer{status: resp.StatusCode, body: string(b), outcome: out}
	}
	events := readEventsUntilGone(resp)
	if len(events) == 0 {
		return turnAnswer{}
	}
	last := events[len(events)-1]
	b, _ := json.Marshal(last.data)
	a := turnAnswer{body: last.name + " " + string(b), outcome: last.data, replayed: resp.Header.Get("Idempotent-Replayed") == "true"}
	switch last.name {
	case "done":
		a.status = 200
	case "error":
		a.status = codeStatus[fmt.Sprint(last.data["code"])]
	}
	return a
}

// readEventsUntilGone parses a stream that may end abruptly, when its
// client gives up.
func readEventsUntilGone(resp *http.Response) []sseEvent {
	var events []sseEvent
	var cur sseEvent
	buf := make([]byte, 0, 4096)
	chunk := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(chunk)
		buf = append(buf, chunk[:n]...)
		if err != nil {
			break
		}
	}
	for _, line := range strings.Split(string(buf), "\n") {
		switch {
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			_ = json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &cur.data)
		case line == "" && cur.name != "":
			events = append(events, cur)
			cur = sseEvent{}
		}
	}
	return events
}

// mustBeToldTheTruth checks what a client that could still hear was told:
// the failure, and, when tasks were changed, exactly those changes.
func mustBeToldTheTruth(t *testing.T, c faultCase, a turnAnswer) {
	t.Helper()
	wantStatus := map[string]int{"outage": 503, "delete": 404}[c.fault]
	if a.status != wantStatus {
		t.Fatalf("the client heard %d %s, want %d", a.status, a.body, wantStatus)
	}
	calls, _ := a.outcome["tool_calls"].([]any)
	if len(calls) != c.changed() {
		t.Fatalf("the client was told of %d changes, want %d: %s", len(calls), c.changed(), a.body)
	}
	text := fmt.Sprint(a.outcome["detail"], a.outcome["message"])
	if c.changed() > 0 && !strings.Contains(text, "Added task") {
		t.Fatalf("the error does not say what was done: %s", a.body)
	}
}

// mustShowWhatHappened reads the conversation as a client would and checks
// that every change the turn made is shown, attached to a reply: the
// final one, or an interrupted one when the turn was cut short.
func mustShowWhatHappened(t *testing.T, s *testServer, user string, changed int) {
	t.Helper()
	id := mustConversationOf(t, user)
	r := s.do(t, call{method: "GET", path: fmt.Sprintf("/api/%s/conversations/%d/messages", user, id), token: mustToken(t, user)})
	if r.status != 200 {
		t.Fatalf("messages = %d %s", r.status, r.body)
	}
	shown := 0
	for _, m := range r.json(t)["messages"].([]any) {
		for _, c := range m.(map[string]any)["tool_calls"].([]any) {
			if c.(map[string]any)["is_error"] == false {
				shown++
			}
		}
	}
	if shown < changed {
		t.Fatalf("the conversation shows %d successful calls, want at least %d: %s", shown, changed, r.body)
	}
	var unattached int
	mustQuery(t, `SELECT count(*) FROM tool_calls WHERE user_id = $1 AND conversation_id IS NOT NULL AND message_id IS NULL`, []any{user}, &unattached)
	if unattached != 0 {
		t.Fatalf("%d recorded calls are still without a reply after the conversation was read", unattached)
	}
}

// mustAuditedTasks returns how many tasks the user has, failing if any of
// them lacks the audit row of the call that created it.
func mustAuditedTasks(t *testing.T, user string) int {
	t.Helper()
	var n, unaudited int
	mustQuery(t, `
		SELECT count(*), count(*) FILTER (WHERE NOT EXISTS (
			SELECT 1 FROM tool_calls c
			WHERE c.user_id = t.user_id AND c.tool = 'add_task' AND NOT c.is_error AND (c.result->>'task_id')::bigint = t.number))
		FROM tasks t WHERE user_id = $1`, []any{user}, &n, &unaudited)
	if unaudited != 0 {
		t.Fatalf("%d of %d tasks have no audit row", unaudited, n)
	}
	return n
}

func mustConversationOf(t *testing.T, user string) int64 {
	t.Helper()
	var id int64
	mustQuery(t, `SELECT coalesce(min(number), 0) FROM conversations WHERE user_id = $1`, []any{user}, &id)
	if id == 0 {
		t.Fatal("the user has no conversation")
	}
	return id
}

// mustLetTimePass makes the user's claims and key locks lapse, as they do
// once a crashed replica's turn would have ended.
func mustLetTimePass(t *testing.T, user string) {
	t.Helper()
	var n int
	mustQuery(t, `
		WITH c AS (UPDATE conversations SET claimed_until = now() - interval '1 second' WHERE user_id = $1 AND claimed_until IS NOT NULL),
		     k AS (UPDATE idempotency_keys SET locked_until = now() - interval '1 second' WHERE user_id = $1 AND locked_until IS NOT NULL)
		SELECT 1`, []any{user}, &n)
}

// mustReach waits until the database answers again after an outage.
func mustReach(t *testing.T) {
	t.Helper()
	waitFor(t, "the database", func() bool { return storetest.Pool(t).Ping(context.Background()) == nil })
}

func mustQuery(t *testing.T, sql string, args []any, dest ...any) {
	t.Helper()
	var err error
	for range 20 { // the first use of a pool after an outage may meet a dead connection
		if err = storetest.Pool(t).QueryRow(context.Background(), sql, args...).Scan(dest...); err == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s: %v", sql, err)
}

func waitDone(t *testing.T, ctx context.Context) {
	t.Helper()
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Error("the turn did not notice its client was gone")
	}
}
