package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/tasks"
)

// mcpRecord is the record of an outside MCP client's call, as mcptools
// makes it: no turn, no conversation.
func mcpRecord(tool, args string) *tasks.CallRecord {
	return &tasks.CallRecord{Source: tasks.SourceMCP, CallID: "req-7f3a", Tool: tool, Arguments: json.RawMessage(args), Started: time.Now()}
}

// mcpRow is one tool_calls row of an MCP call.
type mcpRow struct {
	TurnID, ConversationID, MessageID *int64
	CallID, Tool                      string
	Arguments, Result                 json.RawMessage
	IsError                           bool
}

// mustMCPRows returns the user's MCP calls, oldest first.
func mustMCPRows(tb testing.TB, user string) []mcpRow {
	tb.Helper()
	rows, err := storetest.Pool(tb).Query(context.Background(), `
		SELECT turn_id, conversation_id, message_id, call_id, tool, arguments, result, is_error
		FROM tool_calls WHERE user_id = $1 AND source = 'mcp' ORDER BY id`, user)
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	var out []mcpRow
	for rows.Next() {
		var r mcpRow
		if err := rows.Scan(&r.TurnID, &r.ConversationID, &r.MessageID, &r.CallID, &r.Tool, &r.Arguments, &r.Result, &r.IsError); err != nil {
			tb.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// An MCP client's change commits with its audit row, which belongs to no
// turn and no conversation, and needs none to be made.
func TestMCPChangeCommitsWithItsRecord(t *testing.T) {
	t.Parallel()
	s := newTasks(t)
	for _, c := range changes {
		t.Run(c.tool, func(t *testing.T) {
			t.Parallel()
			user := storetest.UserID(t)
			milk := mustCreate(t, s, user, "Buy milk", nil)
			args := fmt.Sprintf(`{"task_id":%d}`, milk.ID)

			task, err := c.change(s, user, milk.ID, mcpRecord(c.tool, args))
			if err != nil {
				t.Fatal(err)
			}
			rows := mustMCPRows(t, user)
			if len(rows) != 1 {
				t.Fatalf("MCP audit rows = %+v, want one", rows)
			}
			r := rows[0]
			if r.TurnID != nil || r.ConversationID != nil || r.MessageID != nil {
				t.Errorf("row has turn %v, conversation %v, message %v; want none", r.TurnID, r.ConversationID, r.MessageID)
			}
			if r.CallID != "req-7f3a" || r.Tool != c.tool || r.IsError || !storetest.SameJSON(r.Arguments, json.RawMessage(args)) {
				t.Errorf("row = %+v, want the call as made", r)
			}
			want := mustJSON(t, map[string]any{"task_id": task.ID, "status": c.status, "title": task.Title})
			if !storetest.SameJSON(r.Result, want) {
				t.Errorf("row's result = %s, want %s", r.Result, want)
			}
		})
	}
}

// An MCP change of a task the user does not have changes and records
// nothing, and says the task was not found: there is no turn to blame.
func TestMCPChangeOfATaskNotFound(t *testing.T) {
	t.Parallel()
	s := newTasks(t)
	alice, bob := storetest.UserID(t), storetest.UserID(t)
	secret := mustCreate(t, s, alice, "Alice's secret", nil)
	for _, c := range changes[1:] {
		_, err := c.change(s, bob, secret.ID, mcpRecord(c.tool, `{}`))
		var nf *tasks.NotFoundError
		if !errors.As(err, &nf) || nf.ID != secret.ID {
			t.Errorf("%s of another user's task = %v, want task %d not found", c.tool, err, secret.ID)
		}
	}
	if rows := mustMCPRows(t, bob); len(rows) != 0 {
		t.Errorf("refused changes were recorded: %+v", rows)
	}
	if list := mustList(t, s, alice); len(list) != 1 || list[0].Title != "Alice's secret" || list[0].Completed {
		t.Errorf("alice's tasks = %+v", list)
	}
}

// A call that changed nothing is recorded on its own, with what its client
// was told; only an MCP client's call is.
func TestRecordCall(t *testing.T) {
	t.Parallel()
	s, user, ctx := newTasks(t), storetest.UserID(t), context.Background()
	err := s.RecordCall(ctx, user, *mcpRecord("list_tasks", `{"status":"pending"}`), json.RawMessage(`{"tasks":[]}`), false)
	if err != nil {
		t.Fatal(err)
	}
	err = s.RecordCall(ctx, user, *mcpRecord("delete_task", `{"task_id":9}`), json.RawMessage(`{"error":"Task 9 was not found."}`), true)
	if err != nil {
		t.Fatal(err)
	}
	rows := mustMCPRows(t, user)
	if len(rows) != 2 || rows[0].Tool != "list_tasks" || rows[0].IsError || !storetest.SameJSON(rows[0].Result, tasks.StoredResult("list_tasks", json.RawMessage(`{"tasks":[]}`))) ||
		rows[1].Tool != "delete_task" || !rows[1].IsError || !storetest.SameJSON(rows[1].Arguments, json.RawMessage(`{"task_id":9}`)) {
		t.Fatalf("rows = %+v", rows)
	}
	chat := *mcpRecord("list_tasks", `{}`)
	chat.Source = tasks.SourceChat
	if err := s.RecordCall(ctx, user, chat, nil, false); !errors.Is(err, tasks.ErrInvalid) {
		t.Fatalf("recording a chat call on its own = %v, want ErrInvalid", err)
	}
}

// MCP calls stay out of every turn and conversation: a turn of the same
// user numbers its calls from 0 as ever, and its reply takes only its own.
func TestMCPCallsStayOutOfTurns(t *testing.T) {
	t.Parallel()
	turns, s, convs, user := newTurns(t), newTasks(t), newConversations(t), storetest.UserID(t)
	turn := mustStart(t, turns, user, 0, "Add milk")
	mustCreate(t, s, user, "Buy bread", mcpRecord("add_task", `{"title":"Buy bread"}`))
	mustCreate(t, s, user, "Buy milk", recordOf(turn, 0, "add_task", `{"title":"Buy milk"}`))
	mustCreate(t, s, user, "Buy eggs", mcpRecord("add_task", `{"title":"Buy eggs"}`))
	mustFinish(t, turns, turn, "Added task 2.", tasks.ToolCall{CallID: "call_0", Tool: "add_task", Arguments: json.RawMessage(`{"title":"Buy milk"}`)})

	msgs := mustMessages(t, convs, user, turn.Conversation.ID)
	if len(msgs) != 2 || len(msgs[1].ToolCalls) != 1 || msgs[1].ToolCalls[0].CallID != "call_0" {
		t.Fatalf("the conversation = %+v, want the turn's one call", msgs)
	}
	if rows := mustMCPRows(t, user); len(rows) != 2 || rows[0].MessageID != nil || rows[1].MessageID != nil {
		t.Fatalf("MCP rows = %+v, want both, attached to nothing", rows)
	}
	// And the database holds every row to it.
	_, err := storetest.Pool(t).Exec(context.Background(), `
		INSERT INTO tool_calls (source, turn_id, user_id, call_id, tool, arguments, result, is_error, round, seq, duration_ms)
		VALUES ('mcp', $1, $2, 'forged', 'add_task', '{}', '{}', false, 0, 1, 0)`, turn.ID(), user)
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.ConstraintName != "tool_calls_source_check" {
		t.Fatalf("an MCP call stored as a call of a turn: %v, want the source check to refuse it", err)
	}
}
