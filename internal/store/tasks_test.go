package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/taskchat/taskchat/internal/store"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/tasks"
)

func TestTasksScopedByUser(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := store.NewTasks(storetest.Pool(t))
	alice, bob := storetest.UserID(t), storetest.UserID(t)

	task, err := s.CreateTask(ctx, alice, tasks.NewTask{Title: "Buy groceries", Description: "milk"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	title := "stolen"
	attempts := map[string]func() error{
		"complete": func() error { _, err := s.CompleteTask(ctx, bob, task.ID, nil); return err },
		"delete":   func() error { _, err := s.DeleteTask(ctx, bob, task.ID, nil); return err },
		"update": func() error {
			_, err := s.UpdateTask(ctx, bob, task.ID, tasks.TaskUpdate{Title: &title}, nil)
			return err
		},
	}
	for name, try := range attempts {
		err := try()
		var nf *tasks.NotFoundError
		if !errors.As(err, &nf) || nf.ID != task.ID || !errors.Is(err, tasks.ErrNotFound) {
			t.Errorf("%s by another user: err = %v, want task %d not found", name, err, task.ID)
		}
	}
	if list := storetest.Tasks(t, s, bob, tasks.StatusAll); len(list) != 0 {
		t.Errorf("bob lists %v; want nothing", list)
	}
	if list := storetest.Tasks(t, s, alice, tasks.StatusAll); len(list) != 1 || list[0] != task {
		t.Fatalf("alice's task after bob's attempts = %+v; want %+v unchanged", list, task)
	}
}

func TestTasksLifecycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := store.NewTasks(storetest.Pool(t))
	u := storetest.UserID(t)

	a, _ := s.CreateTask(ctx, u, tasks.NewTask{Title: "a", Description: ""}, nil)
	b, _ := s.CreateTask(ctx, u, tasks.NewTask{Title: "b", Description: ""}, nil)
	if _, err := s.CompleteTask(ctx, u, a.ID, nil); err != nil {
		t.Fatal(err)
	}
	for status, want := range map[tasks.Status][]int64{
		tasks.StatusAll: {a.ID, b.ID}, tasks.StatusPending: {b.ID}, tasks.StatusCompleted: {a.ID},
	} {
		list := storetest.Tasks(t, s, u, status)
		if len(list) != len(want) {
			t.Fatalf("%s: %v", status, list)
		}
		for i := range want {
			if list[i].ID != want[i] {
				t.Errorf("%s[%d] = %d, want %d", status, i, list[i].ID, want[i])
			}
		}
	}
	desc := "new description"
	got, err := s.UpdateTask(ctx, u, b.ID, tasks.TaskUpdate{Description: &desc}, nil)
	if err != nil || got.Title != "b" || got.Description != desc || !got.UpdatedAt.After(b.UpdatedAt) {
		t.Fatalf("update description only = %+v, %v", got, err)
	}
	if got, err := s.DeleteTask(ctx, u, b.ID, nil); err != nil || got.ID != b.ID {
		t.Fatalf("delete = %+v, %v", got, err)
	}
	if _, err := s.DeleteTask(ctx, u, b.ID, nil); !errors.Is(err, tasks.ErrNotFound) {
		t.Fatalf("second delete: %v, want not found", err)
	}
}

func TestTasksDatabaseEnforcesLimits(t *testing.T) {
	t.Parallel()
	// The service validates first; the database is the last line.
	s := store.NewTasks(storetest.Pool(t))
	_, err := s.CreateTask(context.Background(), storetest.UserID(t), tasks.NewTask{Title: strings.Repeat("x", 201), Description: ""}, nil)
	if !errors.Is(err, tasks.ErrInvalid) {
		t.Fatalf("201-character title: %v, want ErrInvalid", err)
	}
}

func newTasks(tb testing.TB) *store.Tasks {
	tb.Helper()
	return store.NewTasks(storetest.Pool(tb))
}

// recordOf is the record of the turn's call number seq, as the chat engine
// makes it.
func recordOf(turn tasks.Turn, seq int, tool, args string) *tasks.CallRecord {
	return &tasks.CallRecord{
		ConversationID: turn.Conversation.ID, TurnID: turn.ID(), ClaimToken: turn.ClaimToken,
		CallID: fmt.Sprintf("call_%d", seq), Tool: tool, Arguments: json.RawMessage(args), Seq: seq, Started: time.Now(),
	}
}

func mustCreate(tb testing.TB, s *store.Tasks, user, title string, rec *tasks.CallRecord) tasks.Task {
	tb.Helper()
	task, err := s.CreateTask(context.Background(), user, tasks.NewTask{Title: title, Description: ""}, rec)
	if err != nil {
		tb.Fatalf("create %q: %v", title, err)
	}
	return task
}

func mustComplete(tb testing.TB, s *store.Tasks, user string, id int64, rec *tasks.CallRecord) tasks.Task {
	tb.Helper()
	task, err := s.CompleteTask(context.Background(), user, id, rec)
	if err != nil {
		tb.Fatalf("complete %d: %v", id, err)
	}
	return task
}

func mustList(tb testing.TB, s *store.Tasks, user string) []tasks.Task {
	tb.Helper()
	return storetest.Tasks(tb, s, user, tasks.StatusAll)
}

// changes are the four ways to change a task, each as a tool makes it.
var changes = []struct {
	tool, status string
	change       func(s *store.Tasks, user string, id int64, rec *tasks.CallRecord) (tasks.Task, error)
}{
	{"add_task", tasks.StatusCreated, func(s *store.Tasks, user string, _ int64, rec *tasks.CallRecord) (tasks.Task, error) {
		return s.CreateTask(context.Background(), user, tasks.NewTask{Title: "Buy eggs", Description: "a dozen"}, rec)
	}},
	{"complete_task", tasks.StatusDone, func(s *store.Tasks, user string, id int64, rec *tasks.CallRecord) (tasks.Task, error) {
		return s.CompleteTask(context.Background(), user, id, rec)
	}},
	{"update_task", tasks.StatusUpdated, func(s *store.Tasks, user string, id int64, rec *tasks.CallRecord) (tasks.Task, error) {
		title := "Buy oat milk"
		return s.UpdateTask(context.Background(), user, id, tasks.TaskUpdate{Title: &title}, rec)
	}},
	{"delete_task", tasks.StatusDeleted, func(s *store.Tasks, user string, id int64, rec *tasks.CallRecord) (tasks.Task, error) {
		return s.DeleteTask(context.Background(), user, id, rec)
	}},
}

// A change made for a tool call commits with the call's audit row, which
// says what the model asked and what the tool answered.
func TestRecordedChangeCommitsWithItsRecord(t *testing.T) {
	t.Parallel()
	turns, s := newTurns(t), newTasks(t)
	for _, c := range changes {
		t.Run(c.tool, func(t *testing.T) {
			t.Parallel()
			user := storetest.UserID(t)
			milk := mustCreate(t, s, user, "Buy milk", nil)
			turn := mustStart(t, turns, user, 0, "Change my list")
			args := fmt.Sprintf(`{"task_id":%d,"asked":"as the model wrote it"}`, milk.ID)
			rec := recordOf(turn, 2, c.tool, args)
			rec.Round = 1

			task, err := c.change(s, user, milk.ID, rec)
			if err != nil {
				t.Fatal(err)
			}
			rows := mustAuditRows(t, user, turn.ID())
			if len(rows) != 1 {
				t.Fatalf("audit rows = %+v, want one", rows)
			}
			r, key := rows[0], conversationKey(t, user, turn.Conversation.ID)
			if r.ConversationID == nil || *r.ConversationID != key || r.MessageID != nil {
				t.Errorf("row is in conversation %s, message %s; want conversation %d (key %d) and no reply yet",
					deref(r.ConversationID), deref(r.MessageID), turn.Conversation.ID, key)
			}
			if r.Seq != 2 || r.Round != 1 || r.CallID != "call_2" || r.Tool != c.tool || r.IsError || !storetest.SameJSON(r.Arguments, json.RawMessage(args)) {
				t.Errorf("row = %+v, want the call as recorded", r)
			}
			want := mustJSON(t, map[string]any{"task_id": task.ID, "status": c.status, "title": task.Title})
			if !storetest.SameJSON(r.Result, want) {
				t.Errorf("row's result = %s, want %s", r.Result, want)
			}
		})
	}
}

// The change and its record are one transaction: a record that cannot be
// stored undoes the change.
func TestRecordedChangeIsUndoneWithItsRecord(t *testing.T) {
	t.Parallel()
	turns, s, user := newTurns(t), newTasks(t), storetest.UserID(t)
	turn := mustStart(t, turns, user, 0, "Add milk")
	mustCreate(t, s, user, "Buy milk", recordOf(turn, 0, "add_task", `{"title":"Buy milk"}`))

	_, err := s.CreateTask(context.Background(), user, tasks.NewTask{Title: "Buy eggs", Description: ""}, recordOf(turn, 0, "add_task", `{"title":"Buy eggs"}`))
	if !errors.Is(err, tasks.ErrConflict) {
		t.Fatalf("a second call recorded as the turn's call 0: %v, want a conflict", err)
	}
	if list := mustList(t, s, user); len(list) != 1 || list[0].Title != "Buy milk" {
		t.Fatalf("tasks = %+v: the change whose record failed was kept", list)
	}
}

// A turn that no longer holds its conversation changes nothing and records
// nothing, whatever ended it.
func TestRecordedChangeNeedsItsTurnToHoldTheConversation(t *testing.T) {
	t.Parallel()
	turns, convs, s := newTurns(t), newConversations(t), newTasks(t)
	ends := []struct {
		name string
		end  func(t *testing.T, turn tasks.Turn) tasks.Turn // returns the turn as its tools know it
	}{
		{"finished", func(t *testing.T, turn tasks.Turn) tasks.Turn {
			mustFinish(t, turns, turn, "Done.")
			return turn
		}},
		{"abandoned", func(t *testing.T, turn tasks.Turn) tasks.Turn {
			if err := turns.AbandonTurn(context.Background(), turn.Conversation.UserID, turn.Conversation.ID, turn.ClaimToken); err != nil {
				t.Fatal(err)
			}
			return turn
		}},
		{"claim lapsed and taken by the next turn", func(t *testing.T, turn tasks.Turn) tasks.Turn {
			mustLapse(t, turn.Conversation.UserID, turn.Conversation.ID)
			mustStart(t, turns, turn.Conversation.UserID, turn.Conversation.ID, "Hello?")
			return turn
		}},
		{"another claim token", func(t *testing.T, turn tasks.Turn) tasks.Turn {
			turn.ClaimToken = "00000000-0000-4000-8000-000000000000"
			return turn
		}},
		{"conversation deleted", func(t *testing.T, turn tasks.Turn) tasks.Turn {
			mustDeleteConversation(t, convs, turn.Conversation.UserID, turn.Conversation.ID)
			return turn
		}},
	}
	for _, e := range ends {
		for _, c := range changes {
			t.Run(e.name+"/"+c.tool, func(t *testing.T) {
				t.Parallel()
				user := storetest.UserID(t)
				milk := mustCreate(t, s, user, "Buy milk", nil)
				turn := e.end(t, mustStart(t, turns, user, 0, "Change my list"))

				_, err := c.change(s, user, milk.ID, recordOf(turn, 0, c.tool, `{}`))
				if !errors.Is(err, tasks.ErrTurnEnded) {
					t.Fatalf("%s for a turn that ended: %v, want ErrTurnEnded", c.tool, err)
				}
				if list := mustList(t, s, user); len(list) != 1 || list[0] != milk {
					t.Errorf("tasks = %+v, want %+v untouched", list, milk)
				}
				if rows := mustAuditRows(t, user, turn.ID()); len(rows) != 0 {
					t.Errorf("audit rows = %+v, want none", rows)
				}
			})
		}
	}
}

// A conversation deleted while a change is on its way: the change sees the
// turn's claim, but its record cannot join a conversation that is gone.
// It runs alone, not in parallel: mustWaitForALockWait sees any statement
// of the package's database waiting for a lock, another test's too.
func TestRecordedChangeRacingADelete(t *testing.T) {
	turns, s, user := newTurns(t), newTasks(t), storetest.UserID(t)
	ctx := context.Background()
	turn := mustStart(t, turns, user, 0, "Add milk")
	tx, err := storetest.Pool(t).Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if tag, err := tx.Exec(ctx, `DELETE FROM conversations WHERE user_id = $1 AND number = $2`, user, turn.Conversation.ID); err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("delete the conversation: %v rows, %v", tag.RowsAffected(), err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.CreateTask(ctx, user, tasks.NewTask{Title: "Buy milk", Description: ""}, recordOf(turn, 0, "add_task", `{"title":"Buy milk"}`))
		done <- err
	}()
	mustWaitForALockWait(t)
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, tasks.ErrTurnEnded) {
		t.Fatalf("change racing the delete of its conversation: %v, want ErrTurnEnded", err)
	}
	if list := mustList(t, s, user); len(list) != 0 {
		t.Fatalf("tasks = %+v, want none", list)
	}
}

