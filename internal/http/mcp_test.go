package http

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/taskchat/taskchat/internal/agent/offline"
	"github.com/taskchat/taskchat/internal/mcptools"
	"github.com/taskchat/taskchat/internal/store"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/tasks"
)

// These tests drive /mcp with the go-sdk's own client over real HTTP, on
// the real handler and PostgreSQL; mcp_node_test.go does it with the
// TypeScript SDK.

// bearerTransport sends every request with a bearer token and a request id
// of its own, so that a test can find a call's audit row by its id.
type bearerTransport struct {
	token, prefix string
	n             atomic.Int64
}

func (t *bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if t.token != "" {
		r.Header.Set("Authorization", "Bearer "+t.token)
	}
	r.Header.Set("X-Request-Id", fmt.Sprintf("%s-%d", t.prefix, t.n.Add(1)))
	return http.DefaultTransport.RoundTrip(r)
}

// lastID is the request id of the transport's latest request.
func (t *bearerTransport) lastID() string { return fmt.Sprintf("%s-%d", t.prefix, t.n.Load()) }

// mcpClient is a go-sdk client session on /mcp with a user's token.
type mcpClient struct {
	*mcp.ClientSession
	rt *bearerTransport
}

func mustMCPClient(tb testing.TB, s *testServer, token string) *mcpClient {
	tb.Helper()
	rt := &bearerTransport{token: token, prefix: storetest.UserID(tb)}
	client := mcp.NewClient(&mcp.Implementation{Name: "taskchat-test", Version: "1.0.0"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: s.URL + "/mcp", HTTPClient: &http.Client{Transport: rt}, MaxRetries: -1,
	}, nil)
	if err != nil {
		tb.Fatalf("connect to /mcp: %v", err)
	}
	tb.Cleanup(func() { cs.Close() })
	return &mcpClient{ClientSession: cs, rt: rt}
}

// call makes a tool call that reaches its tool; the result may be an error.
func (c *mcpClient) call(tb testing.TB, tool string, args map[string]any, meta mcp.Meta) *mcp.CallToolResult {
	tb.Helper()
	res, err := c.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args, Meta: meta})
	if err != nil {
		tb.Fatalf("%s: protocol error %v", tool, err)
	}
	return res
}

// mustCall makes a call that must succeed and returns its structured result.
func (c *mcpClient) mustCall(tb testing.TB, tool string, args map[string]any) map[string]any {
	tb.Helper()
	res := c.call(tb, tool, args, nil)
	if res.IsError {
		tb.Fatalf("%s(%v) failed: %s", tool, args, resultText(res))
	}
	return structured(tb, res)
}

func structured(tb testing.TB, res *mcp.CallToolResult) map[string]any {
	tb.Helper()
	var out map[string]any
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &out); err != nil {
		tb.Fatalf("structured content %s: %v", b, err)
	}
	return out
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// mcpAuditRow is one recorded MCP call.
type mcpAuditRow struct {
	CallID, Tool              string
	Arguments, Result         json.RawMessage
	IsError                   bool
	TurnID, ConvID, MessageID *int64
	Source                    string
}

