package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/tasks"
)

// A regenerated reply replaces the last one; the turn's calls, and the
// change one of them made, pass from the old reply to the new one.
func TestReopenTurnMovesTheCallsToTheNewReply(t *testing.T) {
	t.Parallel()
	turns, convs, ts, user := newTurns(t), newConversations(t), newTasks(t), storetest.UserID(t)
	ctx := context.Background()
	first := mustStart(t, turns, user, 0, "Show my list")
	mustFinish(t, turns, first, "It is empty.")
	turn := mustStart(t, turns, user, first.Conversation.ID, "Add milk")
	mustCreate(t, ts, user, "Buy milk", recordOf(turn, 0, "add_task", `{"title":"Buy milk"}`))
	mustFinish(t, turns, turn, "Done, I guess.",
		call("call_0", "add_task", `{"title":"Buy milk"}`, `{}`), call("call_1", "list_tasks", `{}`, `{"tasks":[]}`))

	again, err := turns.ReopenTurn(ctx, tasks.TurnStart{UserID: user, ConversationID: turn.Conversation.ID, Message: "Add milk",
		HistoryLimit: 50, ClaimFor: time.Minute}, turn.ID())
	if err != nil {
		t.Fatal(err)
	}
	if again.ID() != turn.ID() || again.ClaimToken == "" || again.ClaimToken == turn.ClaimToken {
		t.Fatalf("reopened turn %d with claim %q, want turn %d under a new claim", again.ID(), again.ClaimToken, turn.ID())
	}
	if len(again.History) != 2 || again.History[0].ID != first.ID() || again.History[1].Content != "It is empty." {
		t.Fatalf("history = %+v, want the first turn only", again.History)
	}
	if len(again.Earlier) != 2 || again.Earlier[0].Tool != "add_task" || again.Earlier[1].Tool != "list_tasks" ||
		!storetest.SameJSON(again.Earlier[0].Result, mustJSON(t, map[string]any{"task_id": 1, "status": "created", "title": "Buy milk"})) {
		t.Fatalf("earlier calls = %+v, want the turn's two, with the recorded result", again.Earlier)
	}
	before := mustMessages(t, convs, user, turn.Conversation.ID)
	if roles(before) != "user assistant user assistant" || before[3].Content != "Done, I guess." || len(before[3].ToolCalls) != 2 {
		t.Fatalf("messages while the reply is rewritten = %s %+v, want the old reply and its calls still there", roles(before), before[3])
	}
	if again.Replaces != before[3].ID {
		t.Fatalf("the reopened turn replaces %d, want the old reply %d", again.Replaces, before[3].ID)
	}
	if len(again.History) != 2 {
		t.Fatalf("history = %+v, want neither the turn's message nor its old reply", again.History)
	}

	calls := append(again.Earlier, call("call_2", "list_tasks", `{}`, `{"tasks":[{"id":1}]}`))
	calls[2].Seq = 2
	reply, err := turns.FinishTurn(ctx, turnEnd(again, "I've added Buy milk.", calls...))
	if err != nil {
		t.Fatal(err)
	}
	msgs := mustMessages(t, convs, user, turn.Conversation.ID)
	if roles(msgs) != "user assistant user assistant" || msgs[3].ID != reply.ID || msgs[3].Content != "I've added Buy milk." {
		t.Fatalf("messages = %+v, want the new reply in the old one's place", msgs)
	}
	if len(msgs[3].ToolCalls) != 3 {
		t.Fatalf("new reply's calls = %+v, want the earlier two and the new one", msgs[3].ToolCalls)
	}
	for _, r := range mustAuditRows(t, user, turn.ID()) {
		if r.MessageID == nil || *r.MessageID != reply.ID {
			t.Fatalf("call %d belongs to message %v, want the new reply %d", r.Seq, r.MessageID, reply.ID)
		}
	}
	if list := storetest.Tasks(t, ts, user, tasks.StatusAll); len(list) != 1 {
		t.Fatalf("tasks = %+v, want the one added once", list)
	}
}

func TestReopenTurnRefuses(t *testing.T) {
	t.Parallel()
	turns, user := newTurns(t), storetest.UserID(t)
	ctx := context.Background()
	first := mustStart(t, turns, user, 0, "Add milk")
	mustFinish(t, turns, first, "Added.")
	second := mustStart(t, turns, user, first.Conversation.ID, "Add eggs")
	mustFinish(t, turns, second, "Added.")
	reopen := func(user string, convID int64, msg string, turnID int64) error {
		_, err := turns.ReopenTurn(ctx, tasks.TurnStart{UserID: user, ConversationID: convID, Message: msg,
			HistoryLimit: 50, ClaimFor: time.Minute}, turnID)
		return err
	}
	conv := first.Conversation.ID
	cases := []struct {
		name    string
		err     error
		wantErr error
	}{
		{"an earlier turn", reopen(user, conv, "Add milk", first.ID()), tasks.ErrNoReplyToRegenerate},
		{"an earlier turn's message", reopen(user, conv, "Add milk", 0), tasks.ErrNoReplyToRegenerate},
		{"another message", reopen(user, conv, "Add bread", second.ID()), tasks.ErrNoReplyToRegenerate},
		{"another user's conversation", reopen(storetest.UserID(t), conv, "Add eggs", 0), tasks.ErrNotFound},
	}
	for _, c := range cases {
		if !errors.Is(c.err, c.wantErr) {
			t.Errorf("%s: %v, want %v", c.name, c.err, c.wantErr)
		}
	}
	if err := reopen(user, conv, "Add eggs", second.ID()); err != nil {
		t.Fatalf("the last turn: %v", err)
	}
	if err := reopen(user, conv, "Add eggs", second.ID()); !errors.Is(err, tasks.ErrConversationBusy) {
		t.Fatalf("the last turn while it is rewritten: %v, want ErrConversationBusy", err)
	}
}