// With the claim held, another user's task, or a missing one, is simply
// not found, and nothing is recorded.
func TestRecordedChangeOfATaskNotFound(t *testing.T) {
	t.Parallel()
	turns, s := newTurns(t), newTasks(t)
	for _, c := range changes[1:] {
		t.Run(c.tool, func(t *testing.T) {
			t.Parallel()
			alice, bob := storetest.UserID(t), storetest.UserID(t)
			// Alice's task 2 is a number bob never had; his task 1 is gone.
			first := mustCreate(t, s, alice, "Alice's first", nil)
			secret := mustCreate(t, s, alice, "Alice's secret", nil)
			gone := mustCreate(t, s, bob, "Gone", nil)
			if _, err := s.DeleteTask(context.Background(), bob, gone.ID, nil); err != nil {
				t.Fatal(err)
			}
			turn := mustStart(t, turns, bob, 0, "Change my list")
			for seq, id := range []int64{secret.ID, gone.ID} {
				_, err := c.change(s, bob, id, recordOf(turn, seq, c.tool, `{}`))
				var nf *tasks.NotFoundError
				if !errors.As(err, &nf) || nf.ID != id || errors.Is(err, tasks.ErrTurnEnded) {
					t.Errorf("%s of task %d: %v, want task %d not found", c.tool, id, err, id)
				}
			}
			if rows := mustAuditRows(t, bob, turn.ID()); len(rows) != 0 {
				t.Errorf("audit rows = %+v, want none", rows)
			}
			if list := mustList(t, s, alice); len(list) != 2 || list[0] != first || list[1] != secret {
				t.Errorf("alice's tasks = %+v, want %+v and %+v untouched", list, first, secret)
			}
		})
	}
}