// mustMCPAudit returns the user's recorded MCP calls, oldest first.
func mustMCPAudit(tb testing.TB, user string) []mcpAuditRow {
	tb.Helper()
	rows, err := storetest.Pool(tb).Query(context.Background(), `
		SELECT call_id, tool, arguments, result, is_error, turn_id, conversation_id, message_id, source
		FROM tool_calls WHERE user_id = $1 AND source = 'mcp' ORDER BY id`, user)
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	var out []mcpAuditRow
	for rows.Next() {
		var r mcpAuditRow
		if err := rows.Scan(&r.CallID, &r.Tool, &r.Arguments, &r.Result, &r.IsError, &r.TurnID, &r.ConvID, &r.MessageID, &r.Source); err != nil {
			tb.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// mustRESTTasks is the user's task list as GET /api/{user}/tasks answers it.
func mustRESTTasks(tb testing.TB, s *testServer, user string) []any {
	tb.Helper()
	r := s.do(tb, call{method: "GET", path: "/api/" + user + "/tasks", token: mustToken(tb, user)})
	if r.status != 200 {
		tb.Fatalf("GET tasks = %d %s", r.status, r.body)
	}
	return r.json(tb)["tasks"].([]any)
}

func jsonOf(tb testing.TB, v any) string {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// An MCP client manages the user's list with the same five tools the chat
// uses, with the same numbers, and every call it makes is recorded, with no
// conversation; the chat and the REST API see its changes at once.
func TestMCPManagesTheTokensUsersList(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New())
	user := storetest.UserID(t)
	c := mustMCPClient(t, s, mustToken(t, user))

	t.Run("the five tools, no user in any schema", func(t *testing.T) {
		res, err := c.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
			if schema := jsonOf(t, tool.InputSchema); strings.Contains(strings.ToLower(schema), "user") {
				t.Errorf("%s's schema mentions a user: %s", tool.Name, schema)
			}
		}
		if got := strings.Join(names, ","); got != "add_task,complete_task,delete_task,list_tasks,update_task" {
			t.Fatalf("tools = %s", got)
		}
	})

	// The chat adds task 1; MCP's first task is 2, on the same list.
	s.chat(t, user, 0, "Add a task to buy groceries")
	added := c.mustCall(t, "add_task", map[string]any{"title": "Pay bills", "description": "electricity"})
	addID := c.rt.lastID()
	if added["task_id"] != 2.0 || added["status"] != "created" || added["title"] != "Pay bills" {
		t.Fatalf("add_task = %v, want task 2 created", added)
	}
	if got := mustRESTTasks(t, s, user); len(got) != 2 || got[1].(map[string]any)["title"] != "Pay bills" {
		t.Fatalf("REST tasks after the MCP add = %v", got)
	}
	if reply := s.chat(t, user, 0, "Show me all my tasks").json(t)["response"].(string); !strings.Contains(reply, "Pay bills") {
		t.Fatalf("the chat does not see the MCP add: %q", reply)
	}

	listed := c.mustCall(t, "list_tasks", map[string]any{})
	listID := c.rt.lastID()
	t.Run("results are the chat tools' own", func(t *testing.T) {
		cs, err := mcptools.NewServers(tasks.NewService(store.NewTasks(storetest.Pool(t))), 1).Connect(context.Background(), user)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "list_tasks", Arguments: map[string]any{}})
		if err != nil || res.IsError {
			t.Fatal(err, res)
		}
		if chat := structured(t, res); !reflect.DeepEqual(listed, chat) {
			t.Fatalf("list_tasks over /mcp = %v, in the chat = %v", listed, chat)
		}
	})

	title := "Pay the bills"
	steps := []struct {
		tool   string
		args   map[string]any
		status string
	}{
		{"update_task", map[string]any{"task_id": 2, "title": title}, "updated"},
		{"complete_task", map[string]any{"task_id": 2}, "completed"},
		{"delete_task", map[string]any{"task_id": 1}, "deleted"},
	}
	for _, st := range steps {
		if got := c.mustCall(t, st.tool, st.args); got["status"] != st.status {
			t.Fatalf("%s = %v, want %s", st.tool, got, st.status)
		}
	}
	list := mustRESTTasks(t, s, user)
	if len(list) != 1 || list[0].(map[string]any)["id"] != 2.0 || list[0].(map[string]any)["title"] != title || list[0].(map[string]any)["completed"] != true {
		t.Fatalf("REST tasks after the MCP changes = %v", list)
	}

	t.Run("every call is recorded, with no conversation", func(t *testing.T) {
		rows := mustMCPAudit(t, user)
		want := []string{"add_task", "list_tasks", "update_task", "complete_task", "delete_task"}
		if len(rows) != len(want) {
			t.Fatalf("MCP audit rows = %+v, want %v", rows, want)
		}
		for i, r := range rows {
			if r.Tool != want[i] || r.IsError || r.TurnID != nil || r.ConvID != nil || r.MessageID != nil {
				t.Errorf("row %d = %+v, want %s recorded on its own", i, r, want[i])
			}
		}
		for i, reqID := range []string{addID, listID} {
			if line := requestLogLine(t, s, reqID); line["call_id"] != rows[i].CallID || !strings.HasPrefix(rows[i].CallID, "mcp-") {
				t.Errorf("row %d's call id %q; the log line of its request %q: %v", i, rows[i].CallID, reqID, line)
			}
		}
		if !jsonSame(t, rows[0].Arguments, []byte(`{"title":"Pay bills","description":"electricity"}`)) ||
			!jsonSame(t, rows[0].Result, []byte(jsonOf(t, added))) || !jsonSame(t, rows[1].Result, []byte(jsonOf(t, listed))) {
			t.Errorf("rows record %s → %s and %s; the client was told %v and %v", rows[0].Arguments, rows[0].Result, rows[1].Result, added, listed)
		}
	})
}

