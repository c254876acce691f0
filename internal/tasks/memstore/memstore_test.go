package memstore_test

import (
	"context"
	"encoding/base64"
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
// the same scripts of adds, completions, reopenings, deletes, updates of
// any field (a due date or a priority set, changed or cleared), listings
// by status, by words, by priority and in due-date order (from and to
// any instant, a task's own to the nanosecond included), call records and
// settings, with titles the database refuses, numbers that do not exist,
// other users' tasks, cursors of earlier pages of any listing and cursors
// never written, run on both, give the same tasks, the same pages and
// cursors, and the same kinds of error.
func TestAnswersAsPostgreSQL(t *testing.T) {
	t.Parallel()
	for seed := range uint64(6) {
		t.Run(fmt.Sprint("script ", seed), func(t *testing.T) {
			t.Parallel()
			pg := store.NewTasks(storetest.Pool(t))
			mem := memstore.NewTasks()
			sc := newScript(t, rand.New(rand.NewPCG(seed, 1)), []string{storetest.UserID(t), storetest.UserID(t), "", "bad \xff"})
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
	dues    []tasks.Due
	bounds  []time.Time // the bounds of a due-date filter: none, and about the dues' own
}

// newScript is a script of r's calls for users, with due dates of every
// kind: days in zones ahead of UTC and behind it, times (two of them the
// same instant in two zones, one at the last microsecond of a day, one
// with nanoseconds the database does not keep), both sides of Paris's
// clock changes, and the earliest and latest the service takes.
func newScript(tb testing.TB, r *rand.Rand, users []string) *script {
	sc := &script{r: r, users: users, cursors: []string{""}, bounds: []time.Time{{}}}
	for _, d := range []struct{ text, zone string }{
		{"2026-11-02", "UTC"}, {"2026-11-02", "Europe/Paris"}, {"2026-11-02", "Asia/Kolkata"}, {"2026-11-01", "America/New_York"},
		{"2026-11-03", "UTC"}, {"2026-11-02T10:00:00Z", "UTC"}, {"2026-11-02T10:00:00Z", "Asia/Kolkata"},
		{"2026-11-02T23:59:59.999999", "UTC"}, {"2026-11-02T10:00:00.123456789Z", "UTC"}, {"2026-11-02T07:00", "America/St_Johns"},
		{"2026-03-29", "Europe/Paris"}, {"2026-03-29T03:00", "Europe/Paris"}, {"2026-10-25T02:30:00+02:00", "Europe/Paris"},
		{"2026-10-25T02:30:00+01:00", "Europe/Paris"}, {"1900-01-01T05:00:00+14:00", "UTC"}, {"9998-12-31", "Pacific/Pago_Pago"},
		{"9998-12-31", "Etc/GMT+12"}, {"1900-01-01T00:00:00+24:59", "UTC"},
	} {
		loc, err := tasks.LoadZone(d.zone)
		if err != nil {
			tb.Fatal(err)
		}
		due, err := tasks.ParseDue(d.text, loc)
		if err != nil {
			tb.Fatal(err)
		}
		sc.dues = append(sc.dues, due)
		by := due.By()
		if due.At != nil {
			by = *due.At // with its nanoseconds
		}
		sc.bounds = append(sc.bounds, by, by.Add(time.Nanosecond), by.Add(-time.Nanosecond), by.Add(time.Microsecond))
		// A cursor as the stores write it after a task due then.
		sc.cursors = append(sc.cursors, dueCursor(due.By().UnixMicro(), 1+r.Int64N(5)))
	}
	// And the first and the last instants a due cursor may hold, and those
	// just outside them.
	for _, at := range []time.Time{time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC), time.Date(10000, 1, 2, 0, 0, 0, 0, time.UTC)} {
		sc.cursors = append(sc.cursors, dueCursor(at.UnixMicro()-1, 1), dueCursor(at.UnixMicro(), 1))
	}
	return sc
}

// dueCursor is the cursor of a page in due-date order that ends at task
// number, due by micros (in Unix microseconds), as both stores write it.
func dueCursor(micros, number int64) string {
	return base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "d%d.%d", micros, number))
}

// due is a due date for a new task or an update: often none.
func (sc *script) due() *tasks.Due {
	if sc.r.IntN(3) == 0 {
		return nil
	}
	d := pick(sc.r, sc.dues)
	return &d
}

// priority is a priority for a task: often none; rarely one the service
// would have refused, which PostgreSQL's store keeps as none.
func (sc *script) priority() tasks.Priority {
	if sc.r.IntN(20) == 0 {
		return pick(sc.r, []tasks.Priority{"HIGH", "urgent"})
	}
	return pick(sc.r, []tasks.Priority{"", "", tasks.PriorityHigh, tasks.PriorityMedium, tasks.PriorityLow})
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
	switch n := sc.r.IntN(22); {
	case n == 20:
		zone := pick(sc.r, []string{"Europe/Paris", "Asia/Kolkata", "UTC", "", strings.Repeat("Z", 65), "bad \xff"})
		return fmt.Sprintf("save the time zone %q of %q", clip(zone), user), func(s tasks.Store) outcome {
			set, err := s.SaveSettings(ctx, user, tasks.Settings{TimeZone: zone})
			return settingsOutcome(set, err)
		}
	case n == 21:
		return fmt.Sprintf("the settings of %q", user), func(s tasks.Store) outcome {
			return settingsOutcome(s.Settings(ctx, user))
		}
	case n < 7:
		title, description := sc.text(true), sc.text(false)
		nt := tasks.NewTask{Title: title, Description: description, Due: sc.due(), Priority: sc.priority()}
		return fmt.Sprintf("create %q | %q due %s, priority %q, for %q", clip(title), clip(description), showDue(nt.Due), nt.Priority, user), func(s tasks.Store) outcome {
			return taskOutcome(s.CreateTask(ctx, user, nt, rec))
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
		switch sc.r.IntN(4) {
		case 0:
			u.Due = tasks.Clear[tasks.Due]()
		case 1:
			u.Due = tasks.SetTo(pick(sc.r, sc.dues))
		}
		switch sc.r.IntN(4) {
		case 0:
			u.Priority = tasks.Clear[tasks.Priority]()
		case 1:
			u.Priority = tasks.SetTo(sc.priority())
		}
		if sc.r.IntN(3) == 0 {
			u.Completed = ptr(sc.r.IntN(2) == 0)
		}
		return fmt.Sprintf("update %d of %q to %s", id, user, describeUpdate(u)), func(s tasks.Store) outcome {
			return taskOutcome(s.UpdateTask(ctx, user, id, u, rec))
		}
	case n < 19:
		f := tasks.Filter{Status: pick(sc.r, []tasks.Status{tasks.StatusAll, tasks.StatusPending, tasks.StatusCompleted}),
			Query:    pick(sc.r, []string{"", "", "", "call", "DENTIST", "the bill", "dentist call", "%", "_", `c:\`, "zebra", "bad \xff", "ÉCOLE", "STRASSE", "ünï"}),
			Priority: pick(sc.r, []tasks.Priority{"", "", "", tasks.PriorityHigh, tasks.PriorityMedium, tasks.PriorityLow})}
		switch sc.r.IntN(3) {
		case 0:
			f.ByDue = true
		case 1:
			f.DueFrom, f.DueTo, f.Overdue = pick(sc.r, sc.bounds), pick(sc.r, sc.bounds), sc.r.IntN(4) == 0
		}
		limit, cursor := 1+sc.r.IntN(5), pick(sc.r, sc.cursors)
		if sc.r.IntN(10) == 0 {
			cursor = pick(sc.r, []string{"not-a-cursor", "dDA", "bTE", "MTcwMDAwMDAwMDAwMDAwMC4x", "ZDEuMA", "ZC05OTk5OTk5OTk5OTk5OTk5OTk5LjE", "ZDE3OTI0NTc2MDAwMDAwMDAuMDE"})
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

// settingsOutcome is what a call of the settings answered: the time of
// the change only checked to be there, as the clocks differ.
func settingsOutcome(set tasks.Settings, err error) outcome {
	if err != nil {
		return outcome{text: errorKind(err)}
	}
	return outcome{text: fmt.Sprintf("time zone %q, set %v", set.TimeZone, !set.UpdatedAt.IsZero())}
}

// showDue is a due date with all it holds: its day, its instant to the
// nanosecond, its zone, and so its text and its By.
func showDue(d *tasks.Due) string {
	if d == nil {
		return "never"
	}
	at := "the day"
	if d.At != nil {
		at = d.At.UTC().Format(time.RFC3339Nano)
	}
	return fmt.Sprintf("%s (%s in %s, %s, by %s)", d.String(), d.Date, d.Zone, at, d.By().UTC().Format(time.RFC3339Nano))
}

// describe is a task as both stores must give it; the times are only
// checked to be in order, since the two stores' clocks differ.
func describe(t tasks.Task) string {
	s := fmt.Sprintf("%d of %q: %q | %q due %s priority %q", t.ID, t.UserID, t.Title, t.Description, showDue(t.Due), t.Priority)
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
		s += fmt.Sprintf("description %q ", clip(*u.Description))
	}
	if u.Due.Set {
		s += "due " + showDue(u.Due.Value) + " "
	}
	if u.Priority.Set {
		s += "priority "
		if u.Priority.Value == nil {
			s += "none "
		} else {
			s += fmt.Sprintf("%q ", *u.Priority.Value)
		}
	}
	if u.Completed != nil {
		s += fmt.Sprintf("completed %v", *u.Completed)
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
	if _, err := s.CreateTask(ctx, "alice", tasks.NewTask{Title: "", Description: ""}, nil); !errors.Is(err, tasks.ErrInvalid) {
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
	t, err := s.CreateTask(context.Background(), user, tasks.NewTask{Title: title, Description: ""}, nil)
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
