package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/taskchat/taskchat/internal/store"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/tasks"
)

func newTurns(tb testing.TB) *store.Turns {
	tb.Helper()
	return store.NewTurns(storetest.Pool(tb))
}

func mustStart(tb testing.TB, s *store.Turns, user string, convID int64, msg string) tasks.Turn {
	tb.Helper()
	return mustStartWith(tb, s, tasks.TurnStart{UserID: user, ConversationID: convID, Message: msg})
}

// mustStartWith starts the turn in, loading 50 messages of history and
// claiming the conversation for a minute unless in says otherwise.
func mustStartWith(tb testing.TB, s *store.Turns, in tasks.TurnStart) tasks.Turn {
	tb.Helper()
	if in.HistoryLimit == 0 {
		in.HistoryLimit = 50
	}
	if in.ClaimFor == 0 {
		in.ClaimFor = time.Minute
	}
	turn, err := s.StartTurn(context.Background(), in)
	if err != nil {
		tb.Fatalf("start turn %q: %v", in.Message, err)
	}
	return turn
}

// mustFinish stores the turn's reply with calls, numbered in order as the
// chat engine numbers them.
func mustFinish(tb testing.TB, s *store.Turns, turn tasks.Turn, reply string, calls ...tasks.ToolCall) tasks.Message {
	tb.Helper()
	calls = append([]tasks.ToolCall(nil), calls...)
	for i := range calls {
		calls[i].Seq = i
	}
	m, err := s.FinishTurn(context.Background(), turnEnd(turn, reply, calls...))
	if err != nil {
		tb.Fatalf("finish turn %q: %v", reply, err)
	}
	return m
}

// turnEnd is the end of turn with reply and calls, as they are.
func turnEnd(turn tasks.Turn, reply string, calls ...tasks.ToolCall) tasks.TurnEnd {
	return tasks.TurnEnd{
		UserID: turn.Conversation.UserID, ConversationID: turn.Conversation.ID, TurnID: turn.ID(),
		ClaimToken: turn.ClaimToken, Reply: reply, ToolCalls: calls, Replaces: turn.Replaces,
	}
}

// call is a tool call as the chat engine hands it to FinishTurn.
func call(id, tool, args, result string) tasks.ToolCall {
	return tasks.ToolCall{CallID: id, Tool: tool, Arguments: json.RawMessage(args), Result: json.RawMessage(result)}
}

func TestTurnsBuildAHistory(t *testing.T) {
	t.Parallel()
	s, user := newTurns(t), storetest.UserID(t)

	first := mustStart(t, s, user, 0, "Add a task to buy groceries\nplease")
	if first.Conversation.Title != "Add a task to buy groceries" || len(first.History) != 0 || first.UserMessage.Role != "user" {
		t.Fatalf("first turn = %+v", first)
	}
	if first.ID() != first.UserMessage.ID || first.ID() == 0 {
		t.Fatalf("a turn's id is its user message's: %d vs %+v", first.ID(), first.UserMessage)
	}
	added := call("call_1", "add_task", `{"title":"Buy groceries"}`, `{"task_id":1,"status":"created","title":"Buy groceries"}`)
	added.Duration = 3 * time.Millisecond
	bad := call("call_2", "add_task", `{"title":`, `{"error":"bad"}`)
	bad.Round, bad.IsError = 1, true
	reply := mustFinish(t, s, first, "Added task 1.", added, bad)

	second := mustStart(t, s, user, first.Conversation.ID, "Show me all my tasks")
	if len(second.History) != 2 {
		t.Fatalf("history = %+v, want the first turn's two messages", second.History)
	}
	h := second.History
	if h[0].Content != "Add a task to buy groceries\nplease" || h[1].ID != reply.ID || h[1].Content != "Added task 1." {
		t.Fatalf("history = %+v", h)
	}
	got := h[1].ToolCalls
	if len(got) != 2 || got[0].CallID != "call_1" || !storetest.SameJSON(got[0].Result, added.Result) || got[0].Duration != added.Duration {
		t.Fatalf("replayed tool calls = %+v", got)
	}
	if got[1].Round != 1 || !got[1].IsError || string(got[1].Arguments) != `"{\"title\":"` {
		t.Fatalf("malformed arguments are audited as a JSON string: %+v (%s)", got[1], got[1].Arguments)
	}
}

