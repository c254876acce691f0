package tasks_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/taskchat/taskchat/internal/tasks"
)

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := tasks.LoadZone(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// A due date is read in the user's zone: a day stays that calendar day, a
// date and time with an offset keeps its instant, one without is the
// user's wall clock; the day of an instant is its day in the user's zone.
func TestParseDue(t *testing.T) {
	t.Parallel()
	paris := mustZone(t, "Europe/Paris")
	for _, c := range []struct {
		in, date, shown string
		at              time.Time // zero: a whole day
	}{
		{"2026-12-04", "2026-12-04", "2026-12-04", time.Time{}},
		{" 2026-12-04 ", "2026-12-04", "2026-12-04", time.Time{}},
		{"2026-12-04T17:00:00+01:00", "2026-12-04", "2026-12-04T17:00:00+01:00", time.Date(2026, 12, 4, 16, 0, 0, 0, time.UTC)},
		{"2026-12-04T17:00:00Z", "2026-12-04", "2026-12-04T18:00:00+01:00", time.Date(2026, 12, 4, 17, 0, 0, 0, time.UTC)},
		// 23:30 in New York is the next day in Paris.
		{"2026-12-04T23:30:00-05:00", "2026-12-05", "2026-12-05T05:30:00+01:00", time.Date(2026, 12, 5, 4, 30, 0, 0, time.UTC)},
		{"2026-12-04T17:00", "2026-12-04", "2026-12-04T17:00:00+01:00", time.Date(2026, 12, 4, 16, 0, 0, 0, time.UTC)},
		{"2026-07-04T17:00:30", "2026-07-04", "2026-07-04T17:00:30+02:00", time.Date(2026, 7, 4, 15, 0, 30, 0, time.UTC)},
	} {
		d, err := tasks.ParseDue(c.in, paris)
		if err != nil {
			t.Fatalf("ParseDue(%q): %v", c.in, err)
		}
		if d.Date != c.date || d.Zone != "Europe/Paris" || d.String() != c.shown || (d.At == nil) != c.at.IsZero() || d.At != nil && !d.At.Equal(c.at) {
			t.Errorf("ParseDue(%q) = %+v (%s), want day %s at %v shown %s", c.in, d, d, c.date, c.at, c.shown)
		}
	}
	for _, bad := range []string{"", "tomorrow", "2026-13-01", "2026-02-30", "04/12/2026", "2026-12-04T25:00", "1899-12-31", "9999-12-31", "2026-12-04T17:00:00+25:00"} {
		if _, err := tasks.ParseDue(bad, paris); !errors.Is(err, tasks.ErrInvalid) {
			t.Errorf("ParseDue(%q) = %v, want invalid", bad, err)
		}
	}
}

// By is a due date's last instant: a whole day ends at the last
// microsecond of that day in its zone, on a day of 23 hours as on one of
// 25; a timed one at its time. A task is overdue after it.
func TestDueByAcrossTimeChanges(t *testing.T) {
	t.Parallel()
	paris := mustZone(t, "Europe/Paris")
	for _, c := range []struct {
		day  string
		next time.Time // the start of the next day, in UTC
	}{
		{"2026-03-29", time.Date(2026, 3, 29, 22, 0, 0, 0, time.UTC)},  // 23 hours: clocks go forward
		{"2026-10-25", time.Date(2026, 10, 25, 23, 0, 0, 0, time.UTC)}, // 25 hours: clocks go back
		{"2026-12-04", time.Date(2026, 12, 4, 23, 0, 0, 0, time.UTC)},
	} {
		d, err := tasks.ParseDue(c.day, paris)
		if err != nil {
			t.Fatal(err)
		}
		if want := c.next.Add(-time.Microsecond); !d.By().Equal(want) {
			t.Errorf("%s is due by %s, want %s", c.day, d.By().UTC(), want)
		}
		if d.Overdue(c.next.Add(-time.Microsecond)) || !d.Overdue(c.next) {
			t.Errorf("%s: overdue at its last instant, or not once it has passed", c.day)
		}
	}
	// Where the clocks jump over midnight, a day is still that day, and
	// ends where the next one starts.
	for _, c := range []struct {
		zone, day string
		next      time.Time // the first instant of the next day, in UTC
	}{
		{"America/Havana", "2026-03-07", time.Date(2026, 3, 8, 5, 0, 0, 0, time.UTC)},   // the 8th starts at 01:00 CDT
		{"America/Havana", "2026-03-08", time.Date(2026, 3, 9, 4, 0, 0, 0, time.UTC)},   // a day of 23 hours
		{"Atlantic/Azores", "2026-03-29", time.Date(2026, 3, 30, 0, 0, 0, 0, time.UTC)}, // its 00:00 is 01:00
		{"America/Santiago", "2026-09-06", time.Date(2026, 9, 7, 3, 0, 0, 0, time.UTC)}, // starts at 01:00 -03
		{"Africa/Cairo", "2026-04-24", time.Date(2026, 4, 24, 21, 0, 0, 0, time.UTC)},   // the 25th starts at 00:00 EEST
	} {
		loc := mustZone(t, c.zone)
		d, err := tasks.ParseDue(c.day, loc)
		if err != nil || d.Date != c.day {
			t.Fatalf("%s in %s = %+v, %v: want the same day", c.day, c.zone, d, err)
		}
		if want := c.next.Add(-time.Microsecond); !d.By().Equal(want) {
			t.Errorf("%s in %s is due by %s, want %s", c.day, c.zone, d.By().UTC(), want)
		}
	}
	timed, _ := tasks.ParseDue("2026-12-04T17:00:00+01:00", paris)
	if at := time.Date(2026, 12, 4, 16, 0, 0, 0, time.UTC); !timed.By().Equal(at) || timed.Overdue(at) || !timed.Overdue(at.Add(time.Microsecond)) {
		t.Errorf("a timed due date is due by %s and overdue after it", timed.By())
	}
}

// A filter's day covers the whole day in the user's zone: due_after from
// its start, due_before through its end; instants as given.
func TestParseDueRange(t *testing.T) {
	t.Parallel()
	ny := mustZone(t, "America/New_York")
	from, to, err := tasks.ParseDueRange("2026-11-30", "2026-12-06", ny)
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2026, 11, 30, 5, 0, 0, 0, time.UTC); !from.Equal(want) {
		t.Errorf("from = %s, want %s", from.UTC(), want)
	}
	if want := time.Date(2026, 12, 7, 5, 0, 0, 0, time.UTC); !to.Equal(want) {
		t.Errorf("to = %s, want %s", to.UTC(), want)
	}
	// A week's tasks: a day task on Sunday is in, Monday's of the next week
	// is out, as is Sunday's last instant past the bound.
	in := func(s string) bool {
		d, err := tasks.ParseDue(s, ny)
		if err != nil {
			t.Fatal(err)
		}
		return !d.By().Before(from) && d.By().Before(to)
	}
	for s, want := range map[string]bool{
		"2026-11-30": true, "2026-12-06": true, "2026-12-07": false, "2026-11-29": false,
		"2026-11-30T00:00": true, "2026-12-06T23:59:59": true, "2026-12-07T00:00": false, "2026-11-29T23:59:59": false,
	} {
		if got := in(s); got != want {
			t.Errorf("due %s in the week: %v, want %v", s, got, want)
		}
	}
	at := "2026-12-01T12:00:00Z"
	from, to, err = tasks.ParseDueRange(at, "", ny)
	if want := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC); err != nil || !from.Equal(want) || !to.IsZero() {
		t.Errorf("due_after=%s: %s to %s (%v)", at, from, to, err)
	}
	for _, c := range [][2]string{{"2026-12-06", "2026-11-30"}, {"2026-12-01T12:00:00Z", "2026-12-01T12:00:00Z"}, {"soon", ""}, {"", "later"}} {
		if _, _, err := tasks.ParseDueRange(c[0], c[1], ny); !errors.Is(err, tasks.ErrInvalid) {
			t.Errorf("ParseDueRange(%q, %q) = %v, want invalid", c[0], c[1], err)
		}
	}
	var fe *tasks.FieldError
	if _, _, err := tasks.ParseDueRange("", "later", ny); !errors.As(err, &fe) || fe.Field != "due_before" {
		t.Errorf("a bad due_before is reported as %v", err)
	}
}

