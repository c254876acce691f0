package store_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/taskchat/taskchat/internal/store"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/tasks"
)

// mustDue is the due date text means to a user in zone, as the service
// reads it (tasks.ParseDue).
func mustDue(tb testing.TB, text, zone string) tasks.Due {
	tb.Helper()
	loc, err := tasks.LoadZone(zone)
	if err != nil {
		tb.Fatalf("zone %q: %v", zone, err)
	}
	d, err := tasks.ParseDue(text, loc)
	if err != nil {
		tb.Fatalf("due %q in %s: %v", text, zone, err)
	}
	return d
}

// utc is the instant written in RFC 3339, with fractions of a second.
func utc(tb testing.TB, s string) time.Time {
	tb.Helper()
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		tb.Fatal(err)
	}
	return at
}

// showTask is a task as a test compares it: every field, the due date by
// value (its instant to the microsecond, its By), the times left out.
func showTask(t tasks.Task) string {
	s := fmt.Sprintf("%d of %q: %q | %q done=%v priority=%q", t.ID, t.UserID, t.Title, t.Description, t.Completed, t.Priority)
	if d := t.Due; d != nil {
		at := "day"
		if d.At != nil {
			at = d.At.UTC().Format(time.RFC3339Nano)
		}
		s += fmt.Sprintf(" due %s %s in %s (%s, by %s)", d.Date, at, d.Zone, d.String(), d.By().UTC().Format(time.RFC3339Nano))
	}
	return s
}

// dueColumns are a task's due date and priority as its row holds them.
type dueColumns struct {
	On, Zone *string
	At, By   *time.Time
	Priority *int16
}

// mustDueColumns reads the due date and the priority of the user's task
// number from its row.
func mustDueColumns(tb testing.TB, user string, number int64) dueColumns {
	tb.Helper()
	var c dueColumns
	if err := storetest.Pool(tb).QueryRow(context.Background(), `
		SELECT to_char(due_on, 'YYYY-MM-DD'), due_zone, due_at, due_by, priority
		FROM tasks WHERE user_id = $1 AND number = $2`, user, number).Scan(&c.On, &c.Zone, &c.At, &c.By, &c.Priority); err != nil {
		tb.Fatalf("the row of task %d: %v", number, err)
	}
	return c
}

// checkDueRow fails unless the row of task holds its due date and priority,
// due_by being Due.By.
func checkDueRow(tb testing.TB, task tasks.Task) {
	tb.Helper()
	c := mustDueColumns(tb, task.UserID, task.ID)
	if task.Priority == "" && c.Priority != nil || task.Priority != "" && (c.Priority == nil || int(*c.Priority) != task.Priority.Rank()) {
		tb.Errorf("task %d of priority %q has the priority column %v", task.ID, task.Priority, deref16(c.Priority))
	}
	d := task.Due
	if d == nil {
		if c.On != nil || c.Zone != nil || c.At != nil || c.By != nil {
			tb.Errorf("task %d has no due date, but its row holds %+v", task.ID, c)
		}
		return
	}
	if c.On == nil || *c.On != d.Date || c.Zone == nil || *c.Zone != d.Zone || c.By == nil || !c.By.Equal(d.By()) ||
		(d.At == nil) != (c.At == nil) || d.At != nil && !c.At.Equal(*d.At) {
		tb.Errorf("task %d due %s (by %s): its row holds on %s at %v in %s by %v", task.ID, d, d.By(), derefS(c.On), c.At, derefS(c.Zone), c.By)
	}
}

func deref16(p *int16) string {
	if p == nil {
		return "NULL"
	}
	return fmt.Sprint(*p)
}

func derefS(p *string) string {
	if p == nil {
		return "NULL"
	}
	return *p
}