// Each request acts for its token's user and nobody else, whatever its
// body says.
func TestMCPKeepsUsersApart(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New())
	alice, bob := storetest.UserID(t), storetest.UserID(t)
	ca, cb := mustMCPClient(t, s, mustToken(t, alice)), mustMCPClient(t, s, mustToken(t, bob))

	secret := ca.mustCall(t, "add_task", map[string]any{"title": "Alice's secret"})
	if got := cb.mustCall(t, "add_task", map[string]any{"title": "Bob's chore"}); got["task_id"] != 1.0 {
		t.Fatalf("bob's first task = %v, want his task 1", got)
	}
	if list := cb.mustCall(t, "list_tasks", nil)["tasks"].([]any); len(list) != 1 || list[0].(map[string]any)["title"] != "Bob's chore" {
		t.Fatalf("bob sees %v", list)
	}
	for _, tool := range []string{"complete_task", "delete_task"} {
		if res := cb.call(t, tool, map[string]any{"task_id": 2}, nil); !res.IsError || resultText(res) != "Task 2 was not found." {
			t.Errorf("bob's %s of task 2 = %q, want not found", tool, resultText(res))
		}
	}
	if res := ca.call(t, "add_task", map[string]any{"title": "for bob", "user_id": bob}, nil); !res.IsError || !strings.Contains(resultText(res), "user_id") {
		t.Errorf("a call naming another user = %q (isError %v), want it refused", resultText(res), res.IsError)
	}
	if list := mustRESTTasks(t, s, alice); len(list) != 1 || list[0].(map[string]any)["title"] != secret["title"] {
		t.Fatalf("alice's tasks = %v", list)
	}
	if list := mustRESTTasks(t, s, bob); len(list) != 1 || list[0].(map[string]any)["title"] != "Bob's chore" {
		t.Fatalf("bob's tasks = %v", list)
	}
}