// A turn that outlived its claim no longer holds its conversation: a
// reader may already have finished it for it (see Messages), so the
// turn's late calls must change nothing (tasks.ErrTurnEnded says so).
func TestRecordedChangeAfterTheClaimLapsed(t *testing.T) {
	t.Parallel()
	turns, convs, s, user := newTurns(t), newConversations(t), newTasks(t), storetest.UserID(t)
	turn := mustStart(t, turns, user, 0, "Add milk and eggs")
	mustCreate(t, s, user, "Buy milk", recordOf(turn, 0, "add_task", `{"title":"Buy milk"}`))
	mustLapse(t, user, turn.Conversation.ID)
	if msgs := mustMessages(t, convs, user, turn.Conversation.ID); roles(msgs) != "user assistant(interrupted)" {
		t.Fatalf("messages = %s, want the turn finished by the read", roles(msgs))
	}

	_, err := s.CreateTask(context.Background(), user, tasks.NewTask{Title: "Buy eggs", Description: ""}, recordOf(turn, 1, "add_task", `{"title":"Buy eggs"}`))
	if !errors.Is(err, tasks.ErrTurnEnded) {
		msgs := mustMessages(t, convs, user, turn.Conversation.ID)
		t.Fatalf("a change by the turn after it was finished for it: %v, want ErrTurnEnded; "+
			"the tasks are now %d, and the thread reads %s", err, len(mustList(t, s, user)), roles(msgs))
	}
	// The refused change spent no number.
	if eggs := mustCreate(t, s, user, "Buy eggs", nil); eggs.ID != 2 {
		t.Errorf("the next task after a refused add is number %d, want 2", eggs.ID)
	}
}

