package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/taskchat/taskchat/internal/store"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/tasks"
)

// A conversation is known outside the database by its number among its
// user's conversations, 1, 2, 3… (migration 000018), as a task is (see
// task_numbers_test.go); conversations.id is the internal key that the
// tables under a conversation reference.

// conversationKey returns the internal id (conversations.id) of user's
// conversation numbered number in this package's database: what the
// conversation_id of messages, tool_calls, turn_runs, chat_ids, approvals
// and idempotency_keys holds. Go code, and the API, only ever see the
// number. It fails tb when user has no such conversation.
func conversationKey(tb testing.TB, user string, number int64) int64 {
	tb.Helper()
	return conversationKeyIn(tb, storetest.Pool(tb), user, number)
}

// conversationKeyIn is conversationKey in the database of pool.
func conversationKeyIn(tb testing.TB, pool *pgxpool.Pool, user string, number int64) int64 {
	tb.Helper()
	var key int64
	if err := pool.QueryRow(context.Background(),
		`SELECT id FROM conversations WHERE user_id = $1 AND number = $2`, user, number).Scan(&key); err != nil {
		tb.Fatalf("the key of %s's conversation %d: %v", user, number, err)
	}
	return key
}

// deref is what p points at, or "nil", for messages.
func deref(p *int64) string {
	if p == nil {
		return "nil"
	}
	return strconv.FormatInt(*p, 10)
}

// mustConversationIDs lists user's conversations, newest first, as
// ListConversations pages them.
func mustConversationIDs(tb testing.TB, s *store.Conversations, user string) []int64 {
	tb.Helper()
	var ids []int64
	for cursor := ""; ; {
		page, err := s.ListConversations(context.Background(), user, 2, cursor)
		if err != nil {
			tb.Fatalf("list %s's conversations: %v", user, err)
		}
		for _, c := range page.Items {
			ids = append(ids, c.ID)
		}
		if cursor = page.Next; cursor == "" {
			return ids
		}
	}
}

// Each user's conversations are numbered 1, 2, 3… on their own, whatever
// other users do meanwhile, and each number names the user's own.
func TestConversationNumbersArePerUser(t *testing.T) {
	t.Parallel()
	turns, convs := newTurns(t), newConversations(t)
	alice, bob := storetest.UserID(t), storetest.UserID(t)
	started := map[string][]tasks.Turn{}
	for i := range 3 {
		for _, user := range []string{alice, bob} {
			turn := mustStart(t, turns, user, 0, fmt.Sprintf("%s's conversation %d", user, i+1))
			if turn.Conversation.ID != int64(i+1) || turn.UserMessage.ConversationID != turn.Conversation.ID {
				t.Fatalf("%s's conversation %d is numbered %d (its message says %d), want %d",
					user, i+1, turn.Conversation.ID, turn.UserMessage.ConversationID, i+1)
			}
			if reply := mustFinish(t, turns, turn, "ok"); reply.ConversationID != turn.Conversation.ID {
				t.Fatalf("the reply is in conversation %d, want %d", reply.ConversationID, turn.Conversation.ID)
			}
			started[user] = append(started[user], turn)
		}
	}
	for user, ts := range started {
		if got := mustConversationIDs(t, convs, user); !slices.Equal(got, []int64{3, 2, 1}) {
			t.Errorf("%s's conversations = %v, want [3 2 1]", user, got)
		}
		for _, turn := range ts {
			msgs := mustMessages(t, convs, user, turn.Conversation.ID)
			if len(msgs) != 2 || msgs[0].ID != turn.ID() || msgs[0].ConversationID != turn.Conversation.ID || msgs[1].ConversationID != turn.Conversation.ID {
				t.Errorf("%s's conversation %d = %+v, want its own two messages", user, turn.Conversation.ID, msgs)
			}
		}
	}
}

