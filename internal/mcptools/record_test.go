package mcptools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskchat/taskchat/internal/mcptools"
	"github.com/taskchat/taskchat/internal/store"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/tasks"
)

// mustTurn starts a chat turn of user in a new conversation.
func mustTurn(tb testing.TB, user string) tasks.Turn {
	tb.Helper()
	turn, err := store.NewTurns(storetest.Pool(tb)).StartTurn(context.Background(), tasks.TurnStart{
		UserID: user, Message: "Change my list", HistoryLimit: 10, ClaimFor: time.Minute,
	})
	if err != nil {
		tb.Fatal(err)
	}
	return turn
}

// recordOf is the record of the turn's call number seq, as the chat engine
// sends it. The tool's name comes from the call itself.
func recordOf(turn tasks.Turn, seq int, args map[string]any) tasks.CallRecord {
	raw, _ := json.Marshal(args)
	return tasks.CallRecord{
		ConversationID: turn.Conversation.ID, TurnID: turn.ID(), ClaimToken: turn.ClaimToken,
		CallID: fmt.Sprintf("call_%d", seq), Arguments: raw, Seq: seq, Started: time.Now(),
	}
}

// turnServers are the servers of a chat engine, in process, with a session
// on one of them: the calls made for a turn are made on them.
type turnServers struct {
	*mcptools.Servers
	cs *mcp.ClientSession
}

// mustTurnServers returns an engine's servers, with a session on user's.
func mustTurnServers(tb testing.TB, user string) turnServers {
	tb.Helper()
	s := turnServers{Servers: mcptools.NewServers(tasks.NewService(store.NewTasks(storetest.Pool(tb))), 16)}
	s.cs = s.mustSession(tb, user)
	return s
}

// mustSession opens a session on user's server of s.
func (s turnServers) mustSession(tb testing.TB, user string) *mcp.ClientSession {
	tb.Helper()
	cs, err := s.Connect(context.Background(), user)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cs.Close() })
	return cs
}

// mustCallFor makes a call for the turn's call number seq.
func (s turnServers) mustCallFor(tb testing.TB, turn tasks.Turn, seq int, tool string, args map[string]any) *mcp.CallToolResult {
	tb.Helper()
	cs := s.cs
	meta, forget := s.CallMeta(turn.Conversation.UserID, recordOf(turn, seq, args))
	defer forget()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args, Meta: meta})
	if err != nil {
		tb.Fatalf("%s: protocol error %v", tool, err)
	}
	return res
}

// auditRow is what the audit holds of one recorded call.
type auditRow struct {
	CallID, Tool      string
	Arguments, Result json.RawMessage
	MessageID         *int64
}