// A due date goes in and comes back as it was meant: the day in its zone,
// the instant when a time was given (to the microsecond), the zone, and
// so the same text and the same By, whatever the zone's offset (ahead of
// UTC, behind it, by half and three quarters of an hour) and on the days
// Europe/Paris changes its clocks: a day of 23 hours in March, of 25 in
// October, the instants either side of the change and both 02:30 of the
// October night. The row's due_by is Due.By, which every listing reads.
func TestDueDatesRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, user := newTasks(t), storetest.UserID(t)
	priorities := []tasks.Priority{"", tasks.PriorityHigh, tasks.PriorityMedium, tasks.PriorityLow}
	for i, c := range []struct {
		text, zone      string
		date, shown, by string // by: the instant By must be
		timed           bool
	}{
		{"2026-12-04", "UTC", "2026-12-04", "2026-12-04", "2026-12-04T23:59:59.999999Z", false},
		{"2026-12-04", "Asia/Kolkata", "2026-12-04", "2026-12-04", "2026-12-04T18:29:59.999999Z", false},
		{"2026-12-04", "America/New_York", "2026-12-04", "2026-12-04", "2026-12-05T04:59:59.999999Z", false},
		{"2026-12-04", "Pacific/Kiritimati", "2026-12-04", "2026-12-04", "2026-12-04T09:59:59.999999Z", false},
		{"2026-03-29", "Europe/Paris", "2026-03-29", "2026-03-29", "2026-03-29T21:59:59.999999Z", false}, // 23 hours
		{"2026-10-25", "Europe/Paris", "2026-10-25", "2026-10-25", "2026-10-25T22:59:59.999999Z", false}, // 25 hours
		{"2026-12-04T17:00", "Europe/Paris", "2026-12-04", "2026-12-04T17:00:00+01:00", "2026-12-04T16:00:00Z", true},
		{"2026-07-04T09:15:30", "America/New_York", "2026-07-04", "2026-07-04T09:15:30-04:00", "2026-07-04T13:15:30Z", true},
		{"2026-12-04T09:15", "Asia/Kolkata", "2026-12-04", "2026-12-04T09:15:00+05:30", "2026-12-04T03:45:00Z", true},
		{"2026-12-04T09:15", "Asia/Kathmandu", "2026-12-04", "2026-12-04T09:15:00+05:45", "2026-12-04T03:30:00Z", true},
		{"2026-01-10T08:00", "America/St_Johns", "2026-01-10", "2026-01-10T08:00:00-03:30", "2026-01-10T11:30:00Z", true},
		{"2026-01-10T08:00", "Pacific/Chatham", "2026-01-10", "2026-01-10T08:00:00+13:45", "2026-01-09T18:15:00Z", true},
		{"2026-03-29T01:59:59", "Europe/Paris", "2026-03-29", "2026-03-29T01:59:59+01:00", "2026-03-29T00:59:59Z", true},
		{"2026-03-29T03:00", "Europe/Paris", "2026-03-29", "2026-03-29T03:00:00+02:00", "2026-03-29T01:00:00Z", true},
		{"2026-10-25T02:30:00+02:00", "Europe/Paris", "2026-10-25", "2026-10-25T02:30:00+02:00", "2026-10-25T00:30:00Z", true},
		{"2026-10-25T02:30:00+01:00", "Europe/Paris", "2026-10-25", "2026-10-25T02:30:00+01:00", "2026-10-25T01:30:00Z", true},
		{"2026-10-25T03:00", "Europe/Paris", "2026-10-25", "2026-10-25T03:00:00+01:00", "2026-10-25T02:00:00Z", true},
		// A time given with another offset is shown in the user's zone, on
		// the day it is there.
		{"2026-12-04T23:30:00-08:00", "Asia/Tokyo", "2026-12-05", "2026-12-05T16:30:00+09:00", "2026-12-05T07:30:00Z", true},
		{"2026-12-04T23:30:00+01:00", "America/Los_Angeles", "2026-12-04", "2026-12-04T14:30:00-08:00", "2026-12-04T22:30:00Z", true},
		{"2026-06-01T12:00:00.123456789Z", "UTC", "2026-06-01", "2026-06-01T12:00:00Z", "2026-06-01T12:00:00.123456Z", true},
	} {
		t.Run(c.zone+" "+c.text, func(t *testing.T) {
			due := mustDue(t, c.text, c.zone)
			priority := priorities[i%len(priorities)]
			task, err := s.CreateTask(ctx, user, tasks.NewTask{Title: "due " + c.text, Description: c.zone, Due: &due, Priority: priority}, nil)
			if err != nil {
				t.Fatal(err)
			}
			d := task.Due
			if d == nil || d.Date != c.date || d.Zone != c.zone || (d.At != nil) != c.timed || d.String() != c.shown ||
				!d.By().Equal(utc(t, c.by)) || task.Priority != priority {
				t.Fatalf("created %s; want due %s in %s, shown %s, by %s, priority %q", showTask(task), c.date, c.zone, c.shown, c.by, priority)
			}
			checkDueRow(t, task)
			page, err := s.ListTasksPage(ctx, user, tasks.Filter{Status: tasks.StatusAll}, tasks.MaxTaskPage, "")
			if err != nil {
				t.Fatal(err)
			}
			i := slices.IndexFunc(page.Items, func(x tasks.Task) bool { return x.ID == task.ID })
			if i < 0 || showTask(page.Items[i]) != showTask(task) {
				t.Fatalf("listed as %v, want %s", page.Items, showTask(task))
			}
		})
	}
}

