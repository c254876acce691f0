package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskchat/taskchat/internal/mcptools"
	"github.com/taskchat/taskchat/internal/store"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/tasks"
)

// scripted is a Model that answers from a script, one Response per call,
// streaming each text in two pieces. After the script it repeats the last
// answer. It records every request it got.
type scripted struct {
	mu       sync.Mutex
	script   []Response
	requests []Request
	block    bool // after the first text piece, wait for ctx to end
}

func (s *scripted) Name() string { return "scripted" }

func (s *scripted) Stream(ctx context.Context, req Request, onText func(string)) (Response, error) {
	s.mu.Lock()
	n := len(s.requests)
	s.requests = append(s.requests, req)
	resp := s.script[min(n, len(s.script)-1)]
	s.mu.Unlock()
	if resp.Text != "" {
		half := len(resp.Text) / 2
		onText(resp.Text[:half])
		if s.block {
			<-ctx.Done()
			return Response{}, ctx.Err()
		}
		onText(resp.Text[half:])
	}
	return resp, nil
}

func (s *scripted) calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

func callTool(id, name, args string) Response {
	return Response{ToolCalls: []ToolCall{{ID: id, Name: name, Arguments: args}}, Usage: Usage{TotalTokens: 10}}
}

func answer(text string) Response { return Response{Text: text, Usage: Usage{TotalTokens: 5}} }

// mustTaskTools connects a fresh user's real task tools on PostgreSQL.
func mustTaskTools(tb testing.TB) *mcp.ClientSession {
	tb.Helper()
	svc := tasks.NewService(store.NewTasks(storetest.Pool(tb)))
	cs, err := mcptools.Connect(context.Background(), storetest.UserID(tb), svc)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cs.Close() })
	return cs
}

// recorder collects a turn's events as compact strings.
type recorder struct{ events []string }

func (r *recorder) observe(e Event) {
	switch e.Kind {
	case EventDelta:
		r.events = append(r.events, "delta:"+e.Text)
	case EventToolCall:
		r.events = append(r.events, "call:"+e.Call.Tool+string(e.Call.Arguments))
	case EventToolResult:
		r.events = append(r.events, fmt.Sprintf("result:%s:%v", e.Call.Tool, e.Call.IsError))
	case EventDone:
		r.events = append(r.events, "done:"+string(e.Result.Stop))
	}
}

func TestRunEventsInOrder(t *testing.T) {
	t.Parallel()
	model := &scripted{script: []Response{
		{Text: "Let me add that.", ToolCalls: []ToolCall{{ID: "c1", Name: "add_task", Arguments: `{"title":"Buy milk"}`}}},
		answer("Added task: Buy milk."),
	}}
	rec := &recorder{}
	res, err := Run(context.Background(), Input{Limits: testLimits(), Model: model, Tools: SessionTools(mustTaskTools(t)), Message: "add buy milk", Observer: rec.observe})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"delta:Let me a", "delta:dd that.",
		`call:add_task{"title":"Buy milk"}`, "result:add_task:false",
		"delta:\n\n", "delta:Added task", "delta:: Buy milk.",
		"done:completed",
	}
	if strings.Join(rec.events, "|") != strings.Join(want, "|") {
		t.Fatalf("events\n got %q\nwant %q", rec.events, want)
	}
	if res.Reply != "Let me add that.\n\nAdded task: Buy milk." || res.Stop != StopCompleted || res.Usage.TotalTokens != 5 {
		t.Fatalf("result = %+v", res)
	}
	if len(res.Calls) != 1 || res.Calls[0].IsError || !strings.Contains(string(res.Calls[0].Result), `"status":"created"`) {
		t.Fatalf("calls = %+v", res.Calls)
	}
	// The second model call saw the call and its result.
	second := model.requests[1].Messages
	if len(second) != 3 || second[1].ToolCalls[0].ID != "c1" || second[2].ToolCallID != "c1" || !strings.Contains(second[2].Content, "Buy milk") {
		t.Fatalf("second request messages = %+v", second)
	}
	if len(model.requests[0].Tools) != 5 {
		t.Fatalf("tools given to the model = %d, want 5", len(model.requests[0].Tools))
	}
}