// Deleting a conversation never frees its number, not even the newest
// one's: a number names one conversation, or none once it is deleted.
func TestConversationNumbersAreNeverReused(t *testing.T) {
	t.Parallel()
	turns, convs, user := newTurns(t), newConversations(t), storetest.UserID(t)
	ctx := context.Background()
	for i := range 3 {
		mustFinish(t, turns, mustStart(t, turns, user, 0, fmt.Sprintf("conversation %d", i+1)), "ok")
	}
	mustDeleteConversation(t, convs, user, 3)
	if got := mustStart(t, turns, user, 0, "after deleting 3").Conversation.ID; got != 4 {
		t.Fatalf("the conversation after deleting the newest, 3, is number %d, want 4", got)
	}
	mustDeleteConversation(t, convs, user, 1)
	if got := mustStart(t, turns, user, 0, "after deleting 1").Conversation.ID; got != 5 {
		t.Fatalf("the conversation after deleting 1 is number %d, want 5", got)
	}
	if got := mustConversationIDs(t, convs, user); !slices.Equal(got, []int64{5, 4, 2}) {
		t.Fatalf("conversations = %v, want [5 4 2]", got)
	}
	for _, gone := range []int64{1, 3} {
		if _, err := convs.Messages(ctx, user, gone, 10, 1<<30, ""); !errors.Is(err, tasks.ErrNotFound) {
			t.Errorf("messages of deleted conversation %d: %v, want not found", gone, err)
		}
	}
	if msgs := mustMessages(t, convs, user, 4); len(msgs) != 1 || msgs[0].Content != "after deleting 3" {
		t.Errorf("conversation 4 = %+v, want the one started after deleting 3", msgs)
	}
}

// Conversations started at once by one user take distinct numbers, with
// no gaps, whatever another user starts meanwhile; each number names the
// conversation of the turn it was given to.
func TestConversationNumbersUnderConcurrentStarts(t *testing.T) {
	t.Parallel()
	turns, convs := newTurns(t), newConversations(t)
	users := []string{storetest.UserID(t), storetest.UserID(t)}
	const n = 8
	started := make([][]tasks.Turn, len(users))
	errs := make([][]error, len(users))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for u, user := range users {
		started[u], errs[u] = make([]tasks.Turn, n), make([]error, n)
		for i := range n {
			wg.Go(func() {
				<-start
				started[u][i], errs[u][i] = turns.StartTurn(context.Background(), tasks.TurnStart{UserID: user,
					Message: fmt.Sprintf("message %d", i), HistoryLimit: 50, ClaimFor: time.Minute})
			})
		}
	}
	close(start)
	wg.Wait()
	for u, user := range users {
		var numbers []int64
		for i, turn := range started[u] {
			if errs[u][i] != nil {
				t.Fatalf("start %d of %s: %v", i, user, errs[u][i])
			}
			numbers = append(numbers, turn.Conversation.ID)
			msgs := mustMessages(t, convs, user, turn.Conversation.ID)
			if len(msgs) != 1 || msgs[0].ID != turn.ID() || msgs[0].Content != fmt.Sprintf("message %d", i) {
				t.Errorf("%s's conversation %d = %+v, want the message of the turn it was given to, %q", user, turn.Conversation.ID, msgs, fmt.Sprintf("message %d", i))
			}
		}
		slices.Sort(numbers)
		if !slices.Equal(numbers, []int64{1, 2, 3, 4, 5, 6, 7, 8}) {
			t.Errorf("%s's conversations started at once are numbered %v, want 1 to %d", user, numbers, n)
		}
	}
}