// A reopened turn whose new run dies before it changed anything leaves the
// conversation as it was: its old reply, with the calls of its first run.
func TestReopenedTurnCutShortKeepsItsReply(t *testing.T) {
	t.Parallel()
	turns, convs, ts, user := newTurns(t), newConversations(t), newTasks(t), storetest.UserID(t)
	turn := mustStart(t, turns, user, 0, "Add milk")
	mustCreate(t, ts, user, "Buy milk", recordOf(turn, 0, "add_task", `{"title":"Buy milk"}`))
	mustFinish(t, turns, turn, "Added.", call("call_0", "add_task", `{"title":"Buy milk"}`, `{}`))
	again, err := turns.ReopenTurn(context.Background(), tasks.TurnStart{UserID: user, ConversationID: turn.Conversation.ID,
		Message: "Add milk", HistoryLimit: 50, ClaimFor: time.Minute}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := turns.AbandonTurn(context.Background(), user, turn.Conversation.ID, again.ClaimToken); err != nil {
		t.Fatal(err) // the model failed before it said anything
	}
	mustStart(t, turns, user, turn.Conversation.ID, "Did it work?")
	msgs := mustMessages(t, convs, user, turn.Conversation.ID)
	if roles(msgs) != "user assistant user" || msgs[1].Content != "Added." || len(msgs[1].ToolCalls) != 1 {
		t.Fatalf("messages = %s %+v, want the old reply with its call", roles(msgs), msgs[1])
	}
}

// A reopened turn whose new run dies after it changed a task is finished
// like any turn cut short: an interrupted reply takes the old one's place,
// with the calls of both runs, and nothing of the audit is lost.
func TestReopenedTurnCutShortKeepsItsCalls(t *testing.T) {
	t.Parallel()
	turns, convs, ts, user := newTurns(t), newConversations(t), newTasks(t), storetest.UserID(t)
	turn := mustStart(t, turns, user, 0, "Add milk and eggs")
	mustCreate(t, ts, user, "Buy milk", recordOf(turn, 0, "add_task", `{"title":"Buy milk"}`))
	mustFinish(t, turns, turn, "Added milk.", call("call_0", "add_task", `{"title":"Buy milk"}`, `{}`))
	again, err := turns.ReopenTurn(context.Background(), tasks.TurnStart{UserID: user, ConversationID: turn.Conversation.ID,
		Message: "Add milk and eggs", HistoryLimit: 50, ClaimFor: time.Minute}, 0)
	if err != nil {
		t.Fatal(err)
	}
	rec := recordOf(again, 1, "add_task", `{"title":"Buy eggs"}`)
	mustCreate(t, ts, user, "Buy eggs", rec)
	mustLapse(t, user, turn.Conversation.ID) // the replica died while the model wrote

	next := mustStart(t, turns, user, turn.Conversation.ID, "Did it work?")
	msgs := mustMessages(t, convs, user, turn.Conversation.ID)
	if roles(msgs) != "user assistant(interrupted) user" || len(msgs[1].ToolCalls) != 2 ||
		msgs[1].ToolCalls[0].CallID != "call_0" || msgs[1].ToolCalls[1].Tool != "add_task" {
		t.Fatalf("messages = %s %+v, want both runs' calls under an interrupted reply", roles(msgs), msgs[1].ToolCalls)
	}
	if len(next.History) != 2 || len(next.History[1].ToolCalls) != 2 {
		t.Fatalf("history = %+v, want the turn with its calls", next.History)
	}
}

// A reopened turn whose claim lapsed and was taken by a newer turn leaves
// the old reply alone when it finishes at last: its reply only joins the
// conversation, as any late final write does.
func TestLateReopenedTurnLeavesTheOldReply(t *testing.T) {
	t.Parallel()
	turns, convs, user := newTurns(t), newConversations(t), storetest.UserID(t)
	turn := mustStart(t, turns, user, 0, "Add milk")
	mustFinish(t, turns, turn, "Added.")
	again, err := turns.ReopenTurn(context.Background(), tasks.TurnStart{UserID: user, ConversationID: turn.Conversation.ID,
		Message: "Add milk", HistoryLimit: 50, ClaimFor: time.Minute}, 0)
	if err != nil {
		t.Fatal(err)
	}
	mustLapse(t, user, turn.Conversation.ID)
	mustFinish(t, turns, mustStart(t, turns, user, turn.Conversation.ID, "And eggs"), "Added eggs.")
	if _, err := turns.FinishTurn(context.Background(), turnEnd(again, "Added milk, late.")); err != nil {
		t.Fatal(err)
	}
	msgs := mustMessages(t, convs, user, turn.Conversation.ID)
	var texts []string
	for _, m := range msgs {
		texts = append(texts, m.Content)
	}
	if got := strings.Join(texts, " | "); got != "Add milk | Added. | And eggs | Added eggs. | Added milk, late." {
		t.Fatalf("messages = %s, want the old reply kept and the late one last", got)
	}
}