// UpdateTask changes what it is given and nothing else: a due date set,
// changed, or cleared (every column of it); a priority set or cleared;
// completed true completes, false reopens; the title and the description
// stay unless given.
func TestUpdateTaskDueDatesAndPriorities(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, user := newTasks(t), storetest.UserID(t)
	day := mustDue(t, "2026-12-01", "Europe/Paris")
	want, err := s.CreateTask(ctx, user, tasks.NewTask{Title: "Pay rent", Description: "by transfer", Due: &day, Priority: tasks.PriorityHigh}, nil)
	if err != nil {
		t.Fatal(err)
	}
	other := mustCreate(t, s, user, "Untouched", nil)
	timed := mustDue(t, "2026-12-04T09:15", "Asia/Kolkata")
	dst := mustDue(t, "2026-10-25T02:30:00+01:00", "Europe/Paris")
	steps := []struct {
		name   string
		update tasks.TaskUpdate
		apply  func(*tasks.Task)
	}{
		{"the title only", tasks.TaskUpdate{Title: ptr("Pay the rent")}, func(t *tasks.Task) { t.Title = "Pay the rent" }},
		{"completed", tasks.TaskUpdate{Completed: ptr(true)}, func(t *tasks.Task) { t.Completed = true }},
		{"completed again", tasks.TaskUpdate{Completed: ptr(true)}, func(*tasks.Task) {}},
		{"reopened", tasks.TaskUpdate{Completed: ptr(false)}, func(t *tasks.Task) { t.Completed = false }},
		{"reopened again", tasks.TaskUpdate{Completed: ptr(false)}, func(*tasks.Task) {}},
		{"due at a time", tasks.TaskUpdate{Due: tasks.SetTo(timed)}, func(t *tasks.Task) { t.Due = &timed }},
		{"the description only", tasks.TaskUpdate{Description: ptr("")}, func(t *tasks.Task) { t.Description = "" }},
		{"priority low", tasks.TaskUpdate{Priority: tasks.SetTo(tasks.PriorityLow)}, func(t *tasks.Task) { t.Priority = tasks.PriorityLow }},
		{"due in the repeated hour", tasks.TaskUpdate{Due: tasks.SetTo(dst)}, func(t *tasks.Task) { t.Due = &dst }},
		{"priority cleared", tasks.TaskUpdate{Priority: tasks.Clear[tasks.Priority]()}, func(t *tasks.Task) { t.Priority = "" }},
		{"priority cleared again", tasks.TaskUpdate{Priority: tasks.Clear[tasks.Priority]()}, func(*tasks.Task) {}},
		{"due cleared", tasks.TaskUpdate{Due: tasks.Clear[tasks.Due]()}, func(t *tasks.Task) { t.Due = nil }},
		{"due cleared again", tasks.TaskUpdate{Due: tasks.Clear[tasks.Due]()}, func(*tasks.Task) {}},
		{"due a day, priority medium, completed, at once", tasks.TaskUpdate{Due: tasks.SetTo(day), Priority: tasks.SetTo(tasks.PriorityMedium), Completed: ptr(true)},
			func(t *tasks.Task) { t.Due, t.Priority, t.Completed = &day, tasks.PriorityMedium, true }},
		{"reopened with a new title", tasks.TaskUpdate{Title: ptr("Rent"), Completed: ptr(false)}, func(t *tasks.Task) { t.Title, t.Completed = "Rent", false }},
	}
	for _, step := range steps {
		before := want
		step.apply(&want)
		got, err := s.UpdateTask(ctx, user, want.ID, step.update, nil)
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if showTask(got) != showTask(want) || !got.UpdatedAt.After(before.UpdatedAt) || !got.CreatedAt.Equal(before.CreatedAt) {
			t.Fatalf("%s:\n got %s (updated %v)\nwant %s (after %v)", step.name, showTask(got), got.UpdatedAt, showTask(want), before.UpdatedAt)
		}
		checkDueRow(t, got)
		want = got
	}
	// CompleteTask keeps the due date and the priority; UpdateTask reopens
	// what it completed.
	done := mustComplete(t, s, user, want.ID, nil)
	if !done.Completed || done.Due == nil || done.Priority != tasks.PriorityMedium {
		t.Fatalf("completed: %s", showTask(done))
	}
	reopened, err := s.UpdateTask(ctx, user, want.ID, tasks.TaskUpdate{Completed: ptr(false)}, nil)
	if err != nil || reopened.Completed || showTask(reopened) != strings.Replace(showTask(done), "done=true", "done=false", 1) {
		t.Fatalf("reopened = %s, %v; want %s open", showTask(reopened), err, showTask(done))
	}
	list := mustList(t, s, user)
	if len(list) != 2 || showTask(list[0]) != showTask(reopened) || showTask(list[1]) != showTask(other) {
		t.Fatalf("the list = %v, want %s and %s untouched", list, showTask(reopened), showTask(other))
	}
}

