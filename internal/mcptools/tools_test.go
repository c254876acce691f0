package mcptools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskchat/taskchat/internal/mcptools"
	"github.com/taskchat/taskchat/internal/store"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/tasks"
)

func TestMain(m *testing.M) { os.Exit(storetest.Run(m)) }

func TestToolsRoundTrip(t *testing.T) {
	t.Parallel()
	cs := mustSession(t, storetest.UserID(t))

	added := mustCall(t, cs, "add_task", map[string]any{"title": "  Buy groceries ", "description": "milk, eggs"})
	id := added["task_id"].(float64)
	if added["status"] != "created" || added["title"] != "Buy groceries" || id <= 0 {
		t.Fatalf("add_task = %v", added)
	}
	second := mustCall(t, cs, "add_task", map[string]any{"title": "Pay bills"})

	list := mustCall(t, cs, "list_tasks", map[string]any{})
	items := list["tasks"].([]any)
	if len(items) != 2 {
		t.Fatalf("list_tasks = %v, want 2 tasks", list)
	}
	first := items[0].(map[string]any)
	if first["id"] != id || first["title"] != "Buy groceries" || first["description"] != "milk, eggs" ||
		first["completed"] != false || first["created_at"] == "" {
		t.Fatalf("first task = %v", first)
	}

	if got := mustCall(t, cs, "complete_task", map[string]any{"task_id": id}); got["status"] != "completed" || got["task_id"] != id {
		t.Fatalf("complete_task = %v", got)
	}
	pending := mustCall(t, cs, "list_tasks", map[string]any{"status": "pending"})["tasks"].([]any)
	completed := mustCall(t, cs, "list_tasks", map[string]any{"status": "completed"})["tasks"].([]any)
	if len(pending) != 1 || len(completed) != 1 || completed[0].(map[string]any)["id"] != id {
		t.Fatalf("pending %v, completed %v", pending, completed)
	}

	got := mustCall(t, cs, "update_task", map[string]any{"task_id": id, "title": "Call mom tonight"})
	if got["status"] != "updated" || got["title"] != "Call mom tonight" {
		t.Fatalf("update_task = %v", got)
	}
	got = mustCall(t, cs, "delete_task", map[string]any{"task_id": second["task_id"]})
	if got["status"] != "deleted" || got["title"] != "Pay bills" {
		t.Fatalf("delete_task = %v", got)
	}
	if left := mustCall(t, cs, "list_tasks", nil)["tasks"].([]any); len(left) != 1 {
		t.Fatalf("after delete: %v", left)
	}
}

// list_tasks answers a page, 100 tasks unless limit says otherwise, and
// a next_cursor while more tasks match; following it reads every task
// once. query picks the tasks by words of their title or description.
func TestListTasksPages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	user := storetest.UserID(t)
	cs := mustSession(t, user)
	svc := tasks.NewService(store.NewTasks(storetest.Pool(t)))
	const n = mcptools.DefaultListLimit + 30
	for i := 1; i <= n; i++ {
		title := fmt.Sprintf("task %d", i)
		if i%40 == 0 {
			title = fmt.Sprintf("Call the dentist (%d)", i)
		}
		if _, err := svc.Add(ctx, user, tasks.NewTask{Title: title, Description: ""}, nil); err != nil {
			t.Fatal(err)
		}
	}
	read := func(args map[string]any) (ids []float64, calls int) {
		t.Helper()
		for calls = 1; ; calls++ {
			out := mustCall(t, cs, "list_tasks", args)
			for _, item := range out["tasks"].([]any) {
				ids = append(ids, item.(map[string]any)["id"].(float64))
			}
			next, more := out["next_cursor"].(string)
			if !more || calls > n {
				return ids, calls
			}
			args = maps.Clone(args)
			args["cursor"] = next
		}
	}
	first := mustCall(t, cs, "list_tasks", nil)
	if got := len(first["tasks"].([]any)); got != mcptools.DefaultListLimit || first["next_cursor"] == nil {
		t.Fatalf("the first call listed %d tasks, next_cursor %v; want %d and a cursor", got, first["next_cursor"], mcptools.DefaultListLimit)
	}
	for _, c := range []struct {
		args  map[string]any
		want  []float64
		calls int
	}{
		{map[string]any{}, numbers(1, n), 2},
		{map[string]any{"limit": 7, "status": "pending"}, numbers(1, n), (n + 6) / 7},
		{map[string]any{"limit": tasks.MaxTaskPage}, numbers(1, n), 1},
		{map[string]any{"query": "DENTIST call"}, []float64{40, 80, 120}, 1},
		{map[string]any{"query": "dentist", "limit": 2}, []float64{40, 80, 120}, 2},
		{map[string]any{"query": "dentist", "status": "completed"}, nil, 1},
	} {
		ids, calls := read(c.args)
		if fmt.Sprint(ids) != fmt.Sprint(c.want) || calls != c.calls {
			t.Errorf("list_tasks(%v), following next_cursor: %d calls listed %v, want %d calls listing %v", c.args, calls, ids, c.calls, c.want)
		}
	}
}