// A list longer than a page is read whole across pages, in number order,
// each task once, for every status and page size; a cursor only continues
// its own position, and tasks changed while a client pages never make
// another task show twice or go missing.
func TestListTasksPagePaginates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newTasks(t)
	user, other := storetest.UserID(t), storetest.UserID(t)
	for i := range 23 {
		task := mustCreate(t, s, user, fmt.Sprintf("task %d", i), nil)
		mustCreate(t, s, other, fmt.Sprintf("other %d", i), nil)
		if i%3 == 0 {
			mustComplete(t, s, user, task.ID, nil)
		}
		if i == 7 {
			if _, err := s.DeleteTask(ctx, user, task.ID, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	pages := func(t *testing.T, status tasks.Status, limit int) (ids []int64, n int) {
		t.Helper()
		cursor := ""
		for n = 1; ; n++ {
			page, err := s.ListTasksPage(ctx, user, tasks.Filter{Status: status}, limit, cursor)
			if err != nil || n > 30 || len(page.Items) > limit {
				t.Fatalf("page %d: %d tasks, %v", n, len(page.Items), err)
			}
			for _, task := range page.Items {
				ids = append(ids, task.ID)
			}
			if cursor = page.Next; cursor == "" {
				return ids, n
			}
			if len(page.Items) != limit {
				t.Fatalf("page %d holds %d tasks and is not the last", n, len(page.Items))
			}
		}
	}
	for _, status := range []tasks.Status{tasks.StatusAll, tasks.StatusPending, tasks.StatusCompleted} {
		// What the pages must hold, read straight from the table.
		rows, _ := storetest.Pool(t).Query(ctx, `SELECT number FROM tasks
			WHERE user_id = $1 AND ($2 = 'all' OR completed = ($2 = 'completed')) ORDER BY number`, user, string(status))
		want, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil || len(want) == 0 {
			t.Fatalf("%s: %v, %v", status, want, err)
		}
		for _, limit := range []int{1, 2, 5, len(want) - 1, len(want), 100} {
			t.Run(fmt.Sprintf("%s by %d", status, limit), func(t *testing.T) {
				got, n := pages(t, status, limit)
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("pages = %v, want %v", got, want)
				}
				if wantPages := max(1, (len(want)+limit-1)/limit); n != wantPages {
					t.Fatalf("%d pages, want %d", n, wantPages)
				}
			})
		}
	}

	t.Run("changes between pages", func(t *testing.T) {
		first, err := s.ListTasksPage(ctx, user, tasks.Filter{Status: tasks.StatusPending}, 4, "")
		if err != nil || first.Next == "" {
			t.Fatalf("first page: %v, %v", first, err)
		}
		// Complete one of this page and one of the next; add one at the end.
		mustComplete(t, s, user, first.Items[0].ID, nil)
		rest := storetest.Tasks(t, s, user, tasks.StatusPending)
		var next int64
		for _, task := range rest {
			if task.ID > first.Items[3].ID {
				next = task.ID
				break
			}
		}
		mustComplete(t, s, user, next, nil)
		added := mustCreate(t, s, user, "added while paging", nil)
		var got []int64
		for cursor := first.Next; cursor != ""; {
			page, err := s.ListTasksPage(ctx, user, tasks.Filter{Status: tasks.StatusPending}, 4, cursor)
			if err != nil {
				t.Fatal(err)
			}
			for _, task := range page.Items {
				got = append(got, task.ID)
			}
			cursor = page.Next
		}
		var want []int64
		for _, task := range rest {
			if task.ID > first.Items[3].ID && task.ID != next {
				want = append(want, task.ID)
			}
		}
		want = append(want, added.ID)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("the later pages = %v, want %v", got, want)
		}
	})

	t.Run("bad cursors", func(t *testing.T) {
		conv := "MTcwMDAwMDAwMDAwMDAwMC4x" // a conversation cursor, "1700000000000000.1"
		for _, c := range []string{"not-a-cursor", conv, "bTE" /* a message cursor */, "dDA" /* t0 */} {
			var fe *tasks.FieldError
			if _, err := s.ListTasksPage(ctx, user, tasks.Filter{Status: tasks.StatusAll}, 2, c); !errors.As(err, &fe) || fe.Field != "cursor" {
				t.Errorf("cursor %q: %v, want invalid cursor", c, err)
			}
		}
	})
}