// The record of a change holds the result the tool told the model: the
// statement builds it in SQL (task_change_result) from the changed row,
// the tool in Go (tasks.ChangeResultOf) from the task the store returned,
// and the two are the same JSON for every due date — a day, a time in UTC
// (which Go writes "Z", as it does any zero offset), ahead of UTC and
// behind it, by fractions of an hour, either side of a clock change, with
// a fraction of a second Go does not show — every priority and none, for
// each change, a chat turn's and an outside client's.
func TestRecordedResultIsWhatTheToolAnswers(t *testing.T) {
	t.Parallel()
	turns, s := newTurns(t), newTasks(t)
	type dueCase struct{ text, zone string }
	cases := []dueCase{
		{"", ""},
		{"2026-12-04", "UTC"},
		{"2026-12-04", "Asia/Kolkata"},
		{"2026-03-29", "America/Los_Angeles"},
		{"2026-12-04T17:00", "UTC"},
		{"2026-12-04T17:00:00.999999", "UTC"},
		{"2026-12-04T17:00", "Europe/London"}, // +00:00 in winter: "Z" too
		{"2026-07-04T17:00", "Europe/London"},
		{"2026-12-04T17:00", "Europe/Paris"},
		{"2026-03-29T03:00", "Europe/Paris"},
		{"2026-10-25T02:30:00+02:00", "Europe/Paris"},
		{"2026-10-25T02:30:00+01:00", "Europe/Paris"},
		{"2026-12-04T09:15", "Asia/Kolkata"},
		{"2026-12-04T09:15", "Asia/Kathmandu"},
		{"2026-07-04T08:00", "America/St_Johns"},
		{"2026-01-10T08:00", "America/St_Johns"},
		{"2026-01-10T08:00", "Pacific/Chatham"},
		{"2026-12-31T23:59:59", "Pacific/Kiritimati"},
		{"2026-01-01T00:00", "Pacific/Pago_Pago"},
		{"2026-07-04T09:15:30", "America/New_York"},
		{"2026-12-04T23:30:00-08:00", "Asia/Tokyo"},
	}
	priorities := []tasks.Priority{"", tasks.PriorityHigh, tasks.PriorityMedium, tasks.PriorityLow}
	for i, c := range cases {
		t.Run(fmt.Sprintf("%s %s", c.zone, c.text), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			var due *tasks.Due
			if c.text != "" {
				d := mustDue(t, c.text, c.zone)
				due = &d
			}
			priority := priorities[i%len(priorities)]
			// The update gives the task the next case's due date and
			// priority, or clears them.
			next := cases[(i+1)%len(cases)]
			update := tasks.TaskUpdate{Due: tasks.Clear[tasks.Due](), Priority: tasks.Clear[tasks.Priority]()}
			if next.text != "" {
				update.Due = tasks.SetTo(mustDue(t, next.text, next.zone))
			}
			if p := priorities[(i+1)%len(priorities)]; p != "" {
				update.Priority = tasks.SetTo(p)
			}
			for _, mcp := range []bool{false, true} {
				user := storetest.UserID(t)
				var turn tasks.Turn
				if !mcp {
					turn = mustStart(t, turns, user, 0, "Change my list")
				}
				record := func(seq int, tool string) *tasks.CallRecord {
					if mcp {
						return mcpRecord(tool, `{}`)
					}
					return recordOf(turn, seq, tool, `{}`)
				}
				var results []tasks.ChangeResult
				created, err := s.CreateTask(ctx, user, tasks.NewTask{Title: "Call the bank", Description: "", Due: due, Priority: priority}, record(0, tasks.ToolAddTask))
				if err != nil {
					t.Fatal(err)
				}
				results = append(results, tasks.ChangeResultOf(created, tasks.StatusCreated))
				done, err := s.CompleteTask(ctx, user, created.ID, record(1, tasks.ToolCompleteTask))
				if err != nil {
					t.Fatal(err)
				}
				results = append(results, tasks.ChangeResultOf(done, tasks.StatusDone))
				updated, err := s.UpdateTask(ctx, user, created.ID, update, record(2, tasks.ToolUpdateTask))
				if err != nil {
					t.Fatal(err)
				}
				results = append(results, tasks.ChangeResultOf(updated, tasks.StatusUpdated))
				reverted, err := s.UpdateTask(ctx, user, created.ID, tasks.TaskUpdate{Due: tasks.Field[tasks.Due]{Set: true, Value: due}, Priority: tasks.SetTo(priority), Completed: ptr(false)},
					record(3, tasks.ToolUpdateTask))
				if err != nil {
					t.Fatal(err)
				}
				results = append(results, tasks.ChangeResultOf(reverted, tasks.StatusUpdated))
				deleted, err := s.DeleteTask(ctx, user, created.ID, record(4, tasks.ToolDeleteTask))
				if err != nil {
					t.Fatal(err)
				}
				results = append(results, tasks.ChangeResultOf(deleted, tasks.StatusDeleted))
				if results[0].Due != results[3].Due || (due == nil) != (results[0].Due == "") || due != nil && results[0].Due != due.String() {
					t.Errorf("the tool's results %+v: the due date came back changed", results)
				}

				var recorded []json.RawMessage
				if mcp {
					for _, r := range mustMCPRows(t, user) {
						recorded = append(recorded, r.Result)
					}
				} else {
					for _, r := range mustAuditRows(t, user, turn.ID()) {
						recorded = append(recorded, r.Result)
					}
				}
				if len(recorded) != len(results) {
					t.Fatalf("%d records, want %d", len(recorded), len(results))
				}
				for j, want := range results {
					if !storetest.SameJSON(recorded[j], mustJSON(t, want)) {
						t.Errorf("mcp=%v change %d (%s): recorded %s, the tool said %s", mcp, j, want.Status, recorded[j], mustJSON(t, want))
					}
				}
			}
		})
	}
}

// mustCreateDue creates a task due as text means in zone (no due date for
// ""), of priority p.
func mustCreateDue(tb testing.TB, s *store.Tasks, user, title, text, zone string, p tasks.Priority) tasks.Task {
	tb.Helper()
	var due *tasks.Due
	if text != "" {
		d := mustDue(tb, text, zone)
		due = &d
	}
	task, err := s.CreateTask(context.Background(), user, tasks.NewTask{Title: title, Due: due, Priority: p}, nil)
	if err != nil {
		tb.Fatalf("create %q: %v", title, err)
	}
	return task
}

// listAll reads the whole listing f picks, limit tasks a page, and fails
// if a page is longer than limit, or short but not the last.
func listAll(tb testing.TB, s tasks.Store, user string, f tasks.Filter, limit int) []tasks.Task {
	tb.Helper()
	return listAllWith(tb, func(cursor string) (tasks.Page[tasks.Task], error) {
		return s.ListTasksPage(context.Background(), user, f, limit, cursor)
	}, limit)
}

// listAllWith reads the pages list returns, of limit tasks, to the last.
func listAllWith(tb testing.TB, list func(cursor string) (tasks.Page[tasks.Task], error), limit int) []tasks.Task {
	tb.Helper()
	var all []tasks.Task
	cursor := ""
	for n := 1; ; n++ {
		page, err := list(cursor)
		if err != nil {
			tb.Fatalf("page %d: %v", n, err)
		}
		if len(page.Items) > limit || n > 1000 || page.Next != "" && len(page.Items) != limit {
			tb.Fatalf("page %d holds %d tasks (limit %d), next %q", n, len(page.Items), limit, page.Next)
		}
		all = append(all, page.Items...)
		if cursor = page.Next; cursor == "" {
			return all
		}
	}
}

func titles(list []tasks.Task) []string {
	out := make([]string, len(list))
	for i, t := range list {
		out[i] = t.Title
	}
	return out
}