func TestRunModelCallLimit(t *testing.T) {
	t.Parallel()
	model := &scripted{script: []Response{callTool("c", "list_tasks", `{}`)}}
	res, err := Run(context.Background(), Input{Model: model, Tools: SessionTools(mustTaskTools(t)), Message: "loop forever", Limits: limitsWith(func(l *Limits) { l.MaxModelCalls = 3 })})
	if err != nil {
		t.Fatal(err)
	}
	if model.calls() != 3 || res.Stop != StopMaxModelCalls || len(res.Calls) != 3 || !strings.Contains(res.Reply, "more steps") {
		t.Fatalf("model calls %d, result %+v", model.calls(), res)
	}
}

func TestRunToolCallLimit(t *testing.T) {
	t.Parallel()
	many := Response{}
	for i := range 5 {
		many.ToolCalls = append(many.ToolCalls, ToolCall{ID: fmt.Sprint("c", i), Name: "list_tasks", Arguments: `{}`})
	}
	model := &scripted{script: []Response{many, answer("never reached")}}
	res, err := Run(context.Background(), Input{Model: model, Tools: SessionTools(mustTaskTools(t)), Message: "x", Limits: limitsWith(func(l *Limits) { l.MaxToolCalls = 3 })})
	if err != nil || res.Stop != StopMaxToolCalls || len(res.Calls) != 3 || model.calls() != 1 {
		t.Fatalf("err %v, model calls %d, result %+v", err, model.calls(), res)
	}
}

func TestRunTokenLimit(t *testing.T) {
	t.Parallel()
	model := &scripted{script: []Response{{ToolCalls: []ToolCall{{ID: "c", Name: "list_tasks", Arguments: `{}`}}, Usage: Usage{TotalTokens: 600}}}}
	res, err := Run(context.Background(), Input{Model: model, Tools: SessionTools(mustTaskTools(t)), Message: "x", Limits: limitsWith(func(l *Limits) { l.MaxTokens = 500 })})
	if err != nil || res.Stop != StopMaxTokens || len(res.Calls) != 0 || res.Usage.TotalTokens != 600 {
		t.Fatalf("err %v, result %+v", err, res)
	}
}

func TestRunToolFailuresBecomeResults(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, tool, args, want string
	}{
		{"tool error", "complete_task", `{"task_id":999999}`, "Task 999999 was not found."},
		{"unknown tool", "launch_rockets", `{}`, `Unknown tool \"launch_rockets\"`},
		{"malformed arguments", "add_task", `{"title": "unterminated`, "must be a JSON object"},
		{"arguments not an object", "add_task", `["Buy milk"]`, "must be a JSON object"},
		{"null arguments", "add_task", `null`, "must be a JSON object"},
		{"object then more", "add_task", `{"title": "a"} {}`, "must be a JSON object"},
		{"schema violation", "add_task", `{"title":"x","user_id":"someone"}`, "user_id"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			model := &scripted{script: []Response{callTool("c1", c.tool, c.args), answer("Sorry about that.")}}
			res, err := Run(context.Background(), Input{Limits: testLimits(), Model: model, Tools: SessionTools(mustTaskTools(t)), Message: "x"})
			if err != nil || res.Stop != StopCompleted {
				t.Fatalf("the turn must go on: err %v, result %+v", err, res)
			}
			got := res.Calls[0]
			if !got.IsError || !strings.Contains(string(got.Result), c.want) {
				t.Fatalf("result = %s (isError %v), want an error containing %q", got.Result, got.IsError, c.want)
			}
			if seen := model.requests[1].Messages; seen[len(seen)-1].Content != string(got.Result) {
				t.Fatalf("the model did not get the error back: %+v", seen[len(seen)-1])
			}
		})
	}
}

