package memstore_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/taskchat/taskchat/internal/store"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/tasks"
	"github.com/taskchat/taskchat/internal/tasks/memstore"
)

// TestMain gives the tests that compare the store with PostgreSQL a
// database of this package's own.
func TestMain(m *testing.M) { os.Exit(storetest.Run(m)) }

// The in-memory store answers every call as the PostgreSQL store does:
// the same scripts of adds, completions, deletes, updates, listings by
// status and by words, and call records, with titles the database
// refuses, numbers that do not exist, other users' tasks, cursors of
// earlier pages and cursors never written, run on both, give the same
// tasks, the same pages and cursors, and the same kinds of error.
func TestAnswersAsPostgreSQL(t *testing.T) {
	t.Parallel()
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("script ", seed), func(t *testing.T) {
			t.Parallel()
			pg := store.NewTasks(storetest.Pool(t))
			mem := memstore.NewTasks()
			sc := &script{r: rand.New(rand.NewPCG(seed, 1)), users: []string{storetest.UserID(t), storetest.UserID(t), "", "bad \xff"}, cursors: []string{""}}
			for step := range 400 {
				name, call := sc.next()
				got, want := call(mem), call(pg)
				if got.text != want.text {
					t.Fatalf("step %d, %s:\nin memory:  %s\nPostgreSQL: %s", step, name, got.text, want.text)
				}
				if want.next != "" {
					sc.cursors = append(sc.cursors, want.next)
				}
			}
		})
	}
}

// script makes random calls on a store, from a few users' point of view.
type script struct {
	r       *rand.Rand
	users   []string
	cursors []string // every cursor a listing returned, and ""
}

// outcome is what a call answered, as text to compare, and the cursor of
// the next page when it was a listing that has one.
type outcome struct {
	text, next string
}