func mustAuditRows(tb testing.TB, user string, turnID int64) []auditRow {
	tb.Helper()
	rows, err := storetest.Pool(tb).Query(context.Background(), `
		SELECT call_id, tool, arguments, result, message_id FROM tool_calls
		WHERE user_id = $1 AND turn_id = $2 ORDER BY seq`, user, turnID)
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	var out []auditRow
	for rows.Next() {
		var r auditRow
		if err := rows.Scan(&r.CallID, &r.Tool, &r.Arguments, &r.Result, &r.MessageID); err != nil {
			tb.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// A call made for a turn records its change with it: the audit says what
// the model asked, and exactly what the tool answered.
func TestToolCallsForATurnAreRecorded(t *testing.T) {
	t.Parallel()
	user := storetest.UserID(t)
	s, turn := mustTurnServers(t, user), mustTurn(t, user)
	added := s.mustCallFor(t, turn, 0, "add_task", map[string]any{"title": "Buy milk"})
	id := mustStructured(t, added)["task_id"]
	calls := []*mcp.CallToolResult{
		added,
		s.mustCallFor(t, turn, 1, "list_tasks", map[string]any{}),
		s.mustCallFor(t, turn, 2, "update_task", map[string]any{"task_id": id, "title": "Buy oat milk"}),
		s.mustCallFor(t, turn, 3, "complete_task", map[string]any{"task_id": id}),
		s.mustCallFor(t, turn, 4, "delete_task", map[string]any{"task_id": id}),
	}
	for i, res := range calls {
		if res.IsError {
			t.Fatalf("call %d failed: %s", i, text(res))
		}
	}

	rows := mustAuditRows(t, user, turn.ID())
	changes := []int{0, 2, 3, 4} // list_tasks changes nothing, so is recorded only with the reply
	tools := []string{"add_task", "", "update_task", "complete_task", "delete_task"}
	if len(rows) != len(changes) {
		t.Fatalf("audit rows = %+v, want one per change", rows)
	}
	for i, seq := range changes {
		r := rows[i]
		if r.CallID != fmt.Sprintf("call_%d", seq) || r.Tool != tools[seq] || r.MessageID != nil {
			t.Errorf("row %d = %+v, want call_%d of %s, awaiting its reply", i, r, seq, tools[seq])
		}
		if want := mustJSON(t, calls[seq].StructuredContent); !storetest.SameJSON(r.Result, want) {
			t.Errorf("%s recorded %s, but the model was told %s", r.Tool, r.Result, want)
		}
	}
	if !storetest.SameJSON(rows[0].Arguments, []byte(`{"title":"Buy milk"}`)) {
		t.Errorf("add_task's recorded arguments = %s", rows[0].Arguments)
	}
}

// A call for a turn that no longer holds its conversation changes nothing,
// and says so, so that the model does not claim it did.
func TestToolCallForAnEndedTurnChangesNothing(t *testing.T) {
	t.Parallel()
	user := storetest.UserID(t)
	s := mustTurnServers(t, user)
	cs := s.cs
	milk := mustCall(t, cs, "add_task", map[string]any{"title": "Buy milk"})
	turn := mustTurn(t, user)
	if err := store.NewTurns(storetest.Pool(t)).AbandonTurn(context.Background(), user, turn.Conversation.ID, turn.ClaimToken); err != nil {
		t.Fatal(err)
	}
	for seq, c := range []struct {
		tool string
		args map[string]any
	}{
		{"add_task", map[string]any{"title": "Buy eggs"}},
		{"complete_task", map[string]any{"task_id": milk["task_id"]}},
		{"update_task", map[string]any{"task_id": milk["task_id"], "title": "Buy oat milk"}},
		{"delete_task", map[string]any{"task_id": milk["task_id"]}},
	} {
		res := s.mustCallFor(t, turn, seq, c.tool, c.args)
		if !res.IsError || !strings.Contains(strings.ToLower(text(res)), "nothing was changed") {
			t.Errorf("%s for an ended turn = %q (isError %v), want an error saying nothing was changed", c.tool, text(res), res.IsError)
		}
	}
	mustBeUnchanged(t, cs, user, turn, milk)
}

// A call whose record cannot be read fails: a change meant to be recorded
// is never made without its record.
func TestToolCallWithAnUnreadableRecordChangesNothing(t *testing.T) {
	t.Parallel()
	user := storetest.UserID(t)
	s := mustTurnServers(t, user)
	cs := s.cs
	milk := mustCall(t, cs, "add_task", map[string]any{"title": "Buy milk"})
	turn := mustTurn(t, user)
	// keyOf is the _meta value CallMeta gives rec for owner's server,
	// forgotten at once or at the test's end.
	keyOf := func(owner string, rec tasks.CallRecord, forgetNow bool) any {
		meta, forget := s.CallMeta(owner, rec)
		if forgetNow {
			forget()
		} else {
			t.Cleanup(forget)
		}
		return meta[mcptools.CallMetaKey]
	}
	whole := recordOf(turn, 0, nil)
	noTurn, noToken := whole, whole
	noTurn.TurnID, noToken.ClaimToken = 0, ""
	garbage := map[string]any{
		"a string":               "call 3 of turn 7",
		"a number":               42,
		"a list":                 []any{1, 2},
		"the record itself":      map[string]any{"TurnID": turn.ID(), "ClaimToken": turn.ClaimToken},
		"a record with no turn":  keyOf(user, noTurn, false),
		"a record with no claim": keyOf(user, noToken, false),
		"a forgotten record":     keyOf(user, whole, true),
		"another user's record":  keyOf(storetest.UserID(t), whole, false),
	}
	for name, meta := range garbage {
		t.Run(name, func(t *testing.T) {
			for _, c := range []struct {
				tool string
				args map[string]any
			}{
				{"add_task", map[string]any{"title": "Buy eggs"}},
				{"complete_task", map[string]any{"task_id": milk["task_id"]}},
				{"update_task", map[string]any{"task_id": milk["task_id"], "title": "Buy oat milk"}},
				{"delete_task", map[string]any{"task_id": milk["task_id"]}},
			} {
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{
					Name: c.tool, Arguments: c.args, Meta: mcp.Meta{mcptools.CallMetaKey: meta},
				})
				if err != nil {
					t.Fatalf("%s: protocol error %v", c.tool, err)
				}
				if !res.IsError || !strings.Contains(strings.ToLower(text(res)), "nothing was changed") {
					t.Errorf("%s with %s as its record = %q (isError %v), want an error saying nothing was changed",
						c.tool, name, text(res), res.IsError)
				}
			}
		})
	}
	mustBeUnchanged(t, cs, user, turn, milk)
}

// mustBeUnchanged checks that the user has only the task milk, as it was,
// and that the turn recorded nothing.
func mustBeUnchanged(tb testing.TB, cs *mcp.ClientSession, user string, turn tasks.Turn, milk map[string]any) {
	tb.Helper()
	list := mustCall(tb, cs, "list_tasks", nil)["tasks"].([]any)
	if len(list) != 1 {
		tb.Fatalf("tasks = %v, want only %v", list, milk)
	}
	if got := list[0].(map[string]any); got["id"] != milk["task_id"] || got["title"] != "Buy milk" || got["completed"] != false {
		tb.Fatalf("task = %v, want %v untouched", got, milk)
	}
	if rows := mustAuditRows(tb, user, turn.ID()); len(rows) != 0 {
		tb.Fatalf("audit rows = %+v, want none", rows)
	}
}

func mustStructured(tb testing.TB, res *mcp.CallToolResult) map[string]any {
	tb.Helper()
	var out map[string]any
	if err := json.Unmarshal(mustJSON(tb, res.StructuredContent), &out); err != nil {
		tb.Fatal(err)
	}
	return out
}

// A record is taken by the first call of its user that reads it: its key,
// sent again, finds nothing, and the second call changes nothing. Another
// user's call with the key fails and leaves the record to its owner.
func TestCallRecordIsTakenOnce(t *testing.T) {
	t.Parallel()
	user := storetest.UserID(t)
	s := mustTurnServers(t, user)
	cs := s.cs
	turn := mustTurn(t, user)
	args := map[string]any{"title": "Buy milk"}
	meta, forget := s.CallMeta(user, recordOf(turn, 0, args))
	defer forget()
	other := s.mustSession(t, storetest.UserID(t))
	if res, err := other.CallTool(context.Background(), &mcp.CallToolParams{Name: "add_task", Arguments: args, Meta: meta}); err != nil || !res.IsError {
		t.Fatalf("another user's call with the record's key: %q (isError %v), %v; want refused", text(res), res.IsError, err)
	}
	for i, wantError := range []bool{false, true} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "add_task", Arguments: args, Meta: meta})
		if err != nil || res.IsError != wantError {
			t.Fatalf("call %d with the record's key: %q (isError %v), %v; want isError %v", i+1, text(res), res.IsError, err, wantError)
		}
	}
	if list := mustCall(t, cs, "list_tasks", nil)["tasks"].([]any); len(list) != 1 {
		t.Fatalf("tasks = %v, want the one the first call added", list)
	}
	if rows := mustAuditRows(t, user, turn.ID()); len(rows) != 1 {
		t.Fatalf("audit rows = %+v, want the first call's", rows)
	}
}