// numbers returns from, from+1, … to, as JSON numbers decode.
func numbers(from, to int) []float64 {
	var out []float64
	for i := from; i <= to; i++ {
		out = append(out, float64(i))
	}
	return out
}

func TestToolsEmptyListIsAnArray(t *testing.T) {
	t.Parallel()
	cs := mustSession(t, storetest.UserID(t))
	res := mustCallResult(t, cs, "list_tasks", nil)
	if res.IsError || string(mustJSON(t, res.StructuredContent)) != `{"tasks":[]}` {
		t.Fatalf("empty list = %s (isError %v)", mustJSON(t, res.StructuredContent), res.IsError)
	}
}

func TestToolsCannotReachAnotherUsersTask(t *testing.T) {
	t.Parallel()
	alice := mustSession(t, storetest.UserID(t))
	bob := mustSession(t, storetest.UserID(t))
	task := mustCall(t, alice, "add_task", map[string]any{"title": "Alice's secret", "description": "private"})
	id := task["task_id"]

	if list := mustCall(t, bob, "list_tasks", map[string]any{"status": "all"})["tasks"].([]any); len(list) != 0 {
		t.Fatalf("bob sees %v", list)
	}
	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"complete_task", map[string]any{"task_id": id}},
		{"delete_task", map[string]any{"task_id": id}},
		{"update_task", map[string]any{"task_id": id, "title": "hijacked"}},
	} {
		res := mustCallResult(t, bob, call.tool, call.args)
		if want := "Task " + jsonNumber(id) + " was not found."; !res.IsError || text(res) != want {
			t.Errorf("%s by bob = %q (isError %v), want %q", call.tool, text(res), res.IsError, want)
		}
	}
	list := mustCall(t, alice, "list_tasks", nil)["tasks"].([]any)
	got := list[0].(map[string]any)
	if len(list) != 1 || got["title"] != "Alice's secret" || got["description"] != "private" || got["completed"] != false {
		t.Fatalf("alice's task after bob's attempts = %v", list)
	}
}