// StartTurn commits without waiting for the disk. That must end with its
// own transaction: were it left on the pooled connection, every later write
// there — a tool's, FinishTurn's — would be lazy too, and a reply could be
// answered before it is durable.
func TestStartTurnLeavesLaterCommitsDurable(t *testing.T) {
	t.Parallel()
	cfg, err := pgxpool.ParseConfig(storetest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 1 // every statement below runs on the connection StartTurn used
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	s, user := store.NewTurns(pool), storetest.UserID(t)
	mustBeDurable := func(after string) {
		t.Helper()
		var mode string
		if err := pool.QueryRow(context.Background(), `SHOW synchronous_commit`).Scan(&mode); err != nil {
			t.Fatal(err)
		}
		if mode != "on" {
			t.Fatalf("after %s the connection commits with synchronous_commit=%s", after, mode)
		}
	}

	first := mustStart(t, s, user, 0, "Add a task to buy groceries")
	mustBeDurable("starting a new conversation")
	mustFinish(t, s, first, "Added task 1.")
	mustStart(t, s, user, first.Conversation.ID, "Show me all my tasks")
	mustBeDurable("continuing a conversation")
}

func TestHistoryLimit(t *testing.T) {
	t.Parallel()
	s, user := newTurns(t), storetest.UserID(t)
	turn := mustStart(t, s, user, 0, "m0")
	mustFinish(t, s, turn, "r0", call("c0", "list_tasks", `{}`, `{"tasks":[]}`))
	for i := 1; i < 4; i++ {
		turn = mustStart(t, s, user, turn.Conversation.ID, fmt.Sprintf("m%d", i))
		mustFinish(t, s, turn, fmt.Sprintf("r%d", i))
	}
	got := mustStartWith(t, s, tasks.TurnStart{UserID: user, ConversationID: turn.Conversation.ID, Message: "m4", HistoryLimit: 3})
	var contents []string
	for _, m := range got.History {
		contents = append(contents, m.Content)
	}
	// r2 is among the newest 3, but a history starts at a user message.
	if fmt.Sprint(contents) != "[m3 r3]" {
		t.Fatalf("newest 3 from a user message = %v", contents)
	}
}

func TestConversationClaim(t *testing.T) {
	t.Parallel()
	s, convs, user := newTurns(t), newConversations(t), storetest.UserID(t)
	ctx := context.Background()
	turn := mustStart(t, s, user, 0, "hello")

	_, err := s.StartTurn(ctx, tasks.TurnStart{UserID: user, ConversationID: turn.Conversation.ID, Message: "again", ClaimFor: time.Minute})
	if !errors.Is(err, tasks.ErrConversationBusy) {
		t.Fatalf("second turn while the first runs: %v, want busy", err)
	}
	other := mustStart(t, s, user, 0, "another conversation runs in parallel")
	mustFinish(t, s, other, "ok")

	mustFinish(t, s, turn, "hi")
	next := mustStart(t, s, user, turn.Conversation.ID, "after the first finished")
	if err := s.AbandonTurn(ctx, user, turn.Conversation.ID, next.ClaimToken); err != nil {
		t.Fatal(err)
	}
	msgs := mustMessages(t, convs, user, turn.Conversation.ID)
	if len(msgs) != 3 || msgs[2].Content != "after the first finished" {
		t.Fatalf("the busy attempt must store nothing; messages = %+v", msgs)
	}
}

func TestConversationClaimExpires(t *testing.T) {
	t.Parallel()
	s, user := newTurns(t), storetest.UserID(t)
	turn := mustStartWith(t, s, tasks.TurnStart{UserID: user, Message: "crash after this", ClaimFor: time.Millisecond})
	time.Sleep(5 * time.Millisecond) // the claim, not the test, is what expires
	mustStart(t, s, user, turn.Conversation.ID, "a crashed replica blocks nobody for long")
}

// The calls that changed a task were recorded as they ran; FinishTurn gives
// them the reply, keeping what was recorded, and records the other calls.
func TestFinishTurnAttachesRecordedCalls(t *testing.T) {
	t.Parallel()
	turns, convs, ts, user := newTurns(t), newConversations(t), newTasks(t), storetest.UserID(t)
	turn := mustStart(t, turns, user, 0, "Add milk, then tick it off")
	milk := mustCreate(t, ts, user, "Buy milk", recordOf(turn, 1, "add_task", `{"title":"Buy milk"}`))
	mustComplete(t, ts, user, milk.ID, recordOf(turn, 3, "complete_task", fmt.Sprintf(`{"task_id":%d}`, milk.ID)))
	recorded := mustAuditRows(t, user, turn.ID())

	listed := call("call_0", "list_tasks", `{}`, `{"tasks":[]}`)
	added := call("call_1", "add_task", `{"title":"Buy milk"}`, `{"what":"the engine believes"}`)
	added.Duration = 5 * time.Millisecond
	refused := call("call_2", "add_task", `{"title":""}`, `"Invalid title: is required."`)
	refused.IsError = true
	completed := call("call_3", "complete_task", fmt.Sprintf(`{"task_id":%d}`, milk.ID), `{}`)
	reply := mustFinish(t, turns, turn, "Added and completed.", listed, added, refused, completed)

	msgs := mustMessages(t, convs, user, turn.Conversation.ID)
	if len(msgs) != 2 || msgs[1].ID != reply.ID || msgs[1].Interrupted {
		t.Fatalf("messages = %+v, want the user message and one reply", msgs)
	}
	got := msgs[1].ToolCalls
	if len(got) != 4 {
		t.Fatalf("reply's calls = %+v, want all four", got)
	}
	for i, c := range got {
		if c.Seq != i || c.CallID != fmt.Sprintf("call_%d", i) {
			t.Fatalf("call %d = %+v, want the turn's calls in order", i, c)
		}
	}
	if !storetest.SameJSON(got[1].Result, recorded[0].Result) || !storetest.SameJSON(got[3].Result, recorded[1].Result) {
		t.Errorf("recorded results became %s and %s, want %s and %s kept",
			got[1].Result, got[3].Result, recorded[0].Result, recorded[1].Result)
	}
	if got[1].Duration != added.Duration {
		t.Errorf("recorded call's duration = %v, want the engine's %v", got[1].Duration, added.Duration)
	}
	if !storetest.SameJSON(got[0].Result, tasks.StoredResult("list_tasks", listed.Result)) || !got[2].IsError || !storetest.SameJSON(got[2].Result, refused.Result) {
		t.Errorf("unrecorded calls stored as %+v and %+v", got[0], got[2])
	}
	key := conversationKey(t, user, turn.Conversation.ID)
	for _, r := range mustAuditRows(t, user, turn.ID()) {
		if r.MessageID == nil || *r.MessageID != reply.ID || r.ConversationID == nil || *r.ConversationID != key {
			t.Errorf("row %d belongs to message %s of conversation %s, want reply %d of conversation %d (key %d)",
				r.Seq, deref(r.MessageID), deref(r.ConversationID), reply.ID, turn.Conversation.ID, key)
		}
	}
}

// A turn cut short (its replica died after a tool changed a task) is
// finished by the next turn of its conversation, before the new message, so
// that the model sees what was done.
func TestNextTurnFinishesATurnCutShort(t *testing.T) {
	t.Parallel()
	turns, convs, ts := newTurns(t), newConversations(t), newTasks(t)

	t.Run("its calls get an interrupted reply", func(t *testing.T) {
		user := storetest.UserID(t)
		crashed := mustStart(t, turns, user, 0, "Add milk and tick it off")
		milk := mustCreate(t, ts, user, "Buy milk", recordOf(crashed, 0, "add_task", `{"title":"Buy milk"}`))
		mustComplete(t, ts, user, milk.ID, recordOf(crashed, 1, "complete_task", fmt.Sprintf(`{"task_id":%d}`, milk.ID)))
		mustLapse(t, user, crashed.Conversation.ID) // the replica died: no reply, and the claim runs out

		next := mustStart(t, turns, user, crashed.Conversation.ID, "Did that work?")
		h := next.History
		if len(h) != 2 || h[0].ID != crashed.ID() {
			t.Fatalf("history = %+v, want the crashed turn's message and its reply", h)
		}
		cut := h[1]
		if cut.Role != tasks.RoleAssistant || cut.Content != "" || !cut.Interrupted || cut.ID > next.ID() {
			t.Fatalf("crashed turn's reply = %+v, want an empty interrupted reply before message %d", cut, next.ID())
		}
		if len(cut.ToolCalls) != 2 || cut.ToolCalls[0].Tool != "add_task" || cut.ToolCalls[1].Tool != "complete_task" ||
			!storetest.SameJSON(cut.ToolCalls[1].Result, mustJSON(t, map[string]any{"task_id": milk.ID, "status": "completed", "title": "Buy milk"})) {
			t.Fatalf("crashed turn's calls = %+v", cut.ToolCalls)
		}
		msgs := mustMessages(t, convs, user, crashed.Conversation.ID)
		if roles(msgs) != "user assistant(interrupted) user" {
			t.Fatalf("messages = %s, want the crashed turn finished once, before the new message", roles(msgs))
		}
	})

	t.Run("a turn that changed nothing gets no reply", func(t *testing.T) {
		user := storetest.UserID(t)
		crashed := mustStart(t, turns, user, 0, "What is on my list?")
		mustLapse(t, user, crashed.Conversation.ID)
		next := mustStart(t, turns, user, crashed.Conversation.ID, "Hello?")
		if len(next.History) != 1 || next.History[0].ID != crashed.ID() {
			t.Fatalf("history = %+v, want only the crashed turn's message", next.History)
		}
	})
}

func TestRecoverTurn(t *testing.T) {
	t.Parallel()
	turns, convs, ts := newTurns(t), newConversations(t), newTasks(t)
	ctx := context.Background()
	// crashed starts a turn that adds two tasks and then dies, claim held.
	crashed := func(t *testing.T, user string) tasks.Turn {
		t.Helper()
		turn := mustStart(t, turns, user, 0, "Add milk and eggs")
		mustCreate(t, ts, user, "Buy milk", recordOf(turn, 0, "add_task", `{"title":"Buy milk"}`))
		mustCreate(t, ts, user, "Buy eggs", recordOf(turn, 1, "add_task", `{"title":"Buy eggs"}`))
		return turn
	}
	mustRecover := func(t *testing.T, user string, turn tasks.Turn) []tasks.ToolCall {
		t.Helper()
		calls, err := turns.RecoverTurn(ctx, user, tasks.TurnRef{ConversationID: turn.Conversation.ID, TurnID: turn.ID()})
		if err != nil {
			t.Fatalf("recover turn %d: %v", turn.ID(), err)
		}
		return calls
	}
	wantBothAdded := func(t *testing.T, calls []tasks.ToolCall) {
		t.Helper()
		if len(calls) != 2 || calls[0].Seq != 0 || calls[1].Seq != 1 || !strings.Contains(string(calls[1].Result), "Buy eggs") {
			t.Fatalf("recovered calls = %+v, want both add_task calls in order", calls)
		}
	}

	t.Run("finishes a turn whose claim ran out, once", func(t *testing.T) {
		user := storetest.UserID(t)
		turn := crashed(t, user)
		mustLapse(t, user, turn.Conversation.ID)
		wantBothAdded(t, mustRecover(t, user, turn))
		wantBothAdded(t, mustRecover(t, user, turn))
		msgs := mustMessages(t, convs, user, turn.Conversation.ID)
		if roles(msgs) != "user assistant(interrupted)" || len(msgs[1].ToolCalls) != 2 {
			t.Fatalf("messages = %s %+v, want one interrupted reply with both calls", roles(msgs), msgs)
		}
	})

	t.Run("leaves a turn that still holds its conversation to finish", func(t *testing.T) {
		user := storetest.UserID(t)
		turn := crashed(t, user)
		wantBothAdded(t, mustRecover(t, user, turn))
		if msgs := mustMessages(t, convs, user, turn.Conversation.ID); roles(msgs) != "user" {
			t.Fatalf("messages while the turn runs = %s", roles(msgs))
		}
		reply := mustFinish(t, turns, turn, "Added both.",
			call("call_0", "add_task", `{"title":"Buy milk"}`, `{}`), call("call_1", "add_task", `{"title":"Buy eggs"}`, `{}`))
		msgs := mustMessages(t, convs, user, turn.Conversation.ID)
		if roles(msgs) != "user assistant" || msgs[1].ID != reply.ID || len(msgs[1].ToolCalls) != 2 {
			t.Fatalf("messages = %s %+v, want the turn's own reply with both calls", roles(msgs), msgs)
		}
	})

	t.Run("returns the calls after the conversation was deleted", func(t *testing.T) {
		user := storetest.UserID(t)
		turn := crashed(t, user)
		mustDeleteConversation(t, convs, user, turn.Conversation.ID)
		wantBothAdded(t, mustRecover(t, user, turn))
	})

	t.Run("finds nothing of another user's turn", func(t *testing.T) {
		user := storetest.UserID(t)
		turn := crashed(t, user)
		mustLapse(t, user, turn.Conversation.ID)
		if calls := mustRecover(t, storetest.UserID(t), turn); len(calls) != 0 {
			t.Fatalf("another user recovers %+v", calls)
		}
		if n := storetest.Count(t, `SELECT count(*) FROM messages WHERE conversation_id = $1`, conversationKey(t, user, turn.Conversation.ID)); n != 1 {
			t.Fatalf("the conversation holds %d messages after another user's recovery, want only the user's message", n)
		}
	})
}

func roles(msgs []tasks.Message) string {
	var s []string
	for _, m := range msgs {
		r := m.Role
		if m.Interrupted {
			r += "(interrupted)"
		}
		s = append(s, r)
	}
	return strings.Join(s, " ")
}

// A turn's final write that comes after its turn was finished for it (its
// claim lapsed, and a read of the conversation gave its calls an
// interrupted reply) must not take the calls away from that reply.
func TestLateFinishLeavesARecoveredTurnAlone(t *testing.T) {
	t.Parallel()
	s, convs, ts, user := newTurns(t), newConversations(t), newTasks(t), storetest.UserID(t)
	turn := mustStart(t, s, user, 0, "Add milk")
	mustCreate(t, ts, user, "Buy milk", recordOf(turn, 0, "add_task", `{"title":"Buy milk"}`))
	mustLapse(t, user, turn.Conversation.ID)
	recovered := mustMessages(t, convs, user, turn.Conversation.ID)
	if len(recovered) != 2 || !recovered[1].Interrupted || len(recovered[1].ToolCalls) != 1 {
		t.Fatalf("after the read: %+v, want the call under an interrupted reply", recovered)
	}

	mustFinish(t, s, turn, "Added milk.", call("call_0", "add_task", `{"title":"Buy milk"}`, `{"task_id":1,"status":"created","title":"Buy milk"}`))
	msgs := mustMessages(t, convs, user, turn.Conversation.ID)
	if len(msgs) != 3 || msgs[1].ID != recovered[1].ID || len(msgs[1].ToolCalls) != 1 || len(msgs[2].ToolCalls) != 0 {
		t.Fatalf("after the late final write: %+v; the call must stay with the interrupted reply", msgs)
	}
}