// Conversations stored before per-user numbers keep their ids as their
// numbers, so that every id a client holds names the same conversation
// after the migration, with its messages; each user's next conversation
// follows their highest (the counter is seeded from them), and a user new
// since the migration starts at 1.
func TestMigrationKeepsOldConversationIDsAsNumbers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u := storetest.EmptyDatabase(t)
	mustMigrateTo(t, u, 17)
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	alice, bob, carol := storetest.UserID(t), storetest.UserID(t), storetest.UserID(t)
	var ids []int64
	for i, user := range []string{alice, bob, alice, alice, bob} {
		var id int64
		if err := conn.QueryRow(ctx, `
			WITH c AS (INSERT INTO conversations (user_id, title) VALUES ($1, 'old') RETURNING id)
			INSERT INTO messages (conversation_id, user_id, role, content) SELECT id, $1, 'user', $2 FROM c
			RETURNING conversation_id`, user, fmt.Sprintf("old message %d", i)).Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	// Alice's second conversation was deleted before the migration.
	if _, err := conn.Exec(ctx, `DELETE FROM conversations WHERE id = $1`, ids[2]); err != nil {
		t.Fatal(err)
	}

	if err := store.Migrate(ctx, u); err != nil {
		t.Fatalf("up from 17: %v", err)
	}
	type numbered struct {
		User   string
		Number int64
	}
	rows, _ := conn.Query(ctx, `SELECT user_id, number FROM conversations ORDER BY id`)
	got, err := pgx.CollectRows(rows, pgx.RowToStructByPos[numbered])
	want := []numbered{{alice, ids[0]}, {bob, ids[1]}, {alice, ids[3]}, {bob, ids[4]}}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("conversations after up = %+v, %v; want %+v", got, err, want)
	}
	rows, _ = conn.Query(ctx, `SELECT user_id, last_number FROM conversation_counters ORDER BY last_number, user_id`)
	counters, err := pgx.CollectRows(rows, pgx.RowToStructByPos[numbered])
	if want := []numbered{{alice, ids[3]}, {bob, ids[4]}}; err != nil || !slices.Equal(counters, want) {
		t.Fatalf("counters after up = %+v, %v; want %+v, none for carol", counters, err, want)
	}

	pool := mustPool(t, u)
	turns, convs := store.NewTurns(pool), store.NewConversations(pool)
	// An old id names the conversation it named, with its messages.
	for i, c := range []struct {
		user    string
		id      int64
		message string
	}{{alice, ids[0], "old message 0"}, {bob, ids[1], "old message 1"}, {alice, ids[3], "old message 3"}, {bob, ids[4], "old message 4"}} {
		if msgs := mustMessages(t, convs, c.user, c.id); len(msgs) != 1 || msgs[0].Content != c.message || msgs[0].ConversationID != c.id {
			t.Errorf("%d: conversation %d = %+v, want the one of %q", i, c.id, msgs, c.message)
		}
	}
	if _, err := convs.Messages(ctx, bob, ids[0], 10, 1<<20, ""); !errors.Is(err, tasks.ErrNotFound) {
		t.Errorf("bob's conversation %d (alice's old id) = %v, want not found", ids[0], err)
	}
	for _, next := range []numbered{{alice, ids[3] + 1}, {bob, ids[4] + 1}, {carol, 1}} {
		if turn := mustStart(t, turns, next.User, 0, "new"); turn.Conversation.ID != next.Number {
			t.Errorf("the first conversation after the migration is number %d, want %d", turn.Conversation.ID, next.Number)
		}
	}
}