// A query picks the tasks whose title or description holds each of its
// words, in any case and any order, as plain text: LIKE's wildcards and
// escape character in a word match themselves. It pages like any listing
// and never reads another user's tasks.
func TestListTasksPageSearches(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newTasks(t)
	user, other := storetest.UserID(t), storetest.UserID(t)
	add := func(title, description string) int64 {
		task, err := s.CreateTask(ctx, user, tasks.NewTask{Title: title, Description: description}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return task.ID
	}
	dentist := add("Call the DENTIST", "")
	mom := add("Call mom", "about the dentist bill")
	sale := add("Check the 50% sale", "")
	score := add("rename my_file", `C:\temp`)
	add("Book a table", "Friday")
	done := add("Dentist appointment", "Tuesday, 9:00")
	mustComplete(t, s, user, done, nil)
	if _, err := s.CreateTask(ctx, other, tasks.NewTask{Title: "Call the dentist", Description: ""}, nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		status tasks.Status
		query  string
		want   []int64
	}{
		{tasks.StatusAll, "dentist", []int64{dentist, mom, done}},
		{tasks.StatusAll, "Dentist CALL", []int64{dentist, mom}},
		{tasks.StatusAll, "call bill", []int64{mom}},
		{tasks.StatusPending, "dentist", []int64{dentist, mom}},
		{tasks.StatusCompleted, "dentist", []int64{done}},
		{tasks.StatusAll, "50%", []int64{sale}},
		{tasks.StatusAll, "%", []int64{sale}},
		{tasks.StatusAll, "my_file", []int64{score}},
		{tasks.StatusAll, "y_f", []int64{score}},
		{tasks.StatusAll, "_", []int64{score}},
		{tasks.StatusAll, `c:\temp`, []int64{score}},
		{tasks.StatusAll, "9:00 tuesday", []int64{done}},
		{tasks.StatusAll, "dentist friday", nil},
		{tasks.StatusAll, "plumber", nil},
	} {
		var got []int64
		cursor := ""
		for range 10 {
			page, err := s.ListTasksPage(ctx, user, tasks.Filter{Status: c.status, Query: c.query}, 1, cursor)
			if err != nil {
				t.Fatal(err)
			}
			for _, task := range page.Items {
				got = append(got, task.ID)
			}
			if cursor = page.Next; cursor == "" {
				break
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s tasks matching %q, a task a page = %v, want %v", c.status, c.query, got, c.want)
		}
	}
}