// An argument a model sets to null is taken as left out, as the models
// that write one mean it: the call runs, and is recorded, without it.
func TestRunToolTakesNullAsLeftOut(t *testing.T) {
	t.Parallel()
	cs := mustTaskTools(t)
	for _, c := range []struct{ tool, args, want, ran string }{
		{"add_task", `{"title":"Buy milk","description":null}`, `"title":"Buy milk"`, `{"title":"Buy milk"}`},
		{"list_tasks", `{"status":null,"query":null,"limit":null,"cursor":null}`, `"tasks":[{`, `{}`},
		{"update_task", `{"task_id":1,"title":null,"description":"semi-skimmed"}`, `"title":"Buy milk"`, `{"task_id":1,"description":"semi-skimmed"}`},
		{"update_task", `{"task_id":1, "title" : null , "description":null}`, "give at least one of title, description, due, priority or completed", `{"task_id":1}`},
		// A model's null is left out even where the tool would take null
		// to clear the field: a model that fills every argument with null
		// must not clear a due date it never mentioned; it clears with "".
		{"update_task", `{"task_id":1,"due":"2026-12-04","priority":"high"}`, `"due":"2026-12-04","priority":"high"`, `{"task_id":1,"due":"2026-12-04","priority":"high"}`},
		{"update_task", `{"task_id":1,"title":"Buy milk","description":null,"due":null,"priority":null,"completed":null}`, `"due":"2026-12-04","priority":"high"`, `{"task_id":1,"title":"Buy milk"}`},
		{"update_task", `{"task_id":1,"due":"","priority":""}`, `"task_id":1,"title":"Buy milk"}`, `{"task_id":1,"due":"","priority":""}`},
		{"add_task", `{"title":null}`, "title", `{}`},
		{"list_tasks", `{"query":"null"}`, `"tasks":[]`, `{"query":"null"}`},
		{"add_task", `{ "title" : "Fix <b> & c",  "description":null }`, `"title":"Fix \u003cb\u003e \u0026 c"`, `{"title" : "Fix <b> & c"}`},
		{"add_task", `{"description":null,"title":"Fix \u00e9"}`, `"title":"Fix é"`, `{"title":"Fix \u00e9"}`},
	} {
		model := &scripted{script: []Response{callTool("c1", c.tool, c.args), answer("ok")}}
		res, err := Run(context.Background(), Input{Limits: testLimits(), Model: model, Tools: SessionTools(cs), Message: "x"})
		if err != nil || len(res.Calls) != 1 {
			t.Fatalf("%s(%s): err %v, result %+v", c.tool, c.args, err, res)
		}
		got := res.Calls[0]
		if !strings.Contains(string(got.Result), c.want) || string(got.Arguments) != c.ran {
			t.Errorf("%s(%s) = %s (isError %v), recorded with %s; want a result holding %s, recorded with %s",
				c.tool, c.args, got.Result, got.IsError, got.Arguments, c.want, c.ran)
		}
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "list_tasks"})
	if err != nil {
		t.Fatal(err)
	}
	list, _ := json.Marshal(res.StructuredContent)
	if !strings.Contains(string(list), `"description":"semi-skimmed"`) || strings.Count(string(list), `"title":"Buy milk"`) != 1 {
		t.Fatalf("tasks after the calls: %s", list)
	}
}