// A listing of one priority holds that priority's tasks only, in number
// order, with the status and the words as any listing, a page after
// another.
func TestListTasksOfPriority(t *testing.T) {
	t.Parallel()
	s, user, other := newTasks(t), storetest.UserID(t), storetest.UserID(t)
	want := map[tasks.Priority][]int64{}
	var pendingHigh, highWithBank []int64
	for i := range 30 {
		p := []tasks.Priority{tasks.PriorityHigh, "", tasks.PriorityLow, tasks.PriorityMedium, "", tasks.PriorityHigh}[i%6]
		title := fmt.Sprintf("task %d", i)
		if i%4 == 0 {
			title += " call the bank"
		}
		task := mustCreateDue(t, s, user, title, "", "", p)
		mustCreateDue(t, s, other, title, "", "", p)
		if i%3 == 0 {
			mustComplete(t, s, user, task.ID, nil)
		}
		want[p] = append(want[p], task.ID)
		if p == tasks.PriorityHigh && i%3 != 0 {
			pendingHigh = append(pendingHigh, task.ID)
		}
		if p == tasks.PriorityHigh && i%4 == 0 {
			highWithBank = append(highWithBank, task.ID)
		}
	}
	for _, c := range []struct {
		f    tasks.Filter
		want []int64
	}{
		{tasks.Filter{Status: tasks.StatusAll, Priority: tasks.PriorityHigh}, want[tasks.PriorityHigh]},
		{tasks.Filter{Status: tasks.StatusAll, Priority: tasks.PriorityMedium}, want[tasks.PriorityMedium]},
		{tasks.Filter{Status: tasks.StatusAll, Priority: tasks.PriorityLow}, want[tasks.PriorityLow]},
		{tasks.Filter{Status: tasks.StatusPending, Priority: tasks.PriorityHigh}, pendingHigh},
		{tasks.Filter{Status: tasks.StatusAll, Priority: tasks.PriorityHigh, Query: "BANK"}, highWithBank},
	} {
		for _, limit := range []int{1, 3, 100} {
			got := listAll(t, s, user, c.f, limit)
			if fmt.Sprint(ids(got)) != fmt.Sprint(c.want) || len(c.want) == 0 {
				t.Errorf("%+v by %d = %v, want %v", c.f, limit, ids(got), c.want)
			}
			for _, task := range got {
				if task.Priority != c.f.Priority || task.UserID != user {
					t.Errorf("%+v lists %s", c.f, showTask(task))
				}
			}
		}
	}
	// A task whose priority changes leaves one listing for another.
	moved := want[tasks.PriorityLow][0]
	if _, err := s.UpdateTask(context.Background(), user, moved, tasks.TaskUpdate{Priority: tasks.SetTo(tasks.PriorityHigh)}, nil); err != nil {
		t.Fatal(err)
	}
	if got := ids(listAll(t, s, user, tasks.Filter{Status: tasks.StatusAll, Priority: tasks.PriorityHigh}, 100)); !slices.Contains(got, moved) {
		t.Errorf("high after task %d became high = %v", moved, got)
	}
	if got := ids(listAll(t, s, user, tasks.Filter{Status: tasks.StatusAll, Priority: tasks.PriorityLow}, 100)); slices.Contains(got, moved) {
		t.Errorf("low after task %d became high = %v", moved, got)
	}
}

// ids are the numbers of list's tasks.
func ids(list []tasks.Task) []int64 {
	out := make([]int64, len(list))
	for i, t := range list {
		out[i] = t.ID
	}
	return out
}

// "What's due this week", for a user in Paris, is exactly the tasks due
// from Monday's start to Sunday's end there: a day task of Sunday is in,
// Monday of the next week is out, a task at Monday 00:00 of this week is
// in and one a microsecond before it out — in the week the clocks go
// forward on Sunday (a 167-hour week) and in the one they go back (169
// hours). Every bound is a task's By: a day task of Sunday in Los Angeles,
// due by 09:00 on Monday in Paris, is out; one of Monday in Kolkata, due
// by 19:00 Paris on Monday, is in.
func TestDueThisWeek(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newTasks(t)
	svc := tasks.NewService(s)
	for _, week := range []struct {
		name, monday, sunday, before, after string // before: the Sunday before; after: the Monday after
	}{
		{"clocks forward", "2026-03-23", "2026-03-29", "2026-03-22", "2026-03-30"},
		{"clocks back", "2026-10-19", "2026-10-25", "2026-10-18", "2026-10-26"},
	} {
		t.Run(week.name, func(t *testing.T) {
			t.Parallel()
			user := storetest.UserID(t)
			if _, err := svc.SaveSettings(ctx, user, tasks.Settings{TimeZone: "Europe/Paris"}); err != nil {
				t.Fatal(err)
			}
			type dueTask struct {
				title, due, zone string
				in               bool
			}
			list := []dueTask{
				{"Sunday before, the day", week.before, "Europe/Paris", false},
				{"Sunday before, its last instant", week.before + "T23:59:59.999999", "Europe/Paris", false},
				{"Monday 00:00", week.monday + "T00:00", "Europe/Paris", true},
				{"Monday, the day", week.monday, "Europe/Paris", true},
				{"Monday in Kolkata", week.monday, "Asia/Kolkata", true},
				{"Wednesday 12:00 UTC", mustDue(t, week.monday, "UTC").By().AddDate(0, 0, 2).Format(tasks.DateLayout) + "T12:00:00Z", "Europe/Paris", true},
				{"Sunday 03:00", week.sunday + "T03:00", "Europe/Paris", true},
				{"Sunday, the day", week.sunday, "Europe/Paris", true},
				{"Sunday 23:59:59.999999", week.sunday + "T23:59:59.999999", "Europe/Paris", true},
				{"Sunday in Los Angeles", week.sunday, "America/Los_Angeles", false},
				{"Monday after 00:00", week.after + "T00:00", "Europe/Paris", false},
				{"Monday after, the day", week.after, "Europe/Paris", false},
				{"no due date", "", "", false},
			}
			var want []tasks.Task
			for _, d := range list {
				task := mustCreateDue(t, s, user, d.title, d.due, d.zone, "")
				if d.in {
					want = append(want, task)
				}
			}
			slices.SortStableFunc(want, func(a, b tasks.Task) int { return a.Due.By().Compare(b.Due.By()) })
			from, to, err := svc.DueRange(ctx, user, week.monday, week.sunday)
			if err != nil {
				t.Fatal(err)
			}
			if hours := to.Sub(from).Hours(); hours != map[string]float64{"clocks forward": 167, "clocks back": 169}[week.name] {
				t.Errorf("the week lasts %v hours", hours)
			}
			for _, limit := range []int{1, 2, 100} {
				got := listAllWith(t, func(cursor string) (tasks.Page[tasks.Task], error) {
					return svc.ListPage(ctx, user, tasks.Filter{DueFrom: from, DueTo: to}, limit, cursor)
				}, limit)
				if fmt.Sprint(titles(got)) != fmt.Sprint(titles(want)) {
					t.Errorf("due this week, %d a page:\n got %q\nwant %q", limit, titles(got), titles(want))
				}
			}
			// Each bound alone.
			if got := listAll(t, s, user, tasks.Filter{Status: tasks.StatusAll, DueFrom: from}, 3); len(got) != len(want)+3 {
				t.Errorf("due from Monday: %q", titles(got))
			}
			if got := listAll(t, s, user, tasks.Filter{Status: tasks.StatusAll, DueTo: to}, 3); len(got) != len(want)+2 {
				t.Errorf("due before the next Monday: %q", titles(got))
			}
		})
	}
}