func (sc *script) next() (string, func(tasks.Store) outcome) {
	ctx := context.Background()
	user := pick(sc.r, sc.users)
	id := int64(sc.r.IntN(12))
	rec := sc.record()
	switch n := sc.r.IntN(20); {
	case n < 7:
		title, description := sc.text(true), sc.text(false)
		return fmt.Sprintf("create %q | %q for %q", clip(title), clip(description), user), func(s tasks.Store) outcome {
			return taskOutcome(s.CreateTask(ctx, user, title, description, rec))
		}
	case n < 9:
		return fmt.Sprintf("complete %d of %q", id, user), func(s tasks.Store) outcome {
			return taskOutcome(s.CompleteTask(ctx, user, id, rec))
		}
	case n < 11:
		return fmt.Sprintf("delete %d of %q", id, user), func(s tasks.Store) outcome {
			return taskOutcome(s.DeleteTask(ctx, user, id, rec))
		}
	case n < 13:
		var u tasks.TaskUpdate
		if sc.r.IntN(3) > 0 {
			u.Title = ptr(sc.text(true))
		}
		if sc.r.IntN(2) == 0 {
			u.Description = ptr(sc.text(false))
		}
		return fmt.Sprintf("update %d of %q to %s", id, user, describeUpdate(u)), func(s tasks.Store) outcome {
			return taskOutcome(s.UpdateTask(ctx, user, id, u, rec))
		}
	case n < 19:
		f := tasks.Filter{Status: pick(sc.r, []tasks.Status{tasks.StatusAll, tasks.StatusPending, tasks.StatusCompleted}),
			Query: pick(sc.r, []string{"", "", "", "call", "DENTIST", "the bill", "dentist call", "%", "_", `c:\`, "zebra", "bad \xff", "ÉCOLE", "STRASSE", "ünï"})}
		limit, cursor := 1+sc.r.IntN(5), pick(sc.r, sc.cursors)
		if sc.r.IntN(10) == 0 {
			cursor = pick(sc.r, []string{"not-a-cursor", "dDA", "bTE", "MTcwMDAwMDAwMDAwMDAwMC4x"})
		}
		return fmt.Sprintf("list %+v of %q, %d after %q", f, user, limit, cursor), func(s tasks.Store) outcome {
			page, err := s.ListTasksPage(ctx, user, f, limit, cursor)
			if err != nil {
				return outcome{text: errorKind(err)}
			}
			parts := make([]string, len(page.Items))
			for i, t := range page.Items {
				parts[i] = describe(t)
			}
			return outcome{text: fmt.Sprintf("%d tasks %s, next %q", len(page.Items), strings.Join(parts, "; "), page.Next), next: page.Next}
		}
	}
	r := tasks.CallRecord{Source: pick(sc.r, []tasks.CallSource{tasks.SourceMCP, tasks.SourceChat}), CallID: "call_1", Tool: "list_tasks",
		Arguments: []byte(`{}`), Started: time.Now()}
	return fmt.Sprintf("record a %q call of %q", r.Source, user), func(s tasks.Store) outcome {
		return outcome{text: errorKind(s.RecordCall(ctx, user, r, []byte(`{"tasks":[]}`), false))}
	}
}

// pick is one of from, at random.
func pick[T any](r *rand.Rand, from []T) T { return from[r.IntN(len(from))] }

// text is a title or a description: usually one a task may have, words
// the listings look for among them; sometimes one the database refuses.
func (sc *script) text(title bool) string {
	if sc.r.IntN(12) == 0 {
		return pick(sc.r, []string{"", strings.Repeat("é", 201), strings.Repeat("x", 1001), "bad \xff byte", "nul \x00 char"})
	}
	if !title && sc.r.IntN(2) == 0 {
		return ""
	}
	return pick(sc.r, []string{"Call the DENTIST", "Pay the bill", "call mom", "Check the 50% sale", `rename my_file in C:\temp`, "Ünïcode straße", "Visit the école"})
}

// record is the call a change is made for: mostly none; sometimes an
// outside client's, or a chat turn's of a conversation that does not
// exist.
func (sc *script) record() *tasks.CallRecord {
	switch sc.r.IntN(10) {
	case 0:
		return &tasks.CallRecord{Source: tasks.SourceMCP, CallID: "call_1", Tool: "complete_task", Arguments: []byte(`{"task_id":1}`), Started: time.Now()}
	case 1:
		return &tasks.CallRecord{ConversationID: 1 + sc.r.Int64N(1000), TurnID: 1, ClaimToken: "00000000-0000-4000-8000-000000000001",
			CallID: "call_1", Tool: "delete_task", Arguments: []byte(`{"task_id":1}`), Started: time.Now()}
	}
	return nil
}

func taskOutcome(t tasks.Task, err error) outcome {
	if err != nil {
		return outcome{text: errorKind(err)}
	}
	return outcome{text: describe(t)}
}

// describe is a task as both stores must give it; the times are only
// checked to be in order, since the two stores' clocks differ.
func describe(t tasks.Task) string {
	s := fmt.Sprintf("%d of %q: %q | %q", t.ID, t.UserID, t.Title, t.Description)
	if t.Completed {
		s += " (done)"
	}
	if t.CreatedAt.IsZero() || t.UpdatedAt.Before(t.CreatedAt) {
		s += fmt.Sprintf(" (times out of order: %v, %v)", t.CreatedAt, t.UpdatedAt)
	}
	return s
}

// errorKind is what a caller can tell of an error: its kind, and the
// task or the field it names.
func errorKind(err error) string {
	var nf *tasks.NotFoundError
	var fe *tasks.FieldError
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &nf):
		return fmt.Sprintf("%s %d not found", nf.Kind, nf.ID)
	case errors.As(err, &fe):
		return "invalid " + fe.Field
	case errors.Is(err, tasks.ErrInvalid):
		return "invalid"
	case errors.Is(err, tasks.ErrTurnEnded):
		return "turn ended"
	}
	return "unexpected: " + err.Error()
}

func describeUpdate(u tasks.TaskUpdate) string {
	s := "{"
	if u.Title != nil {
		s += fmt.Sprintf("title %q ", clip(*u.Title))
	}
	if u.Description != nil {
		s += fmt.Sprintf("description %q", clip(*u.Description))
	}
	return s + "}"
}

func clip(s string) string {
	if len(s) > 20 {
		return s[:20] + "…"
	}
	return s
}

func ptr[T any](v T) *T { return &v }

// Each user's tasks are numbered on their own, a number is never given
// twice, and a listing reads them in number order, a page after another,
// whatever changes between the pages.
func TestNumbersAndPages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := memstore.NewTasks()
	for _, title := range []string{"a", "b", "c", "d", "e"} {
		mustCreate(t, s, "alice", title)
	}
	mustCreate(t, s, "bob", "bob's")
	if _, err := s.DeleteTask(ctx, "alice", 5, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateTask(ctx, "alice", "", "", nil); !errors.Is(err, tasks.ErrInvalid) {
		t.Fatalf("an empty title: %v, want invalid", err)
	}
	if f := mustCreate(t, s, "alice", "f"); f.ID != 6 {
		t.Fatalf("the task after deleting 5 and refusing one is number %d, want 6", f.ID)
	}
	first, err := s.ListTasksPage(ctx, "alice", tasks.Filter{Status: tasks.StatusPending}, 2, "")
	if err != nil || len(first.Items) != 2 || first.Next == "" {
		t.Fatalf("first page: %+v, %v", first, err)
	}
	if _, err := s.CompleteTask(ctx, "alice", 3, nil); err != nil {
		t.Fatal(err)
	}
	rest, err := s.ListTasksPage(ctx, "alice", tasks.Filter{Status: tasks.StatusPending}, 10, first.Next)
	if err != nil || fmt.Sprint(ids(rest.Items)) != "[4 6]" || rest.Next != "" {
		t.Fatalf("the rest, after completing task 3 = %v next %q, %v; want [4 6] and no next", ids(rest.Items), rest.Next, err)
	}
	if _, err := s.UpdateTask(ctx, "bob", 3, tasks.TaskUpdate{Title: ptr("stolen")}, nil); !errors.Is(err, tasks.ErrNotFound) {
		t.Fatalf("bob updating alice's task 3: %v, want not found", err)
	}
}

// A change is after the one before it, as PostgreSQL's transactions are.
func TestChangesMoveTheUpdateTime(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := memstore.NewTasks()
	a := mustCreate(t, s, "alice", "a")
	for range 3 {
		done, err := s.CompleteTask(ctx, "alice", a.ID, nil)
		if err != nil || !done.Completed || !done.UpdatedAt.After(a.UpdatedAt) || !done.CreatedAt.Equal(a.CreatedAt) {
			t.Fatalf("completing again = %+v, %v; after %+v", done, err, a)
		}
		a = done
	}
}

func mustCreate(tb testing.TB, s *memstore.Tasks, user, title string) tasks.Task {
	tb.Helper()
	t, err := s.CreateTask(context.Background(), user, title, "", nil)
	if err != nil {
		tb.Fatalf("create %q: %v", title, err)
	}
	return t
}

func ids(list []tasks.Task) []int64 {
	out := make([]int64, len(list))
	for i, t := range list {
		out[i] = t.ID
	}
	return out
}