func TestParsePriority(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]tasks.Priority{"high": tasks.PriorityHigh, " Medium ": tasks.PriorityMedium, "LOW": tasks.PriorityLow} {
		if got, err := tasks.ParsePriority(in); err != nil || got != want {
			t.Errorf("ParsePriority(%q) = %q, %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "urgent", "1", "hi"} {
		if _, err := tasks.ParsePriority(bad); !errors.Is(err, tasks.ErrInvalid) {
			t.Errorf("ParsePriority(%q) = %v, want invalid", bad, err)
		}
	}
	for _, p := range tasks.Priorities {
		if tasks.PriorityOfRank(p.Rank()) != p {
			t.Errorf("%s does not come back from its rank %d", p, p.Rank())
		}
	}
}

// A time zone is a place's: a name the zone database holds for a place,
// never the server machine's own or the database's own files.
func TestValidSettings(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"Europe/Paris", " America/New_York ", "UTC", "Asia/Kolkata"} {
		if s, err := tasks.ValidSettings(tasks.Settings{TimeZone: ok}); err != nil || s.TimeZone == "" {
			t.Errorf("ValidSettings(%q) = %+v, %v", ok, s, err)
		}
	}
	for _, bad := range []string{"", "Mars/Olympus", "Local", "local", "localtime", "posixrules", "Factory", "right/Europe/Paris", "posix/Europe/Paris", "../etc/passwd", "CET", "WET", "/etc/localtime", "Europe/" + string(make([]byte, 64))} {
		if _, err := tasks.ValidSettings(tasks.Settings{TimeZone: bad}); !errors.Is(err, tasks.ErrInvalid) {
			t.Errorf("ValidSettings(%q) = %v, want invalid", bad, err)
		}
	}
}