func TestToolsRefuseBadArguments(t *testing.T) {
	t.Parallel()
	cs := mustSession(t, storetest.UserID(t))
	task := mustCall(t, cs, "add_task", map[string]any{"title": "keep me"})
	long := strings.Repeat("x", tasks.MaxTitleLen+1)
	cases := []struct {
		name, tool string
		args       map[string]any
		want       string // a fragment of the error sentence
	}{
		{"missing title", "add_task", map[string]any{}, "title"},
		{"blank title", "add_task", map[string]any{"title": "   "}, "Invalid title: is required."},
		{"long title", "add_task", map[string]any{"title": long}, "Invalid title: must be at most 200 characters"},
		{"long description", "add_task", map[string]any{"title": "t", "description": strings.Repeat("d", 1001)}, "Invalid description: must be at most 1000"},
		{"NUL in title", "add_task", map[string]any{"title": "a\x00b"}, "Invalid title: must not contain control characters (U+0000)."},
		{"escape in title", "add_task", map[string]any{"title": "a\x1b[2Jb"}, "Invalid title: must not contain control characters (U+001B)."},
		{"override in description", "add_task", map[string]any{"title": "t", "description": "a\u202eb"}, "Invalid description: must not contain bidirectional overrides or isolates (U+202E)."},
		{"two lines in a title", "update_task", map[string]any{"task_id": task["task_id"], "title": "a\nb"}, "Invalid title: must be one line, without tabs or line breaks."},
		{"smuggled user_id", "add_task", map[string]any{"title": "t", "user_id": "someone-else"}, "user_id"},
		{"smuggled user_id on list", "list_tasks", map[string]any{"user_id": "someone-else"}, "user_id"},
		{"bad status", "list_tasks", map[string]any{"status": "overdue"}, "status"},
		{"zero limit", "list_tasks", map[string]any{"limit": 0}, "limit"},
		{"limit past the most", "list_tasks", map[string]any{"limit": tasks.MaxTaskPage + 1}, "limit"},
		{"limit as text", "list_tasks", map[string]any{"limit": "ten"}, "limit"},
		{"foreign cursor", "list_tasks", map[string]any{"cursor": "not-a-cursor"}, "Invalid cursor"},
		{"long query", "list_tasks", map[string]any{"query": strings.Repeat("q", tasks.MaxQueryLen+1)}, "query"},
		{"task id as text", "complete_task", map[string]any{"task_id": "three"}, "task_id"},
		{"missing task id", "delete_task", map[string]any{}, "task_id"},
		{"zero task id", "delete_task", map[string]any{"task_id": 0}, "Invalid task_id: must be a positive task id."},
		{"nothing to update", "update_task", map[string]any{"task_id": task["task_id"]}, "Invalid title: give at least one of title, description, due, priority or completed to change."},
		{"blank new title", "update_task", map[string]any{"task_id": task["task_id"], "title": ""}, "Invalid title: is required."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := mustCallResult(t, cs, c.tool, c.args)
			if !res.IsError || !strings.Contains(text(res), c.want) {
				t.Fatalf("%s(%v) = %q (isError %v), want an error containing %q", c.tool, c.args, text(res), res.IsError, c.want)
			}
		})
	}
	list := mustCall(t, cs, "list_tasks", nil)["tasks"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["title"] != "keep me" {
		t.Fatalf("refused calls changed the list: %v", list)
	}
}

func TestToolSchemas(t *testing.T) {
	t.Parallel()
	cs := mustSession(t, storetest.UserID(t))
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		names[tool.Name] = tool
		schema := string(mustJSON(t, tool.InputSchema))
		if strings.Contains(schema, "user") {
			t.Errorf("%s's schema mentions a user: %s", tool.Name, schema)
		}
		if !strings.Contains(schema, `"additionalProperties":false`) {
			t.Errorf("%s's schema accepts unknown arguments: %s", tool.Name, schema)
		}
		if tool.Description == "" {
			t.Errorf("%s has no description", tool.Name)
		}
	}
	if len(names) != 5 {
		t.Fatalf("tools = %v", names)
	}
	if a := names["delete_task"].Annotations; a == nil || a.DestructiveHint == nil || !*a.DestructiveHint {
		t.Errorf("delete_task is not marked destructive")
	}
	if a := names["list_tasks"].Annotations; a == nil || !a.ReadOnlyHint {
		t.Errorf("list_tasks is not marked read-only")
	}
}