// A listing in due-date order reads a day's timed tasks before the day's
// own (due by its end), ties in number order, whatever the zones, and only
// tasks that have a due date.
func TestByDueOrder(t *testing.T) {
	t.Parallel()
	s, user := newTasks(t), storetest.UserID(t)
	add := func(title, due, zone string) tasks.Task { return mustCreateDue(t, s, user, title, due, zone, "") }
	add("no date", "", "")
	dayA := add("the day, first", "2026-05-06", "UTC")
	late := add("23:00", "2026-05-06T23:00", "UTC")
	dayB := add("the day, second", "2026-05-06", "UTC")
	early := add("09:00", "2026-05-06T09:00", "UTC")
	tieA := add("12:00 UTC", "2026-05-06T12:00:00Z", "UTC")
	tieB := add("14:00 Paris", "2026-05-06T14:00", "Europe/Paris") // the same instant
	last := add("23:59:59.999999", "2026-05-06T23:59:59.999999", "UTC")
	next := add("the next day", "2026-05-07", "UTC")
	kolkata := add("the day in Kolkata, over at 18:30 UTC", "2026-05-06", "Asia/Kolkata")
	// The day tasks and the task due at the day's last microsecond are
	// due by the same instant: in number order.
	want := []int64{early.ID, tieA.ID, tieB.ID, kolkata.ID, late.ID, dayA.ID, dayB.ID, last.ID, next.ID}
	for _, limit := range []int{1, 2, 3, 100} {
		if got := ids(listAll(t, s, user, tasks.Filter{Status: tasks.StatusAll, ByDue: true}, limit)); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("by due, %d a page = %v, want %v", limit, got, want)
		}
	}
}

// A due-ordered listing of 25 tasks, read 7 at a time, holds each task
// once, in order, however the page bounds fall on ties, with any status,
// priority and range filter; a task added or completed between the pages
// shows as a position cursor says it should.
func TestDuePagesReadEachTaskOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, user, other := newTasks(t), storetest.UserID(t), storetest.UserID(t)
	zones := []string{"UTC", "Europe/Paris", "Asia/Kolkata", "America/New_York"}
	var all []tasks.Task
	for i := range 25 {
		var due string
		switch i % 5 {
		case 0, 1: // four days, several tasks each: ties
			due = fmt.Sprintf("2026-11-%02d", 1+i%4)
		case 2:
			due = fmt.Sprintf("2026-11-%02dT%02d:00", 1+i%4, i%24)
		case 3:
			due = "2026-11-02T10:00:00Z" // ties across zones
		default:
			due = ""
		}
		p := []tasks.Priority{"", tasks.PriorityHigh, tasks.PriorityLow}[i%3]
		task := mustCreateDue(t, s, user, fmt.Sprintf("task %d", i), due, zones[i%len(zones)], p)
		mustCreateDue(t, s, other, fmt.Sprintf("other %d", i), due, zones[i%len(zones)], p)
		if i%4 == 0 {
			task = mustComplete(t, s, user, task.ID, nil)
		}
		all = append(all, task)
	}
	sorted := func(keep func(tasks.Task) bool) []int64 {
		var out []tasks.Task
		for _, task := range all {
			if task.Due != nil && keep(task) {
				out = append(out, task)
			}
		}
		slices.SortFunc(out, func(a, b tasks.Task) int {
			if c := a.Due.By().Compare(b.Due.By()); c != 0 {
				return c
			}
			return int(a.ID - b.ID)
		})
		return ids(out)
	}
	from, to := utc(t, "2026-11-02T00:00:00Z"), utc(t, "2026-11-03T12:00:00Z")
	for _, c := range []struct {
		name string
		f    tasks.Filter
		keep func(tasks.Task) bool
	}{
		{"all", tasks.Filter{Status: tasks.StatusAll, ByDue: true}, func(tasks.Task) bool { return true }},
		{"pending", tasks.Filter{Status: tasks.StatusPending, ByDue: true}, func(t tasks.Task) bool { return !t.Completed }},
		{"completed", tasks.Filter{Status: tasks.StatusCompleted, ByDue: true}, func(t tasks.Task) bool { return t.Completed }},
		{"high", tasks.Filter{Status: tasks.StatusAll, ByDue: true, Priority: tasks.PriorityHigh}, func(t tasks.Task) bool { return t.Priority == tasks.PriorityHigh }},
		{"range", tasks.Filter{Status: tasks.StatusAll, DueFrom: from, DueTo: to}, func(t tasks.Task) bool {
			return !t.Due.By().Before(from) && t.Due.By().Before(to)
		}},
		{"words", tasks.Filter{Status: tasks.StatusAll, ByDue: true, Query: "TASK 1"}, func(t tasks.Task) bool { return strings.Contains(t.Title, "1") }},
	} {
		want := sorted(c.keep)
		if len(want) < 3 {
			t.Fatalf("%s: only %v", c.name, want)
		}
		for _, limit := range []int{1, 7, len(want) - 1, len(want), 100} {
			if got := ids(listAll(t, s, user, c.f, limit)); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s, %d a page = %v\nwant %v", c.name, limit, got, want)
			}
		}
	}

	t.Run("changes between pages", func(t *testing.T) {
		f := tasks.Filter{Status: tasks.StatusPending, ByDue: true}
		first, err := s.ListTasksPage(ctx, user, f, 7, "")
		if err != nil || first.Next == "" {
			t.Fatalf("first page: %v, %v", first, err)
		}
		rest := sorted(func(t tasks.Task) bool { return !t.Completed })[7:]
		mustComplete(t, s, user, rest[0], nil)
		// Due before the cursor: not on a later page; after it: on one.
		mustCreateDue(t, s, user, "early", "2026-10-01", "UTC", "")
		late := mustCreateDue(t, s, user, "late", "2027-01-01", "UTC", "")
		var got []int64
		for cursor := first.Next; cursor != "" && len(got) < 100; {
			page, err := s.ListTasksPage(ctx, user, f, 7, cursor)
			if err != nil {
				t.Fatal(err)
			}
			got, cursor = append(got, ids(page.Items)...), page.Next
		}
		if want := append(slices.Clone(rest[1:]), late.ID); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("the later pages = %v, want %v", got, want)
		}
	})
}