// A user reaches another user's conversation by its number through no
// statement of the store: a number only the other user has is no
// conversation of theirs, read or written, and one both have names each
// user's own. Alice's conversation 2 is the one bob must not reach: it
// has a summary, and a turn running, which has changed a task and waits
// for an approval.
func TestConversationNumbersNameOnlyTheUsersOwn(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	turns, convs, runs, ts := newTurns(t), newConversations(t), store.NewRuns(pool), newTasks(t)
	ctx := context.Background()
	alice, bob := storetest.UserID(t), storetest.UserID(t)

	mustFinish(t, turns, mustStart(t, turns, alice, 0, "Alice's first"), "Alice's first reply")
	second := mustStart(t, turns, alice, 0, "Alice's second")
	mustFinish(t, turns, second, "Alice's second reply")
	mustSaveSummary(t, turns, alice, 2, tasks.SummaryWrite{Text: "Alice's summary", Through: second.ID()})
	running := mustStart(t, turns, alice, 2, "Alice's running turn")
	milk := mustCreate(t, ts, alice, "Buy milk", recordOf(running, 0, "add_task", `{"title":"Buy milk"}`))
	approval, err := turns.RequestApproval(ctx, tasks.ApprovalRequest{UserID: alice, Summary: "Delete Buy milk", TTL: time.Hour,
		Record: *recordOf(running, 1, "delete_task", fmt.Sprintf(`{"task_id":%d}`, milk.ID))})
	if err != nil {
		t.Fatal(err)
	}
	mustFinish(t, turns, mustStart(t, turns, bob, 0, "Bob's first"), "Bob's first reply")
	before := mustMessages(t, convs, alice, 2)

	notFound := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, tasks.ErrNotFound) {
			t.Errorf("bob's %s of conversation 2: %v, want not found", what, err)
		}
	}
	_, err = convs.Messages(ctx, bob, 2, 10, 1<<30, "")
	notFound("messages", err)
	_, err = convs.Conversation(ctx, bob, 2)
	notFound("show", err)
	notFound("delete", convs.DeleteConversation(ctx, bob, 2))
	_, err = runs.LatestRun(ctx, bob, 2)
	notFound("latest run", err)
	_, err = runs.RequestStop(ctx, bob, 2)
	notFound("stop", err)
	_, err = turns.ChatConversation(ctx, bob, "2")
	notFound("chat id", err)
	_, err = turns.StartTurn(ctx, tasks.TurnStart{UserID: bob, ConversationID: 2, Message: "Bob's message", HistoryLimit: 50, ClaimFor: time.Minute})
	notFound("turn", err) // not busy: that would tell him alice's is running
	_, err = turns.ReopenTurn(ctx, tasks.TurnStart{UserID: bob, ConversationID: 2, Message: "Alice's second", HistoryLimit: 50, ClaimFor: time.Minute}, 0)
	notFound("regenerated reply", err)
	_, err = turns.ClaimCompaction(ctx, tasks.TurnStart{UserID: bob, ConversationID: 2, HistoryLimit: 50, ClaimFor: time.Minute})
	notFound("compaction", err)
	_, err = turns.SaveSummary(ctx, bob, 2, tasks.SummaryWrite{Text: "Bob's summary", From: second.ID(), Through: running.ID()})
	notFound("summary", err)
	if msgs, err := turns.MessagesBetween(ctx, bob, 2, 0, 1<<62, 100, 1<<20); err != nil || len(msgs) != 0 {
		t.Errorf("bob's messages between of conversation 2 = %+v, %v; want none", msgs, err)
	}
	if calls, err := turns.RecoverTurn(ctx, bob, tasks.TurnRef{ConversationID: 2, TurnID: running.ID()}); err != nil || len(calls) != 0 {
		t.Errorf("bob's recovery of alice's turn in conversation 2 = %+v, %v; want nothing", calls, err)
	}
	// With alice's turn and claim token, as a forged request would hold them.
	forged := running
	forged.Conversation.UserID = bob
	_, err = turns.FinishTurn(ctx, turnEnd(forged, "Bob's reply"))
	notFound("reply", err)
	if err := turns.AbandonTurn(ctx, bob, 2, running.ClaimToken); err != nil {
		t.Errorf("bob's abandon of conversation 2: %v", err)
	}
	if _, err := ts.CreateTask(ctx, bob, tasks.NewTask{Title: "Bob's task", Description: ""}, recordOf(running, 2, "add_task", `{"title":"Bob's task"}`)); !errors.Is(err, tasks.ErrTurnEnded) {
		t.Errorf("bob's task recorded in conversation 2: %v, want ErrTurnEnded", err)
	}
	if _, err := turns.RequestApproval(ctx, tasks.ApprovalRequest{UserID: bob, Summary: "Bob's", TTL: time.Hour,
		Record: *recordOf(running, 3, "delete_task", `{"task_id":1}`)}); !errors.Is(err, tasks.ErrTurnEnded) {
		t.Errorf("bob's approval in conversation 2: %v, want ErrTurnEnded", err)
	}

	// Alice's conversation 2 is as it was, her turn still holds it, and its
	// run was asked nothing.
	if after := mustMessages(t, convs, alice, 2); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("alice's conversation 2 after bob's attempts = %+v, want %+v", after, before)
	}
	if c, err := convs.Conversation(ctx, alice, 2); err != nil || c.Summary == nil || c.Summary.Text != "Alice's summary" {
		t.Errorf("alice's conversation 2 = %+v (summary %+v), %v; want her summary kept", c, c.Summary, err)
	}
	if run, err := runs.LatestRun(ctx, alice, 2); err != nil || run.ID != running.RunID || run.ConversationID != 2 || !run.Running() || run.StopRequested {
		t.Errorf("alice's run = %+v, %v; want run %d running, asked to stop by nobody", run, err, running.RunID)
	}
	if got, err := turns.GetApproval(ctx, alice, approval.ID); err != nil || got.ConversationID != 2 || got.State != tasks.ApprovalPending {
		t.Errorf("alice's approval = %+v, %v; want it pending in her conversation 2", got, err)
	}
	if list := mustList(t, ts, bob); len(list) != 0 {
		t.Errorf("bob's tasks = %+v, want none", list)
	}
	if _, err := ts.CreateTask(ctx, alice, tasks.NewTask{Title: "Buy eggs", Description: ""}, recordOf(running, 2, "add_task", `{"title":"Buy eggs"}`)); err != nil {
		t.Errorf("alice's turn after bob's attempts: %v, want it still holding her conversation", err)
	}
	reply := mustFinish(t, turns, running, "Done.",
		call("call_0", "add_task", `{}`, `{}`), call("call_1", "delete_task", `{}`, `{}`), call("call_2", "add_task", `{}`, `{}`))
	if msgs := mustMessages(t, convs, alice, 2); len(msgs) != 4 || msgs[3].ID != reply.ID || len(msgs[3].ToolCalls) != 3 {
		t.Errorf("alice's conversation 2 = %+v, want her turn's reply with its three calls", msgs)
	}

	// Both have a conversation 1: each reads and deletes their own.
	if msgs := mustMessages(t, convs, bob, 1); len(msgs) != 2 || msgs[0].Content != "Bob's first" {
		t.Fatalf("bob's conversation 1 = %+v, want his own", msgs)
	}
	if c, err := convs.Conversation(ctx, bob, 1); err != nil || c.Title != "Bob's first" {
		t.Fatalf("bob's conversation 1 = %+v, %v; want his own", c, err)
	}
	mustDeleteConversation(t, convs, bob, 1)
	if _, err := convs.Messages(ctx, bob, 1, 10, 1<<30, ""); !errors.Is(err, tasks.ErrNotFound) {
		t.Errorf("bob's deleted conversation 1: %v, want not found", err)
	}
	if msgs := mustMessages(t, convs, alice, 1); len(msgs) != 2 || msgs[0].Content != "Alice's first" {
		t.Errorf("alice's conversation 1 after bob deleted his = %+v, want hers", msgs)
	}
}