func TestRunToolTimeout(t *testing.T) {
	t.Parallel()
	server := mcp.NewServer(&mcp.Implementation{Name: "slow"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "slow"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		<-ctx.Done()
		return nil, nil, ctx.Err()
	})
	st, ct := mcp.NewInMemoryTransports()
	if _, err := server.Connect(context.Background(), st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	model := &scripted{script: []Response{callTool("c1", "slow", `{}`), answer("It timed out.")}}
	res, err := Run(context.Background(), Input{Model: model, Tools: SessionTools(cs), Message: "x", Limits: limitsWith(func(l *Limits) { l.ToolTimeout = 20 * time.Millisecond })})
	if err != nil || res.Stop != StopCompleted {
		t.Fatalf("err %v, result %+v", err, res)
	}
	if c := res.Calls[0]; !c.IsError || !strings.Contains(string(c.Result), "timed out after 20ms") {
		t.Fatalf("call = %+v (%s)", c, c.Result)
	}
}

func TestRunCanceledMidStream(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	model := &scripted{script: []Response{answer("Half of a long answer")}, block: true}
	var done *Event
	res, err := Run(ctx, Input{Limits: testLimits(), Model: model, Tools: SessionTools(mustTaskTools(t)), Message: "x", Observer: func(e Event) {
		if e.Kind == EventDelta {
			cancel() // the client went away after the first delta
		}
		if e.Kind == EventDone {
			done = &e
		}
	}})
	if !errors.Is(err, context.Canceled) || res.Stop != StopCanceled || res.Reply != "Half of a " {
		t.Fatalf("err %v, result %+v", err, res)
	}
	if done == nil || done.Result.Stop != StopCanceled {
		t.Fatalf("the done event is sent on cancellation too: %+v", done)
	}
}

func TestRunDeadlineIsAModelTimeout(t *testing.T) {
	t.Parallel()
	model := &scripted{script: []Response{answer("never finished")}, block: true}
	_, err := Run(context.Background(), Input{Model: model, Tools: SessionTools(mustTaskTools(t)), Message: "x", Limits: limitsWith(func(l *Limits) { l.TurnTimeout = 30 * time.Millisecond })})
	if !errors.Is(err, ErrModelTimeout) {
		t.Fatalf("err = %v, want a model timeout", err)
	}
}

// The turn's deadline is the turn's, wherever it passes: a turn whose tools
// are still being listed when it runs out is a model timeout too, and one
// whose caller leaves then is canceled, like a turn waiting on its model.
func TestRunDeadlineWhileListingToolsIsAModelTimeout(t *testing.T) {
	t.Parallel()
	model := &scripted{script: []Response{answer("never asked")}}
	lim := limitsWith(func(l *Limits) { l.TurnTimeout = 30 * time.Millisecond })
	res, err := Run(context.Background(), Input{Model: model, Tools: slowTools{}, Message: "x", Limits: lim})
	if !errors.Is(err, ErrModelTimeout) || res.Stop != StopModelError {
		t.Fatalf("err = %v, stop %v, want a model timeout", err, res.Stop)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err = Run(ctx, Input{Model: model, Tools: slowTools{}, Message: "x", Limits: testLimits()})
	if !errors.Is(err, context.Canceled) || res.Stop != StopCanceled {
		t.Fatalf("err = %v, stop %v, want canceled", err, res.Stop)
	}
}

// slowTools lists its tools only when the context ends, with its error.
type slowTools struct{}

func (slowTools) Definitions(ctx context.Context) ([]ToolDef, error) {
	<-ctx.Done()
	return nil, fmt.Errorf("list tools: %w", ctx.Err())
}

func (slowTools) Call(context.Context, Call) (*mcp.CallToolResult, error) {
	panic("no tool is called before the tools are listed")
}

func TestRunModelErrorIsReturned(t *testing.T) {
	t.Parallel()
	failing := modelFunc(func(context.Context, Request, func(string)) (Response, error) {
		return Response{}, &ModelError{Kind: ErrModelQuota}
	})
	res, err := Run(context.Background(), Input{Limits: testLimits(), Model: failing, Tools: SessionTools(mustTaskTools(t)), Message: "x"})
	if !errors.Is(err, ErrModelQuota) || res.Stop != StopModelError {
		t.Fatalf("err %v, result %+v", err, res)
	}
}

type modelFunc func(context.Context, Request, func(string)) (Response, error)

func (f modelFunc) Name() string { return "func" }
func (f modelFunc) Stream(ctx context.Context, req Request, onText func(string)) (Response, error) {
	return f(ctx, req, onText)
}

func TestHistoryReplaysToolCalls(t *testing.T) {
	t.Parallel()
	stored := []tasks.Message{
		{Role: "assistant", Content: "orphaned reply is dropped: history starts at a user message"},
		{Role: "user", Content: "delete the meeting task"},
		{Role: "assistant", Content: "Deleted task 2: Team meeting.", ToolCalls: []tasks.ToolCall{
			{CallID: "a", Tool: "list_tasks", Arguments: json.RawMessage(`{}`), Result: json.RawMessage(`{"tasks":[]}`), Round: 0},
			{CallID: "b", Tool: "delete_task", Arguments: json.RawMessage(`"{\"task_id\": 2"`), Result: nil, Round: 1},
		}},
	}
	got := History(stored, 8000)
	var shape []string
	for _, m := range got {
		s := string(m.Role)
		for _, c := range m.ToolCalls {
			s += "(" + c.ID + " " + c.Arguments + ")"
		}
		if m.ToolCallID != "" {
			s += "[" + m.ToolCallID + " " + m.Content + "]"
		}
		shape = append(shape, s)
	}
	want := []string{
		"user",
		"assistant(a {})", `tool[a {"tasks":[]}]`,
		`assistant(b {"task_id": 2)`, `tool[b {"error":"This tool call has no recorded result."}]`,
		"assistant",
	}
	if strings.Join(shape, "|") != strings.Join(want, "|") {
		t.Fatalf("history\n got %q\nwant %q", shape, want)
	}
	if cap(got) != len(got) {
		t.Errorf("History made room for %d messages and made %d", cap(got), len(got))
	}
}

func TestHistoryWindowKeepsNewestWholeMessages(t *testing.T) {
	t.Parallel()
	var stored []tasks.Message
	for i := range 10 {
		stored = append(stored,
			tasks.Message{Role: "user", Content: fmt.Sprintf("message %d %s", i, strings.Repeat("x", 400))},
			tasks.Message{Role: "assistant", Content: "ok", ToolCalls: []tasks.ToolCall{{CallID: fmt.Sprint(i), Tool: "list_tasks", Arguments: json.RawMessage(`{}`), Result: json.RawMessage(`{"tasks":[]}`)}}},
		)
	}
	got := History(stored, 400)
	if len(got) == 0 || got[0].Role != RoleUser || !strings.HasPrefix(got[0].Content, "message 7") {
		t.Fatalf("window starts at %+v, want message 7, the oldest that fits", got[0])
	}
	for i, m := range got {
		if m.Role == RoleTool && (i == 0 || got[i-1].ToolCalls == nil) {
			t.Fatalf("tool result %d separated from its call", i)
		}
	}
}

func TestPromptPlaceholders(t *testing.T) {
	t.Parallel()
	p := Prompt{template: "user {{user_id}} on {{model}} at {{date}}"}
	got := p.Render("u1", "gpt-test", time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
	if got != "user u1 on gpt-test at Sunday, 22 November 2026" {
		t.Fatal(got)
	}
	def := DefaultPrompt().Render("u1", "m", time.Now())
	if strings.Contains(def, "u1") || !strings.Contains(def, "list_tasks") {
		t.Fatal("the built-in prompt must describe the tools and never show the user id")
	}
}

func TestLoadPrompt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "prompt.md")
	if err := os.WriteFile(path, []byte("You help {{user_id}} on {{date}}."), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := LoadPrompt(path)
	if err != nil || !strings.HasPrefix(p.Render("u7", "m", time.Now()), "You help u7 on ") {
		t.Fatalf("LoadPrompt = %v, %v", p, err)
	}
	empty := filepath.Join(dir, "empty.md")
	_ = os.WriteFile(empty, []byte(" \n"), 0o600)
	for _, bad := range []string{empty, filepath.Join(dir, "missing.md")} {
		if _, err := LoadPrompt(bad); err == nil {
			t.Errorf("LoadPrompt(%s) accepted", bad)
		}
	}
}

// testLimits are generous limits for a test turn; a test about one limit
// lowers it with limitsWith.
func testLimits() Limits {
	return Limits{MaxModelCalls: 10, MaxToolCalls: 20, MaxTokens: 100_000, TurnTimeout: 30 * time.Second, ToolTimeout: 10 * time.Second}
}

func limitsWith(adjust func(*Limits)) Limits {
	l := testLimits()
	adjust(&l)
	return l
}

// A reply is built in memory proportional to its length, however many
// pieces it streams in: a reply of many small deltas, concatenated anew at
// each one, would allocate the square of its length (about 4 GB here).
// It counts bytes allocated, not time, so a slow machine does not fail it;
// the count is the process's, so it runs alone, not in parallel.
func TestRunBuildsTheReplyInLinearMemory(t *testing.T) {
	const deltas, size = 20_000, 20
	whole := strings.Repeat(strings.Repeat("x", size-1)+" ", deltas)
	chatty := modelFunc(func(_ context.Context, _ Request, onText func(string)) (Response, error) {
		for i := range deltas {
			onText(whole[i*size : (i+1)*size]) // slices of one string: the model allocates nothing
		}
		return Response{Text: whole, Usage: Usage{TotalTokens: deltas}}, nil
	})
	in := Input{Limits: testLimits(), Model: chatty, Tools: noTools{}, Message: "tell me everything"}

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res, err := Run(context.Background(), in)
	runtime.ReadMemStats(&after)

	if err != nil || res.Stop != StopCompleted || res.Reply != whole {
		t.Fatalf("err %v, stop %s, reply of %d bytes, want %d", err, res.Stop, len(res.Reply), len(whole))
	}
	if allocated, limit := after.TotalAlloc-before.TotalAlloc, uint64(30*len(whole)); allocated > limit {
		t.Fatalf("building a reply of %d bytes allocated %d bytes, more than %d: the reply is not built linearly", len(whole), allocated, limit)
	}
}

// noTools is a ToolSource without tools, for turns that only talk.
type noTools struct{}

func (noTools) Definitions(context.Context) ([]ToolDef, error) { return nil, nil }
func (noTools) Call(context.Context, Call) (*mcp.CallToolResult, error) {
	return nil, errors.New("no tools")
}

// A turn stopped at a limit says what it changed before it stopped, so
// the person knows where it stopped: the tasks added, completed, deleted
// or changed, a few named.
func TestRunStoppedSaysWhatItChanged(t *testing.T) {
	t.Parallel()
	many := Response{}
	for i := range 30 {
		many.ToolCalls = append(many.ToolCalls, ToolCall{ID: fmt.Sprint("c", i), Name: "add_task", Arguments: fmt.Sprintf(`{"title":"Item %d"}`, i+1)})
	}
	model := &scripted{script: []Response{many, answer("never reached")}}
	res, err := Run(context.Background(), Input{Model: model, Tools: SessionTools(mustTaskTools(t)), Message: "x", Limits: limitsWith(func(l *Limits) { l.MaxToolCalls = 27 })})
	if err != nil || res.Stop != StopMaxToolCalls {
		t.Fatalf("err %v, result %+v", err, res)
	}
	if want := "What I did so far is saved: I added 27 tasks (Item 1, Item 2,"; !strings.Contains(res.Reply, want) || !strings.Contains(res.Reply, "Item 25 and 2 more);") {
		t.Errorf("reply %q; want it to say %q… and name 25 of them", res.Reply, want)
	}
}