func mustSession(tb testing.TB, userID string) *mcp.ClientSession {
	tb.Helper()
	svc := tasks.NewService(store.NewTasks(storetest.Pool(tb)))
	cs, err := mcptools.Connect(context.Background(), userID, svc)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cs.Close() })
	return cs
}

func mustCallResult(tb testing.TB, cs *mcp.ClientSession, tool string, args map[string]any) *mcp.CallToolResult {
	tb.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		tb.Fatalf("%s: protocol error %v", tool, err)
	}
	return res
}

// mustCall calls a tool that must succeed and returns its structured result.
func mustCall(tb testing.TB, cs *mcp.ClientSession, tool string, args map[string]any) map[string]any {
	tb.Helper()
	res := mustCallResult(tb, cs, tool, args)
	if res.IsError {
		tb.Fatalf("%s(%v) failed: %s", tool, args, text(res))
	}
	var out map[string]any
	if err := json.Unmarshal(mustJSON(tb, res.StructuredContent), &out); err != nil {
		tb.Fatal(err)
	}
	return out
}

func mustJSON(tb testing.TB, v any) []byte {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func jsonNumber(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestServersKeepEachUserBound(t *testing.T) {
	t.Parallel()
	svc := tasks.NewService(store.NewTasks(storetest.Pool(t)))
	servers := mcptools.NewServers(svc, 1) // every other turn evicts
	alice, bob := storetest.UserID(t), storetest.UserID(t)
	session := func(user string) *mcp.ClientSession {
		cs, err := servers.Connect(context.Background(), user)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	mustCall(t, session(alice), "add_task", map[string]any{"title": "alice's"})
	mustCall(t, session(bob), "add_task", map[string]any{"title": "bob's"})
	for _, c := range []struct{ user, want string }{{alice, "alice's"}, {alice, "alice's"}, {bob, "bob's"}, {alice, "alice's"}} {
		list := mustCall(t, session(c.user), "list_tasks", nil)["tasks"].([]any)
		if len(list) != 1 || list[0].(map[string]any)["title"] != c.want {
			t.Fatalf("%s sees %v, want only %q", c.user, list, c.want)
		}
	}
}

func TestSessionsAreLentAgainToTheirUserOnly(t *testing.T) {
	t.Parallel()
	svc := tasks.NewService(store.NewTasks(storetest.Pool(t)))
	servers := mcptools.NewServers(svc, 2)
	ctx := context.Background()
	alice, bob, carol := storetest.UserID(t), storetest.UserID(t), storetest.UserID(t)
	lend := func(user string) (*mcp.ClientSession, func(bool)) {
		t.Helper()
		cs, release, err := servers.Session(ctx, user)
		if err != nil {
			t.Fatal(err)
		}
		return cs, release
	}

	first, release := lend(alice)
	mustCall(t, first, "add_task", map[string]any{"title": "alice's"})
	release(true)
	again, release := lend(alice)
	if again != first {
		t.Fatal("alice's idle session was not lent again")
	}
	busy, releaseBusy := lend(alice) // while again is lent: a session of its own
	if busy == again {
		t.Fatal("a lent session was lent twice")
	}
	release(true)
	releaseBusy(true) // alice already has an idle session: this one is closed
	mustBeClosed(t, busy)

	theirs, releaseBob := lend(bob)
	if theirs == first {
		t.Fatal("bob was lent alice's session")
	}
	if list := mustCall(t, theirs, "list_tasks", nil)["tasks"].([]any); len(list) != 0 {
		t.Fatalf("bob sees %v", list)
	}
	releaseBob(true)

	failed, release := lend(alice)
	release(false) // a call on it failed: it is closed, not lent again
	if next, release := lend(alice); next == failed {
		t.Fatal("a session in doubt was lent again")
	} else {
		release(true)
	}

	kept, release := lend(alice)
	release(true)
	_, releaseBob = lend(bob)
	releaseBob(true)
	lend(carol) // pushes alice's server, the least recently used, out of the cache, and her idle session with it
	mustBeClosed(t, kept)
	if next, _ := lend(alice); next == kept {
		t.Fatal("an evicted user's session was lent again")
	}
}

// mustBeClosed fails unless a call on cs fails at once, as on a closed session.
func mustBeClosed(tb testing.TB, cs *mcp.ClientSession) {
	tb.Helper()
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "list_tasks"}); err == nil {
		tb.Fatal("a session that should be closed still answers")
	}
}

// ctxProbe is a pgx tracer that notes the probe value of the context each
// statement runs in.
type ctxProbe struct {
	mu   sync.Mutex
	seen []any
}

type probeKey struct{}

func (p *ctxProbe) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seen = append(p.seen, ctx.Value(probeKey{}))
	return ctx
}