// A chat turn sends each call with its turn's record in _meta, and its
// change is recorded as the turn's. An outside client that forges one —
// with a real turn's id and claim token — changes nothing of that turn: the
// record is never read, and the call is the client's own.
func TestMCPIgnoresAForgedTurnRecord(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New())
	user := storetest.UserID(t)
	c := mustMCPClient(t, s, mustToken(t, user))
	turn, err := store.NewTurns(storetest.Pool(t)).StartTurn(context.Background(), tasks.TurnStart{
		UserID: user, Message: "Change my list", HistoryLimit: 10, ClaimFor: time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	// A live record's key, as the chat engine would send it in process.
	forged, forget := s.tools.CallMeta(user, tasks.CallRecord{
		ConversationID: turn.Conversation.ID, TurnID: turn.ID(), ClaimToken: turn.ClaimToken,
		CallID: "call_forged", Arguments: json.RawMessage(`{}`), Started: time.Now(),
	})
	defer forget()
	added := c.call(t, "add_task", map[string]any{"title": "Buy milk"}, forged)
	// In process, a record that cannot be read fails the call; here it is
	// not read at all.
	garbled := c.call(t, "add_task", map[string]any{"title": "Buy eggs"}, mcp.Meta{mcptools.CallMetaKey: "turn 7, call 3"})
	if added.IsError || garbled.IsError {
		t.Fatalf("calls with a _meta record failed: %q, %q", resultText(added), resultText(garbled))
	}

	var turnRows int
	mustQuery(t, `SELECT count(*) FROM tool_calls WHERE turn_id = $1 OR call_id = 'call_forged'
		OR conversation_id = (SELECT id FROM conversations WHERE user_id = $3 AND number = $2)`,
		[]any{turn.ID(), turn.Conversation.ID, user}, &turnRows)
	if turnRows != 0 {
		t.Fatalf("%d audit rows were written as the forged turn's", turnRows)
	}
	if rows := mustMCPAudit(t, user); len(rows) != 2 || rows[0].TurnID != nil || rows[1].TurnID != nil {
		t.Fatalf("MCP audit rows = %+v, want both calls as the client's own", rows)
	}
	var held bool
	mustQuery(t, `SELECT claim_token = $2::uuid AND claimed_until > now() FROM conversations WHERE user_id = $3 AND number = $1`,
		[]any{turn.Conversation.ID, turn.ClaimToken, user}, &held)
	if !held {
		t.Fatal("the forged calls disturbed the turn's claim on its conversation")
	}
}

// Calls that change nothing are recorded too: a listing, a refused call,
// arguments the schema refuses, a tool that does not exist.
func TestMCPRecordsCallsThatChangeNothing(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New())
	user := storetest.UserID(t)
	c := mustMCPClient(t, s, mustToken(t, user))

	c.mustCall(t, "list_tasks", map[string]any{"status": "pending"})
	notFound := c.call(t, "complete_task", map[string]any{"task_id": 7}, nil)
	noTitle := c.call(t, "add_task", map[string]any{}, nil)
	_, unknownErr := c.CallTool(context.Background(), &mcp.CallToolParams{Name: "drop_table", Arguments: map[string]any{}})
	// jsonb cannot hold a lone surrogate: the call is refused before it
	// runs, and recorded with its arguments as text, as the chat does.
	unstorable, err := c.CallTool(context.Background(), &mcp.CallToolParams{Name: "add_task", Arguments: json.RawMessage(`{"title":"\ud83d"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if !notFound.IsError || !noTitle.IsError || unknownErr == nil || !unstorable.IsError {
		t.Fatalf("refusals: %q, %q, %v, %q", resultText(notFound), resultText(noTitle), unknownErr, resultText(unstorable))
	}

	rows := mustMCPAudit(t, user)
	if len(rows) != 5 {
		t.Fatalf("MCP audit rows = %+v, want 5", rows)
	}
	var asText string
	if json.Unmarshal(rows[4].Arguments, &asText) != nil || asText != `{"title":"\ud83d"}` || !rows[4].IsError {
		t.Errorf("the unstorable call's row = %s %s", rows[4].Arguments, rows[4].Result)
	}
	want := []struct {
		tool    string
		isError bool
		result  string
	}{
		{"list_tasks", false, string(tasks.StoredResult("list_tasks", json.RawMessage(`{"tasks":[]}`)))},
		{"complete_task", true, jsonOf(t, map[string]string{"error": resultText(notFound)})},
		{"add_task", true, jsonOf(t, map[string]string{"error": resultText(noTitle)})},
		{"drop_table", true, ""},
	}
	for i, w := range want {
		r := rows[i]
		if r.Tool != w.tool || r.IsError != w.isError || (w.result != "" && !storetest.SameJSON(r.Result, json.RawMessage(w.result))) {
			t.Errorf("row %d = %s %v %s, want %s %v %s", i, r.Tool, r.IsError, r.Result, w.tool, w.isError, w.result)
		}
	}
	if list := mustRESTTasks(t, s, user); len(list) != 0 {
		t.Fatal("a refused call changed the list")
	}
}

// requestLogLine is the access log's line of the request whose id is id.
func requestLogLine(tb testing.TB, s *testServer, id string) map[string]any {
	tb.Helper()
	for _, l := range strings.Split(s.logs.String(), "\n") {
		var line map[string]any
		if json.Unmarshal([]byte(l), &line) == nil && line["msg"] == "request" && line["request_id"] == id {
			return line
		}
	}
	tb.Fatalf("no log line for request %q", id)
	return nil
}

// A client chooses its X-Request-Id, and may send the same one with many
// calls: each call's audit row has an id of the server's own, unique,
// which the request's log line pairs with the client's.
func TestMCPCallIDsAreTheServersOwn(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New())
	user := storetest.UserID(t)
	tok := mustToken(t, user)
	header := http.Header{"X-Request-Id": {"same-id"}}
	for i, args := range []string{`{"title":"Buy milk"}`, `{"title":"Pay rent"}`, `{}`} {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"add_task","arguments":%s}}`, i+1, args)
		if r := s.mcpPost(t, tok, body, header); r.status != 200 || r.header.Get("X-Request-Id") != "same-id" {
			t.Fatalf("call %d: %d %s, X-Request-Id %q", i, r.status, r.body, r.header.Get("X-Request-Id"))
		}
	}
	rows := mustMCPAudit(t, user)
	seen := map[string]bool{}
	for _, r := range rows {
		if r.CallID == "same-id" || seen[r.CallID] || !strings.HasPrefix(r.CallID, "mcp-") {
			t.Errorf("call id %q (of %d rows): want one of the server's own for each call", r.CallID, len(rows))
		}
		seen[r.CallID] = true
	}
	var logged []string
	for _, l := range strings.Split(s.logs.String(), "\n") {
		var line map[string]any
		if json.Unmarshal([]byte(l), &line) == nil && line["request_id"] == "same-id" && line["path"] == "/mcp" {
			logged = append(logged, fmt.Sprint(line["call_id"]))
		}
	}
	if len(rows) != 3 || len(logged) != 3 || !seen[logged[0]] || !seen[logged[1]] || !seen[logged[2]] {
		t.Fatalf("audit rows %+v, logged call ids %q: want three calls, each logged with the client's id", rows, logged)
	}
}

// mcpPost sends one raw JSON-RPC message to /mcp, as a client would.
func (s *testServer) mcpPost(tb testing.TB, token, body string, header http.Header) reply {
	tb.Helper()
	h := http.Header{"Accept": {"application/json, text/event-stream"}}
	for k, v := range header {
		h[k] = v
	}
	return s.do(tb, call{method: "POST", path: "/mcp", token: token, body: body, header: h})
}

const listToolsMessage = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`

// Without a valid token, /mcp answers 401 with a challenge that points at
// the resource's metadata, where a client learns whom to ask for a token.
func TestMCPNeedsAValidToken(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New())
	metadata := `resource_metadata="` + s.URL + `/.well-known/oauth-protected-resource/mcp"`
	for _, c := range []struct {
		name, token, challenge string
	}{
		{"no token", "", `Bearer realm="taskchat", ` + metadata},
		{"a forged token", mustToken(t, "alice")[:40] + "x.y", `Bearer realm="taskchat", error="invalid_token", ` + metadata},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := s.mcpPost(t, c.token, listToolsMessage, nil)
			mustMatchSpec(t, "POST", "/mcp", r.status, r.header, r.body)
			mustProblem(t, r, 401, "unauthorized")
			if got := r.header.Get("WWW-Authenticate"); got != c.challenge {
				t.Fatalf("WWW-Authenticate = %q, want %q", got, c.challenge)
			}
		})
	}
	t.Run("the go-sdk client is refused", func(t *testing.T) {
		client := mcp.NewClient(&mcp.Implementation{Name: "taskchat-test", Version: "1.0.0"}, nil)
		_, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: s.URL + "/mcp", MaxRetries: -1}, nil)
		if err == nil || !strings.Contains(err.Error(), "401") && !strings.Contains(strings.ToLower(err.Error()), "unauthorized") {
			t.Fatalf("connect without a token: %v, want a 401", err)
		}
	})
}

// The metadata of the protected resource /mcp (RFC 9728), as the go-sdk's
// own OAuth client fetches and checks it.
func TestMCPResourceMetadata(t *testing.T) {
	t.Parallel()
	t.Run("from the request", func(t *testing.T) {
		s := mustServer(t, offline.New())
		for _, path := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"} {
			r := s.do(t, call{method: "GET", path: path})
			mustMatchSpec(t, "GET", path, r.status, r.header, r.body)
			if r.header.Get("Access-Control-Allow-Origin") != "*" {
				t.Errorf("%s is not readable from other origins", path)
			}
			prm, err := oauthex.GetProtectedResourceMetadata(context.Background(), s.URL+path, s.URL+"/mcp", s.Client())
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if len(prm.AuthorizationServers) != 0 || !reflect.DeepEqual(prm.BearerMethodsSupported, []string{"header"}) {
				t.Fatalf("%s = %+v", path, prm)
			}
		}
	})
	t.Run("configured", func(t *testing.T) {
		s := mustServer(t, offline.New(), func(c *serverConfig) {
			c.api.MCP.PublicURL = "https://tasks.example.com"
			c.api.MCP.AuthorizationServers = []string{"https://auth.example.com/api/auth"}
		})
		r := s.do(t, call{method: "GET", path: "/.well-known/oauth-protected-resource/mcp"})
		mustMatchSpec(t, "GET", "/.well-known/oauth-protected-resource/mcp", r.status, r.header, r.body)
		if m := r.json(t); m["resource"] != "https://tasks.example.com/mcp" || jsonOf(t, m["authorization_servers"]) != `["https://auth.example.com/api/auth"]` {
			t.Fatalf("metadata = %s", r.body)
		}
		want := `resource_metadata="https://tasks.example.com/.well-known/oauth-protected-resource/mcp"`
		if got := s.mcpPost(t, "", listToolsMessage, nil).header.Get("WWW-Authenticate"); !strings.HasSuffix(got, want) {
			t.Fatalf("WWW-Authenticate = %q, want it to end with %s", got, want)
		}
	})
}

// Each user has a budget of /mcp requests; past it, 429 with Retry-After,
// and nobody else's budget is touched.
func TestMCPRateLimit(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New(), func(c *serverConfig) { c.api.MCP.RequestsPerMinute, c.api.MCP.Burst = 1, 2 })
	alice, bob := mustToken(t, storetest.UserID(t)), mustToken(t, storetest.UserID(t))
	for i, want := range []int{200, 200, 429} {
		r := s.mcpPost(t, alice, listToolsMessage, nil)
		mustMatchSpec(t, "POST", "/mcp", r.status, r.header, r.body)
		if r.status != want {
			t.Fatalf("request %d = %d %s, want %d", i+1, r.status, r.body, want)
		}
		if want == 429 {
			mustProblem(t, r, 429, "rate_limited")
			if ra := r.header.Get("Retry-After"); ra == "" || ra == "0" {
				t.Fatalf("Retry-After = %q", ra)
			}
		}
	}
	if r := s.mcpPost(t, bob, listToolsMessage, nil); r.status != 200 {
		t.Fatalf("bob = %d %s, want 200: alice's budget is hers", r.status, r.body)
	}
}

// What /mcp refuses before the MCP transport reads a request.
func TestMCPRefusesWhatIsNotOneMessage(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New())
	tok := mustToken(t, storetest.UserID(t))
	for _, c := range []struct {
		name, body string
		header     http.Header
		status     int
		code       string
	}{
		{"a batch", "[" + listToolsMessage + "]", nil, 400, "invalid_request"},
		{"not JSON", listToolsMessage, http.Header{"Content-Type": {"text/plain"}}, 415, "unsupported_media_type"},
		{"too large", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"` + strings.Repeat("x", maxMCPBody) + `"}}`, nil, 413, "payload_too_large"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := s.mcpPost(t, tok, c.body, c.header)
			mustMatchSpec(t, "POST", "/mcp", r.status, r.header, r.body)
			mustProblem(t, r, c.status, c.code)
		})
	}
	t.Run("GET and DELETE", func(t *testing.T) {
		for _, method := range []string{"GET", "DELETE"} {
			r := s.do(t, call{method: method, path: "/mcp", token: tok})
			if r.status != 405 || r.header.Get("Allow") != "POST" {
				t.Fatalf("%s /mcp = %d, Allow %q; want 405, POST", method, r.status, r.header.Get("Allow"))
			}
		}
	})
}

// A reverse proxy on the same machine forwards requests to a loopback
// address under the public host name; /mcp serves them like any other (the
// bearer token, not the Host, is what keeps a stranger out).
func TestMCPBehindAProxyOnTheSameMachine(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New())
	req, err := http.NewRequest("POST", s.URL+"/mcp", strings.NewReader(listToolsMessage))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "tasks.example.com"
	req.Header.Set("Authorization", "Bearer "+mustToken(t, storetest.UserID(t)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"add_task"`) {
		t.Fatalf("a request for tasks.example.com on loopback = %d %s", resp.StatusCode, body)
	}
}