// A record is read only by the servers whose CallMeta named it: the same
// user's server of another engine (another NewServers), or one built on its
// own (NewServer), fails the call and leaves the record where it is.
func TestCallRecordIsReadOnlyByItsServers(t *testing.T) {
	t.Parallel()
	user := storetest.UserID(t)
	s := mustTurnServers(t, user)
	turn := mustTurn(t, user)
	args := map[string]any{"title": "Buy milk"}
	meta, forget := s.CallMeta(user, recordOf(turn, 0, args))
	defer forget()
	alone, err := mcptools.Connect(context.Background(), user, tasks.NewService(store.NewTasks(storetest.Pool(t))))
	if err != nil {
		t.Fatal(err)
	}
	defer alone.Close()
	for name, cs := range map[string]*mcp.ClientSession{
		"another engine's server": mustTurnServers(t, user).cs,
		"a server of its own":     alone,
	} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "add_task", Arguments: args, Meta: meta})
		if err != nil || !res.IsError || !strings.Contains(strings.ToLower(text(res)), "nothing was changed") {
			t.Fatalf("%s, sent the record's key: %q (isError %v), %v; want refused", name, text(res), res.IsError, err)
		}
	}
	if res, err := s.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "add_task", Arguments: args, Meta: meta}); err != nil || res.IsError {
		t.Fatalf("the record's own server: %q (isError %v), %v; want the task added", text(res), res.IsError, err)
	}
	if rows := mustAuditRows(t, user, turn.ID()); len(rows) != 1 {
		t.Fatalf("audit rows = %+v, want the one call its own server took", rows)
	}
}