func (*ctxProbe) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// A lent session serves later turns: nothing of the context of the turn
// that opened it (its values, its cancellation) reaches their calls.
func TestLentSessionsKeepNothingOfTheTurnThatOpenedThem(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	probe := &ctxProbe{}
	pool, err := store.Open(ctx, storetest.URL(t), store.Settings{}, func(c *pgxpool.Config) { c.ConnConfig.Tracer = probe })
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	servers := mcptools.NewServers(tasks.NewService(store.NewTasks(pool)), 4)
	user := storetest.UserID(t)

	first, cancel := context.WithCancel(context.WithValue(ctx, probeKey{}, "the first turn's"))
	cs, release, err := servers.Session(first, user)
	if err != nil {
		t.Fatal(err)
	}
	release(true)
	cancel() // the first turn is over

	cs2, release, err := servers.Session(ctx, user)
	if err != nil || cs2 != cs {
		t.Fatalf("the idle session was not lent again (%v)", err)
	}
	defer release(true)
	mustCall(t, cs2, "add_task", map[string]any{"title": "Buy milk"})
	probe.mu.Lock()
	defer probe.mu.Unlock()
	for _, v := range probe.seen {
		if v != nil {
			t.Fatalf("a later turn's statement ran in a context holding %v", v)
		}
	}
	if len(probe.seen) == 0 {
		t.Fatal("no statement was traced")
	}
}

// update_task as an MCP client calls it: null (or "") clears a due date or
// a priority, null for any other argument leaves it alone, and what is
// left out stays; completed false reopens.
func TestUpdateTaskClearsAndReopens(t *testing.T) {
	t.Parallel()
	cs := mustSession(t, storetest.UserID(t))
	added := mustCall(t, cs, "add_task", map[string]any{"title": "Pay rent", "due": "2026-12-04", "priority": "high"})
	id := added["task_id"]
	if added["due"] != "2026-12-04" || added["priority"] != "high" {
		t.Fatalf("add_task = %v", added)
	}
	got := mustCall(t, cs, "update_task", map[string]any{"task_id": id, "title": nil, "description": "the flat", "completed": nil})
	if got["due"] != "2026-12-04" || got["priority"] != "high" || got["title"] != "Pay rent" {
		t.Fatalf("update_task with nulls for what it leaves alone = %v", got)
	}
	got = mustCall(t, cs, "update_task", map[string]any{"task_id": id, "due": nil, "priority": ""})
	if _, has := got["due"]; has {
		t.Fatalf("update_task due null = %v, want the due date gone", got)
	}
	if _, has := got["priority"]; has {
		t.Fatalf("update_task priority \"\" = %v, want the priority gone", got)
	}
	mustCall(t, cs, "complete_task", map[string]any{"task_id": id})
	mustCall(t, cs, "update_task", map[string]any{"task_id": id, "completed": false})
	list := mustCall(t, cs, "list_tasks", map[string]any{"status": "pending"})
	if tasks, _ := list["tasks"].([]any); len(tasks) != 1 {
		t.Fatalf("pending after reopening = %v", list)
	}
}