// Wherever the store gives a conversation's id, it is its number, never
// the internal key it is stored under (which differs here: another user's
// conversation is created between the user's first and second).
func TestTheStoreGivesConversationsByNumber(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	turns, convs, runs, ts := newTurns(t), newConversations(t), store.NewRuns(pool), newTasks(t)
	ctx := context.Background()
	user := storetest.UserID(t)
	mustFinish(t, turns, mustStart(t, turns, user, 0, "first"), "ok")
	mustStart(t, turns, storetest.UserID(t), 0, "someone else's")
	first := mustStartWith(t, turns, tasks.TurnStart{UserID: user, Message: "second", ChatID: "chat-2"})
	if key := conversationKey(t, user, 2); first.Conversation.ID != 2 || key == 2 {
		t.Fatalf("the user's second conversation is %d under key %d; want 2 under another key", first.Conversation.ID, key)
	}
	milk := mustCreate(t, ts, user, "Buy milk", recordOf(first, 0, "add_task", `{"title":"Buy milk"}`))
	approval, err := turns.RequestApproval(ctx, tasks.ApprovalRequest{UserID: user, Summary: "Delete Buy milk", TTL: time.Hour,
		Record: *recordOf(first, 1, "delete_task", fmt.Sprintf(`{"task_id":%d}`, milk.ID))})
	if err != nil {
		t.Fatal(err)
	}

	// want checks that what the store gave (unless it failed) is in
	// conversation 2.
	want := func(what string, id int64, err error) {
		t.Helper()
		if err != nil || id != 2 {
			t.Errorf("%s is in conversation %d, %v; want 2", what, id, err)
		}
	}
	want("the turn's conversation", first.Conversation.ID, nil)
	want("the turn's message", first.UserMessage.ConversationID, nil)
	want("the approval", approval.ConversationID, nil)
	a, err := turns.GetApproval(ctx, user, approval.ID)
	want("the approval read", a.ConversationID, err)
	// only is the conversation of the one approval of list.
	only := func(list []tasks.Approval, err error) (int64, error) {
		if err == nil && len(list) != 1 {
			return 0, fmt.Errorf("%d approvals", len(list))
		}
		if err != nil {
			return 0, err
		}
		return list[0].ConversationID, nil
	}
	id, err := only(turns.ListApprovals(ctx, user, 0, 10))
	want("the approvals listed", id, err)
	id, err = only(turns.TurnApprovals(ctx, user, first.ID()))
	want("the turn's approvals", id, err)
	run, err := runs.LatestRun(ctx, user, 2)
	want("the latest run", run.ConversationID, err)
	_, run, err = runs.ReadRunEvents(ctx, user, first.RunID, 0, 10, false)
	want("the run read", run.ConversationID, err)
	run, err = runs.RequestStop(ctx, user, 2)
	want("the run asked to stop", run.ConversationID, err)
	id, err = turns.ChatConversation(ctx, user, "chat-2")
	want("the chat id's", id, err)
	reply := mustFinish(t, turns, first, "Done.", call("call_0", "add_task", `{}`, `{}`), call("call_1", "delete_task", `{}`, `{}`))
	want("the reply", reply.ConversationID, nil)
	for _, m := range mustMessages(t, convs, user, 2) {
		want(fmt.Sprintf("message %d read", m.ID), m.ConversationID, nil)
	}
	msgs, err := turns.MessagesBetween(ctx, user, 2, 0, 1<<62, 10, 1<<20)
	if err == nil && len(msgs) != 2 {
		err = fmt.Errorf("%d messages", len(msgs))
	}
	for _, m := range msgs {
		want(fmt.Sprintf("message %d read for a compaction", m.ID), m.ConversationID, err)
	}
	c, err := convs.Conversation(ctx, user, 2)
	want("the conversation shown", c.ID, err)
	page, err := convs.ListConversations(ctx, user, 1, "")
	if err == nil && len(page.Items) != 1 {
		err = fmt.Errorf("%d conversations", len(page.Items))
	}
	if err == nil {
		id = page.Items[0].ID
	}
	want("the conversation listed", id, err)
	again, err := turns.ReopenTurn(ctx, tasks.TurnStart{UserID: user, ConversationID: 2, Message: "second", HistoryLimit: 50, ClaimFor: time.Minute}, 0)
	want("the reopened turn's conversation", again.Conversation.ID, err)
	want("the reopened turn's message", again.UserMessage.ConversationID, err)
	if err == nil {
		mustAbandon(t, turns, again)
	}
	compacting, err := turns.ClaimCompaction(ctx, tasks.TurnStart{UserID: user, ConversationID: 2, HistoryLimit: 50, ClaimFor: time.Minute})
	want("the conversation claimed to compact", compacting.Conversation.ID, err)
	if err == nil {
		mustAbandon(t, turns, compacting)
	}
	next := mustStart(t, turns, user, 2, "third")
	want("the next turn's conversation", next.Conversation.ID, nil)
	want("the next turn's message", next.UserMessage.ConversationID, nil)
	if len(next.History) == 0 {
		t.Error("the next turn has no history")
	}
	for _, m := range next.History {
		want(fmt.Sprintf("message %d of the next turn's history", m.ID), m.ConversationID, nil)
	}
}

// A conversation inserted with a number of its own (a restore, a bulk
// load) moves its user's counter past it, so the next new conversation
// never collides with it.
func TestConversationInsertedWithANumberMovesTheCounter(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	turns := newTurns(t)
	user := storetest.UserID(t)
	if _, err := pool.Exec(context.Background(), `INSERT INTO conversations (user_id, title, number) VALUES ($1, 'restored', 41)`, user); err != nil {
		t.Fatal(err)
	}
	if turn := mustStart(t, turns, user, 0, "new"); turn.Conversation.ID != 42 {
		t.Fatalf("the next conversation is number %d, want 42", turn.Conversation.ID)
	}
	if _, err := pool.Exec(context.Background(), `INSERT INTO conversations (user_id, title, number) VALUES ($1, 'older', 7)`, user); err != nil {
		t.Fatal(err)
	}
	if turn := mustStart(t, turns, user, 0, "newer"); turn.Conversation.ID != 43 {
		t.Fatalf("after a lower number was inserted, the next conversation is number %d, want 43", turn.Conversation.ID)
	}
}