// Overdue lists the open tasks whose due date has passed, soonest first:
// a time an hour ago, a day two days ago; not a task done, a time an hour
// from now, nor a day task of today in the user's zone, due until the
// day's end there.
func TestOverdue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, user := newTasks(t), storetest.UserID(t)
	svc := tasks.NewService(s)
	// A zone where midnight is at least an hour away, so that "today" is
	// today while the test runs.
	now := time.Now()
	zone := ""
	for _, z := range []string{"UTC", "Asia/Tokyo", "America/New_York"} {
		loc, err := tasks.LoadZone(z)
		if err != nil {
			t.Fatal(err)
		}
		if h := now.In(loc).Hour(); h >= 1 && h < 23 {
			zone = z
			break
		}
	}
	if _, err := svc.SaveSettings(ctx, user, tasks.Settings{TimeZone: zone}); err != nil {
		t.Fatal(err)
	}
	loc, _ := tasks.LoadZone(zone)
	day := func(days int) string { return now.In(loc).AddDate(0, 0, days).Format(tasks.DateLayout) }
	at := func(d time.Duration) string { return now.Add(d).UTC().Format(time.RFC3339) }
	twoDaysAgo := mustCreateDue(t, s, user, "two days ago", day(-2), zone, tasks.PriorityLow)
	hourAgo := mustCreateDue(t, s, user, "an hour ago", at(-time.Hour), zone, "")
	mustComplete(t, s, user, mustCreateDue(t, s, user, "done yesterday", day(-1), zone, "").ID, nil)
	mustCreateDue(t, s, user, "today", day(0), zone, tasks.PriorityHigh)
	mustCreateDue(t, s, user, "in an hour", at(time.Hour), zone, "")
	mustCreateDue(t, s, user, "no date", "", "", tasks.PriorityLow)
	yesterday := mustCreateDue(t, s, user, "yesterday", day(-1), zone, tasks.PriorityLow)
	startOfYesterday, _, err := tasks.ParseDueRange(day(-1), "", loc)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		f    tasks.Filter
		want []int64
	}{
		{tasks.Filter{Overdue: true}, []int64{twoDaysAgo.ID, yesterday.ID, hourAgo.ID}},
		{tasks.Filter{Overdue: true, Status: tasks.StatusPending}, []int64{twoDaysAgo.ID, yesterday.ID, hourAgo.ID}},
		{tasks.Filter{Overdue: true, Priority: tasks.PriorityLow}, []int64{twoDaysAgo.ID, yesterday.ID}},
		{tasks.Filter{Overdue: true, Query: "AGO"}, []int64{twoDaysAgo.ID, hourAgo.ID}},
		{tasks.Filter{Overdue: true, DueFrom: startOfYesterday}, []int64{yesterday.ID, hourAgo.ID}},
	} {
		for _, limit := range []int{1, 10} {
			list := listAllWith(t, func(cursor string) (tasks.Page[tasks.Task], error) {
				return svc.ListPage(ctx, user, c.f, limit, cursor)
			}, limit)
			for _, task := range list {
				if task.Completed || !task.Due.Overdue(time.Now()) {
					t.Errorf("%+v lists %s", c.f, showTask(task))
				}
			}
			if got := ids(list); fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("overdue %+v, %d a page = %v, want %v", c.f, limit, got, c.want)
			}
		}
	}
	if _, err := svc.ListPage(ctx, user, tasks.Filter{Overdue: true, Status: tasks.StatusCompleted}, 10, ""); !errors.Is(err, tasks.ErrInvalid) {
		t.Errorf("overdue and completed: %v, want invalid", err)
	}
}

