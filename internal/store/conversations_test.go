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

func newConversations(tb testing.TB) *store.Conversations {
	tb.Helper()
	return store.NewConversations(storetest.Pool(tb))
}

func mustStart(tb testing.TB, s *store.Conversations, user string, convID int64, msg string) tasks.Turn {
	tb.Helper()
	turn, err := s.StartTurn(context.Background(), tasks.TurnStart{
		UserID: user, ConversationID: convID, Message: msg, HistoryLimit: 50, ClaimFor: time.Minute,
	})
	if err != nil {
		tb.Fatalf("start turn %q: %v", msg, err)
	}
	return turn
}

func mustFinish(tb testing.TB, s *store.Conversations, user string, turn tasks.Turn, reply string, calls ...tasks.ToolCall) tasks.Message {
	tb.Helper()
	m, err := s.FinishTurn(context.Background(), tasks.TurnEnd{
		UserID: user, ConversationID: turn.Conversation.ID, ClaimToken: turn.ClaimToken, Reply: reply, ToolCalls: calls,
	})
	if err != nil {
		tb.Fatalf("finish turn %q: %v", reply, err)
	}
	return m
}

func TestTurnsBuildAHistory(t *testing.T) {
	s, user := newConversations(t), storetest.UserID(t)

	first := mustStart(t, s, user, 0, "Add a task to buy groceries\nplease")
	if first.Conversation.Title != "Add a task to buy groceries" || len(first.History) != 0 || first.UserMessage.Role != "user" {
		t.Fatalf("first turn = %+v", first)
	}
	call := tasks.ToolCall{
		CallID: "call_1", Tool: "add_task", Round: 0, Duration: 3 * time.Millisecond,
		Arguments: json.RawMessage(`{"title":"Buy groceries"}`),
		Result:    json.RawMessage(`{"task_id":1,"status":"created","title":"Buy groceries"}`),
	}
	bad := tasks.ToolCall{CallID: "call_2", Tool: "add_task", Round: 1, Arguments: json.RawMessage(`{"title":`), Result: json.RawMessage(`{"error":"bad"}`), IsError: true}
	reply := mustFinish(t, s, user, first, "Added task 1.", call, bad)

	second := mustStart(t, s, user, first.Conversation.ID, "Show me all my tasks")
	if len(second.History) != 2 {
		t.Fatalf("history = %+v, want the first turn's two messages", second.History)
	}
	h := second.History
	if h[0].Content != "Add a task to buy groceries\nplease" || h[1].ID != reply.ID || h[1].Content != "Added task 1." {
		t.Fatalf("history = %+v", h)
	}
	got := h[1].ToolCalls
	if len(got) != 2 || got[0].CallID != "call_1" || !jsonEqual(got[0].Result, call.Result) || got[0].Duration != call.Duration {
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
	s, user := store.NewConversations(pool), storetest.UserID(t)
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
	mustFinish(t, s, user, first, "Added task 1.")
	mustStart(t, s, user, first.Conversation.ID, "Show me all my tasks")
	mustBeDurable("continuing a conversation")
}

func TestHistoryLimit(t *testing.T) {
	s, user := newConversations(t), storetest.UserID(t)
	turn := mustStart(t, s, user, 0, "m0")
	mustFinish(t, s, user, turn, "r0", tasks.ToolCall{CallID: "c0", Tool: "list_tasks", Arguments: json.RawMessage(`{}`), Result: json.RawMessage(`{"tasks":[]}`)})
	for i := 1; i < 4; i++ {
		turn = mustStart(t, s, user, turn.Conversation.ID, fmt.Sprintf("m%d", i))
		mustFinish(t, s, user, turn, fmt.Sprintf("r%d", i))
	}
	got, err := s.StartTurn(context.Background(), tasks.TurnStart{UserID: user, ConversationID: turn.Conversation.ID, Message: "m4", HistoryLimit: 3, ClaimFor: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	var contents []string
	for _, m := range got.History {
		contents = append(contents, m.Content)
	}
	if fmt.Sprint(contents) != "[r2 m3 r3]" {
		t.Fatalf("newest 3 = %v", contents)
	}
}

func TestConversationClaim(t *testing.T) {
	s, user := newConversations(t), storetest.UserID(t)
	ctx := context.Background()
	turn := mustStart(t, s, user, 0, "hello")

	_, err := s.StartTurn(ctx, tasks.TurnStart{UserID: user, ConversationID: turn.Conversation.ID, Message: "again", ClaimFor: time.Minute})
	if !errors.Is(err, tasks.ErrConversationBusy) {
		t.Fatalf("second turn while the first runs: %v, want busy", err)
	}
	other := mustStart(t, s, user, 0, "another conversation runs in parallel")
	mustFinish(t, s, user, other, "ok")

	mustFinish(t, s, user, turn, "hi")
	next := mustStart(t, s, user, turn.Conversation.ID, "after the first finished")
	if err := s.AbandonTurn(ctx, user, turn.Conversation.ID, next.ClaimToken); err != nil {
		t.Fatal(err)
	}
	msgs, _ := s.Messages(ctx, user, turn.Conversation.ID)
	if len(msgs) != 3 || msgs[2].Content != "after the first finished" {
		t.Fatalf("the busy attempt must store nothing; messages = %+v", msgs)
	}
}

func TestConversationClaimExpires(t *testing.T) {
	s, user := newConversations(t), storetest.UserID(t)
	turn, err := s.StartTurn(context.Background(), tasks.TurnStart{UserID: user, Message: "crash after this", ClaimFor: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond) // the claim, not the test, is what expires
	mustStart(t, s, user, turn.Conversation.ID, "a crashed replica blocks nobody for long")
}

func TestConversationsOfAnotherUser(t *testing.T) {
	s, alice, bob := newConversations(t), storetest.UserID(t), storetest.UserID(t)
	ctx := context.Background()
	turn := mustStart(t, s, alice, 0, "alice's secret")
	mustFinish(t, s, alice, turn, "noted")
	id := turn.Conversation.ID

	if _, err := s.StartTurn(ctx, tasks.TurnStart{UserID: bob, ConversationID: id, Message: "x", ClaimFor: time.Minute}); !errors.Is(err, tasks.ErrNotFound) {
		t.Errorf("bob continues alice's conversation: %v", err)
	}
	if _, err := s.Messages(ctx, bob, id); !errors.Is(err, tasks.ErrNotFound) {
		t.Errorf("bob reads alice's messages: %v", err)
	}
	if err := s.DeleteConversation(ctx, bob, id); !errors.Is(err, tasks.ErrNotFound) {
		t.Errorf("bob deletes alice's conversation: %v", err)
	}
	if page, _ := s.ListConversations(ctx, bob, 10, ""); len(page.Items) != 0 {
		t.Errorf("bob lists %+v", page.Items)
	}
	if msgs, err := s.Messages(ctx, alice, id); err != nil || len(msgs) != 2 {
		t.Errorf("alice's messages after bob's attempts: %v, %v", msgs, err)
	}
}

func TestDeleteConversationCascades(t *testing.T) {
	s, user := newConversations(t), storetest.UserID(t)
	ctx := context.Background()
	turn := mustStart(t, s, user, 0, "hi")
	mustFinish(t, s, user, turn, "hello", tasks.ToolCall{CallID: "c", Tool: "list_tasks", Arguments: json.RawMessage(`{}`), Result: json.RawMessage(`{}`)})
	if err := s.DeleteConversation(ctx, user, turn.Conversation.ID); err != nil {
		t.Fatal(err)
	}
	var left int
	err := storetest.Pool(t).QueryRow(ctx, `
		SELECT (SELECT count(*) FROM messages WHERE conversation_id = $1) + (SELECT count(*) FROM tool_calls WHERE conversation_id = $1)`,
		turn.Conversation.ID).Scan(&left)
	if err != nil || left != 0 {
		t.Fatalf("rows left after delete: %d, %v", left, err)
	}
}

func TestListConversationsPaginates(t *testing.T) {
	s, user := newConversations(t), storetest.UserID(t)
	ctx := context.Background()
	var ids []int64
	for i := range 5 {
		turn := mustStart(t, s, user, 0, fmt.Sprintf("conversation %d", i))
		mustFinish(t, s, user, turn, "ok")
		ids = append(ids, turn.Conversation.ID)
	}
	var got []int64
	cursor := ""
	for pages := 0; ; pages++ {
		page, err := s.ListConversations(ctx, user, 2, cursor)
		if err != nil || pages > 3 {
			t.Fatalf("page %d: %v", pages, err)
		}
		for _, c := range page.Items {
			got = append(got, c.ID)
		}
		if cursor = page.Next; cursor == "" {
			break
		}
	}
	want := []int64{ids[4], ids[3], ids[2], ids[1], ids[0]}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("pages = %v, want newest first %v", got, want)
	}
	if _, err := s.ListConversations(ctx, user, 2, "not-a-cursor"); !errors.Is(err, tasks.ErrInvalid) {
		t.Fatalf("bad cursor: %v", err)
	}
}

func TestIdempotencyKeys(t *testing.T) {
	s, user := newConversations(t), storetest.UserID(t)
	ctx := context.Background()
	req := tasks.IdempotentRequest{UserID: user, Key: "k1", Hash: []byte("body-a"), LockFor: time.Minute, KeepFor: 24 * time.Hour}

	if got, err := s.BeginIdempotent(ctx, req); err != nil || got != nil {
		t.Fatalf("first use: %s, %v", got, err)
	}
	if _, err := s.BeginIdempotent(ctx, req); !errors.Is(err, tasks.ErrRequestInProgress) {
		t.Fatalf("retry while running: %v", err)
	}
	other := req
	other.Hash = []byte("body-b")
	if _, err := s.BeginIdempotent(ctx, other); !errors.Is(err, tasks.ErrKeyMismatch) {
		t.Fatalf("same key, other body: %v", err)
	}
	bob := req
	bob.UserID = storetest.UserID(t)
	if got, err := s.BeginIdempotent(ctx, bob); err != nil || got != nil {
		t.Fatalf("keys are per user: %s, %v", got, err)
	}

	turn := mustStart(t, s, user, 0, "hi")
	_, err := s.FinishTurn(ctx, tasks.TurnEnd{UserID: user, ConversationID: turn.Conversation.ID, ClaimToken: turn.ClaimToken,
		Reply: "hello", IdempotencyKey: "k1", Response: json.RawMessage(`{"response":"hello"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.BeginIdempotent(ctx, req); err != nil || !jsonEqual(got, json.RawMessage(`{"response":"hello"}`)) {
		t.Fatalf("retry after completion: %s, %v; want the stored response", got, err)
	}

	failed := req
	failed.Key = "k2"
	if _, err := s.BeginIdempotent(ctx, failed); err != nil {
		t.Fatal(err)
	}
	if err := s.ForgetIdempotent(ctx, user, "k2"); err != nil {
		t.Fatal(err)
	}
	if got, err := s.BeginIdempotent(ctx, failed); err != nil || got != nil {
		t.Fatalf("retry after a failure runs again: %s, %v", got, err)
	}

	crashed := req
	crashed.Key, crashed.LockFor = "k3", time.Millisecond
	if _, err := s.BeginIdempotent(ctx, crashed); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	if got, err := s.BeginIdempotent(ctx, crashed); err != nil || got != nil {
		t.Fatalf("a retry takes over an expired lock: %s, %v", got, err)
	}
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && fmt.Sprint(x) == fmt.Sprint(y)
}

func TestFinishTurnStoresWhateverAModelWrote(t *testing.T) {
	s, user := newConversations(t), storetest.UserID(t)
	turn := mustStart(t, s, user, 0, "hi")
	long := strings.Repeat("n", 300)
	m, err := s.FinishTurn(context.Background(), tasks.TurnEnd{
		UserID: user, ConversationID: turn.Conversation.ID, ClaimToken: turn.ClaimToken,
		Reply: "Added.\x00 \xff", IdempotencyKey: "", ToolCalls: []tasks.ToolCall{
			{CallID: "", Tool: long, Arguments: json.RawMessage(`{"title":"a\u0000b"}`), Result: json.RawMessage(`{"error":"bad \u0000"}`), IsError: true},
			{CallID: long, Tool: "", Arguments: json.RawMessage("not json \x00"), Result: nil},
		},
	})
	if err != nil {
		t.Fatalf("a model's NULs, bad UTF-8 and odd names must not lose the turn: %v", err)
	}
	msgs, _ := s.Messages(context.Background(), user, turn.Conversation.ID)
	got := msgs[len(msgs)-1]
	if got.ID != m.ID || got.Content != "Added. \uFFFD" || len(got.ToolCalls) != 2 {
		t.Fatalf("stored %+v", got)
	}
	if c := got.ToolCalls[0]; c.CallID != "call" || len([]rune(c.Tool)) != 255 || !strings.Contains(string(c.Arguments), `\ufffd`) && !strings.Contains(string(c.Arguments), "\uFFFD") {
		t.Fatalf("first call stored as %+v (%s)", c, c.Arguments)
	}
	if c := got.ToolCalls[1]; c.Tool != "unnamed" || string(c.Arguments) != `"not json "` {
		t.Fatalf("second call stored as %+v (%s)", c, c.Arguments)
	}
}

func TestKeyIsNotCompletedForADeletedConversation(t *testing.T) {
	s, user := newConversations(t), storetest.UserID(t)
	ctx := context.Background()
	req := tasks.IdempotentRequest{UserID: user, Key: "gone", Hash: []byte("h"), LockFor: time.Minute, KeepFor: 24 * time.Hour}
	if _, err := s.BeginIdempotent(ctx, req); err != nil {
		t.Fatal(err)
	}
	turn := mustStart(t, s, user, 0, "hi")
	if err := s.DeleteConversation(ctx, user, turn.Conversation.ID); err != nil {
		t.Fatal(err)
	}
	_, err := s.FinishTurn(ctx, tasks.TurnEnd{UserID: user, ConversationID: turn.Conversation.ID, ClaimToken: turn.ClaimToken,
		Reply: "too late", IdempotencyKey: "gone", Response: json.RawMessage(`{"response":"too late"}`)})
	if !errors.Is(err, tasks.ErrNotFound) {
		t.Fatalf("finishing a deleted conversation's turn: %v", err)
	}
	if got, err := s.BeginIdempotent(ctx, req); got != nil || !errors.Is(err, tasks.ErrRequestInProgress) {
		t.Fatalf("the key replays %s, %v; it must not point at a turn that was not stored", got, err)
	}
}