// The service's rules on a listing and an update, before the store.
func TestServiceDueRules(t *testing.T) {
	t.Parallel()
	r := &recorder{}
	svc := tasks.NewService(r)
	ctx := context.Background()
	if _, err := svc.ListPage(ctx, "u", tasks.Filter{Status: tasks.StatusCompleted, Overdue: true}, 10, ""); !errors.Is(err, tasks.ErrInvalid) {
		t.Errorf("an overdue listing of completed tasks = %v, want invalid", err)
	}
	before := time.Now()
	if _, err := svc.ListPage(ctx, "u", tasks.Filter{Overdue: true}, 10, ""); err != nil {
		t.Fatal(err)
	}
	if r.filter.Status != tasks.StatusPending || r.filter.DueTo.Before(before) || r.filter.DueTo.After(time.Now()) || !r.filter.Dated() {
		t.Errorf("an overdue listing asked the store for %+v, want pending tasks due before now", r.filter)
	}
	later := time.Now().Add(time.Hour)
	if _, err := svc.ListPage(ctx, "u", tasks.Filter{Overdue: true, DueTo: later}, 10, ""); err != nil || r.filter.DueTo.After(time.Now()) {
		t.Errorf("an overdue listing bounded later than now asked for tasks due before %s", r.filter.DueTo)
	}
	if _, err := svc.ListPage(ctx, "u", tasks.Filter{Priority: "urgent"}, 10, ""); !errors.Is(err, tasks.ErrInvalid) {
		t.Errorf("priority urgent = %v, want invalid", err)
	}
	if _, err := svc.Update(ctx, "u", 1, tasks.TaskUpdate{}, nil); !errors.Is(err, tasks.ErrInvalid) {
		t.Errorf("an empty update = %v, want invalid", err)
	}
	reopen := false
	if _, err := svc.Update(ctx, "u", 1, tasks.TaskUpdate{Completed: &reopen}, nil); err != nil || r.update.Completed == nil || *r.update.Completed {
		t.Errorf("a reopening reached the store as %+v (%v)", r.update, err)
	}
	if _, err := svc.Update(ctx, "u", 1, tasks.TaskUpdate{Priority: tasks.SetTo[tasks.Priority]("HIGH")}, nil); err != nil || *r.update.Priority.Value != tasks.PriorityHigh {
		t.Errorf("priority HIGH reached the store as %+v (%v)", r.update.Priority, err)
	}
	if _, err := svc.Update(ctx, "u", 1, tasks.TaskUpdate{Priority: tasks.Clear[tasks.Priority]()}, nil); err != nil || !r.update.Priority.Set || r.update.Priority.Value != nil {
		t.Errorf("clearing the priority reached the store as %+v (%v)", r.update.Priority, err)
	}
	if _, err := svc.Add(ctx, "u", tasks.NewTask{Title: "x", Priority: "whenever"}, nil); !errors.Is(err, tasks.ErrInvalid) {
		t.Errorf("add with priority whenever = %v, want invalid", err)
	}
}