// A cursor belongs to the listing that wrote it: a number-order cursor
// given to a due-ordered listing, a due cursor given to a number-ordered
// one, and any due cursor the store did not write are the client's
// mistake (tasks.ErrInvalid, naming the cursor), never a failed query.
func TestDueCursorsRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, user := newTasks(t), storetest.UserID(t)
	for i := range 5 {
		mustCreateDue(t, s, user, fmt.Sprint("task ", i), fmt.Sprintf("2026-11-0%d", 1+i), "UTC", "")
	}
	byNumber, err := s.ListTasksPage(ctx, user, tasks.Filter{Status: tasks.StatusAll}, 2, "")
	if err != nil || byNumber.Next == "" {
		t.Fatalf("by number: %+v, %v", byNumber, err)
	}
	byDue, err := s.ListTasksPage(ctx, user, tasks.Filter{Status: tasks.StatusAll, ByDue: true}, 2, "")
	if err != nil || byDue.Next == "" {
		t.Fatalf("by due: %+v, %v", byDue, err)
	}
	b64 := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	dated := []tasks.Filter{
		{Status: tasks.StatusAll, ByDue: true},
		{Status: tasks.StatusPending, Overdue: true, DueTo: time.Now()},
		{Status: tasks.StatusAll, DueFrom: time.Now()},
		{Status: tasks.StatusAll, ByDue: true, Priority: tasks.PriorityHigh, Query: "task"},
	}
	bad := []string{
		byNumber.Next, b64("t1"), "not-a-cursor", "MTcwMDAwMDAwMDAwMDAwMC4x",
		b64("d"), b64("d1777593600000000"), b64("d1777593600000000."), b64("d1777593600000000.0"),
		b64("d1777593600000000.-1"), b64("d01777593600000000.1"), b64("d+1777593600000000.1"), b64("d1777593600000000.1 "),
		b64("d1777593600000000.1.2"), b64("D1777593600000000.1"), b64("d-300000000000000000.1"), b64("d9223372036854775807.1"),
		b64("d99999999999999999999.1"), b64("d1777593600000000.99999999999999999999"), b64("d253402300800000000000.1"),
		b64(fmt.Sprintf("d%d.1", time.Date(1899, 12, 29, 23, 59, 59, 999999000, time.UTC).UnixMicro())), // before any due date
		b64(fmt.Sprintf("d%d.1", time.Date(10000, 1, 2, 0, 0, 0, 0, time.UTC).UnixMicro())),             // after any
		byDue.Next + "A", strings.TrimRight(byDue.Next, "A") + "B",
	}
	for _, f := range dated {
		for _, c := range bad {
			var fe *tasks.FieldError
			if _, err := s.ListTasksPage(ctx, user, f, 2, c); !errors.As(err, &fe) || fe.Field != "cursor" || !errors.Is(err, tasks.ErrInvalid) {
				t.Errorf("%+v after %q: %v, want invalid cursor", f, c, err)
			}
		}
		if _, err := s.ListTasksPage(ctx, user, f, 2, byDue.Next); err != nil {
			t.Errorf("%+v after a due cursor: %v", f, err)
		}
	}
	for _, f := range []tasks.Filter{{Status: tasks.StatusAll}, {Status: tasks.StatusPending, Query: "task"}, {Status: tasks.StatusAll, Priority: tasks.PriorityLow}} {
		var fe *tasks.FieldError
		if _, err := s.ListTasksPage(ctx, user, f, 2, byDue.Next); !errors.As(err, &fe) || fe.Field != "cursor" {
			t.Errorf("%+v after a due cursor: %v, want invalid cursor", f, err)
		}
	}
}

// The store reads back every cursor it writes, those of the earliest and
// the latest due dates the service takes included: a time of 1900-01-01
// in a zone ahead of UTC or written with the greatest offset Go reads
// (+24:59, due by 1899-12-30T23:01 in UTC), and 9998-12-31 in a zone
// behind UTC (due by 10000-01-01 in UTC).
func TestDueCursorsAtTheEndsOfTime(t *testing.T) {
	t.Parallel()
	s, user := newTasks(t), storetest.UserID(t)
	var want []tasks.Task
	for _, d := range []struct{ text, zone string }{
		{"9998-12-31", "Pacific/Pago_Pago"},
		{"1900-01-01T05:00:00+14:00", "UTC"},
		{"1900-01-01T00:00:00+24:59", "UTC"},
		{"9998-12-31T23:59:59-24:59", "UTC"},
		{"1900-01-01T05:00", "Asia/Tokyo"},
		{"1900-01-01", "Asia/Tokyo"},
		{"1900-01-01", "UTC"},
		{"2026-01-01", "UTC"},
		{"9998-12-31T23:59:59-12:00", "UTC"},
		{"9998-12-31", "UTC"},
		{"9998-12-31", "America/Los_Angeles"},
	} {
		want = append(want, mustCreateDue(t, s, user, d.zone+" "+d.text, d.text, d.zone, ""))
	}
	slices.SortFunc(want, func(a, b tasks.Task) int { return a.Due.By().Compare(b.Due.By()) })
	if first := want[0].Due.By(); !first.Equal(time.Date(1899, 12, 30, 23, 1, 0, 0, time.UTC)) {
		t.Fatalf("the first due date is by %v, want 1899-12-30T23:01Z", first)
	}
	for _, f := range []tasks.Filter{{Status: tasks.StatusAll, ByDue: true}, {Status: tasks.StatusPending, ByDue: true}} {
		for _, limit := range []int{1, 2} {
			if got := titles(listAll(t, s, user, f, limit)); fmt.Sprint(got) != fmt.Sprint(titles(want)) {
				t.Errorf("%d a page = %q, want %q", limit, got, titles(want))
			}
		}
	}
}

func ptr[T any](v T) *T { return &v }
