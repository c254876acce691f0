package http

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/taskchat/taskchat/internal/agent/offline"
	"github.com/taskchat/taskchat/internal/store"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/tasks"
)

// dueTask is what these tests read of a task of GET /tasks.
type dueTask struct {
	ID        int64   `json:"id"`
	Title     string  `json:"title"`
	Completed bool    `json:"completed"`
	Due       *string `json:"due"`
	Overdue   bool    `json:"overdue"`
	Priority  *string `json:"priority"`
}

type duePage struct {
	Tasks      []dueTask `json:"tasks"`
	NextCursor *string   `json:"next_cursor"`
}

func (p duePage) ids() []int64 {
	ids := make([]int64, len(p.Tasks))
	for i, t := range p.Tasks {
		ids[i] = t.ID
	}
	return ids
}

// addDue adds a task for user through the service, its due date ("" for
// none) read in the user's time zone as add_task reads it, and answers its
// number.
func addDue(tb testing.TB, svc *tasks.Service, user, title, due string, p tasks.Priority) int64 {
	tb.Helper()
	ctx := context.Background()
	nt := tasks.NewTask{Title: title, Priority: p}
	if due != "" {
		d, err := svc.Due(ctx, user, due)
		if err != nil {
			tb.Fatalf("due %q: %v", due, err)
		}
		nt.Due = &d
	}
	task, err := svc.Add(ctx, user, nt, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return task.ID
}

// tasksPage GETs user's tasks with query ("?…" or ""), checks the answer
// against the contract and that it is a 200, and decodes it.
func (s *testServer) tasksPage(tb testing.TB, user, query string) duePage {
	tb.Helper()
	r := s.do(tb, call{method: "GET", path: "/api/" + url.PathEscape(user) + "/tasks" + query, token: mustToken(tb, user)})
	mustMatchSpec(tb, "GET", "/api/{user_id}/tasks", r.status, r.header, r.body)
	if r.status != 200 {
		tb.Fatalf("GET /tasks%s = %d %s", query, r.status, r.body)
	}
	var p duePage
	if err := json.Unmarshal(r.body, &p); err != nil {
		tb.Fatal(err)
	}
	return p
}

// putSettings PUTs body to user's settings and checks the answer against
// the contract.
func (s *testServer) putSettings(tb testing.TB, user, body string) reply {
	tb.Helper()
	r := s.do(tb, call{method: "PUT", path: "/api/" + url.PathEscape(user) + "/settings", token: mustToken(tb, user), body: body})
	mustMatchSpec(tb, "PUT", "/api/{user_id}/settings", r.status, r.header, r.body)
	return r
}

// getSettings GETs user's settings, checks the answer against the contract
// and that it is a 200.
func (s *testServer) getSettings(tb testing.TB, user string) reply {
	tb.Helper()
	r := s.do(tb, call{method: "GET", path: "/api/" + url.PathEscape(user) + "/settings", token: mustToken(tb, user)})
	mustMatchSpec(tb, "GET", "/api/{user_id}/settings", r.status, r.header, r.body)
	if r.status != 200 {
		tb.Fatalf("GET /settings = %d %s", r.status, r.body)
	}
	return r
}

// setZone sets user's time zone through the API.
func (s *testServer) setZone(tb testing.TB, user, zone string) {
	tb.Helper()
	if r := s.putSettings(tb, user, fmt.Sprintf(`{"time_zone":%q}`, zone)); r.status != 200 {
		tb.Fatalf("PUT /settings %s = %d %s", zone, r.status, r.body)
	}
}

func ptrTo(s string) *string { return &s }

func showNullable(s *string) string {
	if s == nil {
		return "null"
	}
	return *s
}

// GET /tasks shows each task's due date as it was meant, in the zone its
// user had when they gave it, whether it is overdue, and its priority; a
// task without them has null, and is not overdue.
func TestTasksShowDueAndPriority(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	s := mustServerOn(t, pool, offline.New())
	svc := tasks.NewService(store.NewTasks(pool))
	user := storetest.UserID(t)

	// In UTC, the default.
	addDue(t, svc, user, "Call mom", "", "")
	addDue(t, svc, user, "Pay rent", "2020-03-01", tasks.PriorityHigh)
	addDue(t, svc, user, "Book flights", "2999-12-04T17:00:00+01:00", tasks.PriorityLow)
	taxes := addDue(t, svc, user, "File taxes", "2020-04-15T09:00", tasks.PriorityMedium)
	if _, err := svc.Complete(context.Background(), user, taxes, nil); err != nil {
		t.Fatal(err)
	}
	// In Paris: a wall-clock time is Paris's, shown with the offset of its day.
	s.setZone(t, user, "Europe/Paris")
	addDue(t, svc, user, "Dentist", "2030-07-01T09:00", "")
	addDue(t, svc, user, "Visit", "2030-01-10T08:00:00Z", tasks.PriorityLow)
	addDue(t, svc, user, "Overdue here", "2020-05-01T12:00", "")

	want := []dueTask{
		{ID: 1, Title: "Call mom"},
		{ID: 2, Title: "Pay rent", Due: ptrTo("2020-03-01"), Overdue: true, Priority: ptrTo("high")},
		{ID: 3, Title: "Book flights", Due: ptrTo("2999-12-04T16:00:00Z"), Priority: ptrTo("low")},
		{ID: 4, Title: "File taxes", Completed: true, Due: ptrTo("2020-04-15T09:00:00Z"), Priority: ptrTo("medium")}, // past, but done
		{ID: 5, Title: "Dentist", Due: ptrTo("2030-07-01T09:00:00+02:00")},
		{ID: 6, Title: "Visit", Due: ptrTo("2030-01-10T09:00:00+01:00"), Priority: ptrTo("low")},
		{ID: 7, Title: "Overdue here", Due: ptrTo("2020-05-01T12:00:00+02:00"), Overdue: true},
	}
	got := s.tasksPage(t, user, "").Tasks
	if len(got) != len(want) {
		t.Fatalf("got %d tasks, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.ID != w.ID || g.Title != w.Title || g.Completed != w.Completed || showNullable(g.Due) != showNullable(w.Due) ||
			g.Overdue != w.Overdue || showNullable(g.Priority) != showNullable(w.Priority) {
			t.Errorf("task %d: due %s, overdue %v, priority %s, completed %v; want due %s, overdue %v, priority %s, completed %v",
				w.ID, showNullable(g.Due), g.Overdue, showNullable(g.Priority), g.Completed,
				showNullable(w.Due), w.Overdue, showNullable(w.Priority), w.Completed)
		}
	}

	// null is sent, not left out.
	r := s.do(t, call{method: "GET", path: "/api/" + url.PathEscape(user) + "/tasks?limit=1", token: mustToken(t, user)})
	if !strings.Contains(string(r.body), `"due":null,"overdue":false,"priority":null`) {
		t.Fatalf("a task without a due date or priority = %s", r.body)
	}

	// Clearing them shows null again; reopening a task done late makes it overdue.
	ctx := context.Background()
	if _, err := svc.Update(ctx, user, 2, tasks.TaskUpdate{Due: tasks.Clear[tasks.Due](), Priority: tasks.Clear[tasks.Priority]()}, nil); err != nil {
		t.Fatal(err)
	}
	reopen := false
	if _, err := svc.Update(ctx, user, taxes, tasks.TaskUpdate{Completed: &reopen}, nil); err != nil {
		t.Fatal(err)
	}
	got = s.tasksPage(t, user, "").Tasks
	if g := got[1]; g.ID != 2 || g.Due != nil || g.Overdue || g.Priority != nil {
		t.Errorf("task 2, its due date and priority cleared: %+v", g)
	}
	if g := got[3]; g.ID != taxes || g.Completed || !g.Overdue || showNullable(g.Due) != "2020-04-15T09:00:00Z" {
		t.Errorf("task %d, reopened: %+v (due %s)", taxes, g, showNullable(g.Due))
	}
}

// Each filter of GET /tasks picks the tasks it says, and a due-date one, or
// sort=due, lists them soonest due first: a task due on a day after those
// due at a time of it, ties by number.
func TestTasksDueFiltersAndSort(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	s := mustServerOn(t, pool, offline.New())
	svc := tasks.NewService(store.NewTasks(pool))
	user, other := storetest.UserID(t), storetest.UserID(t)
	for _, u := range []string{user, other} { // the other user's tasks, the same, never show
		addDue(t, svc, u, "A", "2020-01-10", tasks.PriorityHigh)                      // 1: overdue
		addDue(t, svc, u, "B", "2020-01-10T08:00:00Z", tasks.PriorityLow)             // 2: completed below
		addDue(t, svc, u, "C", "", tasks.PriorityHigh)                                // 3: no due date
		addDue(t, svc, u, "D", "2020-01-11", tasks.PriorityMedium)                    // 4: overdue
		addDue(t, svc, u, "E", "2999-06-01", tasks.PriorityHigh)                      // 5
		addDue(t, svc, u, "F", "2999-06-01T12:00:00Z", "")                            // 6
		addDue(t, svc, u, "G", "2020-01-09T23:59:59Z", "")                            // 7: overdue
		addDue(t, svc, u, "H", "2020-01-10T23:59:59.999999+00:00", tasks.PriorityLow) // 8: by the same instant as A
	}
	if _, err := svc.Complete(context.Background(), user, 2, nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		query string
		want  []int64
	}{
		{"", []int64{1, 2, 3, 4, 5, 6, 7, 8}},
		{"?sort=number", []int64{1, 2, 3, 4, 5, 6, 7, 8}},
		{"?priority=high", []int64{1, 3, 5}},
		{"?priority=%20High%20", []int64{1, 3, 5}},
		{"?priority=%20", []int64{1, 2, 3, 4, 5, 6, 7, 8}}, // white space alone: no such filter, as status
		{"?priority=low&status=pending", []int64{8}},
		{"?sort=due", []int64{7, 2, 1, 8, 4, 6, 5}},
		{"?sort=due&status=pending", []int64{7, 1, 8, 4, 6, 5}},
		{"?sort=due&status=completed", []int64{2}},
		{"?sort=due&priority=high", []int64{1, 5}},
		{"?sort=due&query=e", []int64{5}},
		{"?due_after=2020-01-10", []int64{2, 1, 8, 4, 6, 5}},                                                 // from the start of the 10th: not G
		{"?due_before=2020-01-10", []int64{7, 2, 1, 8}},                                                      // through the end of the 10th
		{"?due_after=2020-01-10&due_before=2020-01-10", []int64{2, 1, 8}},                                    // the 10th
		{"?due_after=2020-01-10T08:00:00Z", []int64{2, 1, 8, 4, 6, 5}},                                       // an instant: included
		{"?due_before=2020-01-10T08:00:00Z", []int64{7}},                                                     // an instant: excluded
		{"?due_after=2020-01-10T09:00:00%2B01:00&due_before=2020-01-10T09:00:00.000001%2B01:00", []int64{2}}, // one microsecond
		{"?due_after=2020-01-10T08:00&due_before=2020-01-11", []int64{2, 1, 8, 4}},                           // a wall clock of UTC, the user's zone
		{"?due_before=2020-01-11&priority=low", []int64{2, 8}},
		{"?due_after=2999-06-02", nil},
		{"?overdue=true", []int64{7, 1, 8, 4}},
		{"?overdue=true&status=pending", []int64{7, 1, 8, 4}},
		{"?overdue=true&status=all", []int64{7, 1, 8, 4}},
		{"?overdue=true&priority=medium", []int64{4}},
		{"?overdue=true&due_after=2020-01-10", []int64{1, 8, 4}},
		{"?overdue=false", []int64{1, 2, 3, 4, 5, 6, 7, 8}},
	} {
		t.Run(c.query, func(t *testing.T) {
			t.Parallel()
			p := s.tasksPage(t, user, c.query)
			if got := p.ids(); !slices.Equal(got, c.want) || p.NextCursor != nil {
				t.Fatalf("got %v (next_cursor %v), want %v", got, p.NextCursor, c.want)
			}
		})
	}
}

// A filter or sort of GET /tasks that cannot be read is a 400 in the error
// shape, naming the parameter, whatever else the query holds.
func TestTasksDueFiltersRefuseBadValues(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	s := mustServerOn(t, pool, offline.New())
	svc := tasks.NewService(store.NewTasks(pool))
	user := storetest.UserID(t)
	for i := range 3 {
		addDue(t, svc, user, fmt.Sprint("task ", i), fmt.Sprintf("2026-12-0%d", 4-i), "")
	}
	byNumber := s.tasksPage(t, user, "?limit=1").NextCursor
	byDue := s.tasksPage(t, user, "?sort=due&limit=1").NextCursor
	if byNumber == nil || byDue == nil {
		t.Fatal("a page of one of three tasks has no next_cursor")
	}
	for _, c := range []struct{ query, field string }{
		{"?priority=urgent", "priority"},
		{"?sort=due&priority=none", "priority"},
		{"?due_after=tomorrow", "due_after"},
		{"?due_after=2026-12-04T17:00:00+01:00", "due_after"}, // an unencoded +: a space
		{"?due_after=2026-02-30", "due_after"},
		{"?due_after=1899-12-31", "due_after"},
		{"?due_before=04/12/2026", "due_before"},
		{"?due_before=2026-12-04T25:00", "due_before"},
		{"?due_before=9999-01-01T00:00:00Z", "due_before"},
		{"?overdue=maybe", "overdue"},
		{"?overdue=1", "overdue"},
		{"?overdue=TRUE", "overdue"},
		{"?overdue=true&status=completed", "overdue"},
		{"?sort=title", "sort"},
		{"?sort=Due", "sort"},
		{"?sort=due&status=done", "status"},
		{"?due_after=2026-12-05&due_before=2026-12-04", "due_before"},
		{"?due_after=2026-12-04T12:00:00Z&due_before=2026-12-04T12:00:00Z", "due_before"},
		{"?due_after=2026-12-05&due_before=2026-12-04T23:59:59Z", "due_before"},
		{"?sort=due&cursor=" + url.QueryEscape(*byNumber), "cursor"}, // a cursor of the number order
		{"?due_after=2026-12-01&cursor=" + url.QueryEscape(*byNumber), "cursor"},
		{"?cursor=" + url.QueryEscape(*byDue), "cursor"}, // and of the due-date order
		{"?sort=number&cursor=" + url.QueryEscape(*byDue), "cursor"},
		{"?sort=due&cursor=ZC0zMDAwMDAwMDAwMDAwMDAwLjE", "cursor"}, // "d-3000000000000000.1": no task is due in 1874
	} {
		t.Run(c.query, func(t *testing.T) {
			t.Parallel()
			r := s.do(t, call{method: "GET", path: "/api/" + url.PathEscape(user) + "/tasks" + c.query, token: mustToken(t, user)})
			mustMatchSpec(t, "GET", "/api/{user_id}/tasks", r.status, r.header, r.body)
			mustProblem(t, r, 400, "invalid_request")
			mustNameField(t, r, c.field)
		})
	}
}

// mustNameField checks that the problem r names field, and only it.
func mustNameField(tb testing.TB, r reply, field string) {
	tb.Helper()
	var p struct {
		Errors []fieldIssue `json:"errors"`
	}
	if err := json.Unmarshal(r.body, &p); err != nil {
		tb.Fatal(err)
	}
	if len(p.Errors) != 1 || p.Errors[0].Field != field || p.Errors[0].Message == "" {
		tb.Fatalf("problem %s, want it to name %s", r.body, field)
	}
}

// A listing in due-date order is read a page at a time with its cursor:
// every task of it once, in order, however the pages fall, even when tasks
// share a due instant or are added while the client pages.
func TestTasksByDueArePaginated(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	s := mustServerOn(t, pool, offline.New())
	svc := tasks.NewService(store.NewTasks(pool))
	user := storetest.UserID(t)
	// 40 tasks, not in due order: a day of December 2026, every third at
	// 10:00 UTC that day; every seventh without a due date. Many share
	// their instant, which their numbers then order.
	type want struct {
		number int64
		by     time.Time
	}
	var all []want
	for i := range 40 {
		if i%7 == 6 {
			addDue(t, svc, user, fmt.Sprint("undated ", i), "", "")
			continue
		}
		day := 1 + i*7%10
		due := fmt.Sprintf("2026-12-%02d", day)
		by := time.Date(2026, 12, day+1, 0, 0, 0, 0, time.UTC).Add(-time.Microsecond)
		if i%3 == 0 {
			due += "T10:00:00Z"
			by = time.Date(2026, 12, day, 10, 0, 0, 0, time.UTC)
		}
		all = append(all, want{addDue(t, svc, user, fmt.Sprint("task ", i), due, ""), by})
	}
	slices.SortStableFunc(all, func(a, b want) int { return a.by.Compare(b.by) }) // numbers ascend already
	order := func(from, to time.Time) []int64 {
		var ids []int64
		for _, w := range all {
			if !w.by.Before(from) && (to.IsZero() || w.by.Before(to)) {
				ids = append(ids, w.number)
			}
		}
		return ids
	}
	dec := func(day int) time.Time { return time.Date(2026, 12, day, 0, 0, 0, 0, time.UTC) }

	read := func(t *testing.T, q url.Values, limit int) (ids []int64, pages int) {
		t.Helper()
		q.Set("limit", fmt.Sprint(limit))
		for {
			pages++
			p := s.tasksPage(t, user, "?"+q.Encode())
			if len(p.Tasks) > limit || pages > 100 {
				t.Fatalf("page %d holds %d tasks, more than %d", pages, len(p.Tasks), limit)
			}
			ids = append(ids, p.ids()...)
			if p.NextCursor == nil {
				return ids, pages
			}
			if len(p.Tasks) != limit {
				t.Fatalf("page %d holds %d tasks and is not the last", pages, len(p.Tasks))
			}
			q.Set("cursor", *p.NextCursor)
		}
	}
	for _, c := range []struct {
		name  string
		query url.Values
		want  []int64
	}{
		{"sort=due", url.Values{"sort": {"due"}}, order(time.Time{}, time.Time{})},
		{"from the 3rd through the 6th", url.Values{"due_after": {"2026-12-03"}, "due_before": {"2026-12-06"}}, order(dec(3), dec(7))},
		{"from 10:00 on the 5th", url.Values{"due_after": {"2026-12-05T10:00:00Z"}, "sort": {"due"}}, order(dec(5).Add(10*time.Hour), time.Time{})},
		{"overdue before the 4th, none", url.Values{"overdue": {"true"}, "due_before": {"2026-12-04"}}, nil},
	} {
		for _, limit := range []int{1, 3, 7, 1000} {
			t.Run(fmt.Sprintf("%s, limit %d", c.name, limit), func(t *testing.T) {
				t.Parallel()
				got, pages := read(t, maps.Clone(c.query), limit)
				if !slices.Equal(got, c.want) {
					t.Fatalf("%d pages gave %v, want %v", pages, got, c.want)
				}
				if want := max(1, (len(c.want)+limit-1)/limit); pages != want {
					t.Fatalf("%d pages, want %d", pages, want)
				}
			})
		}
	}

	t.Run("tasks added while paging", func(t *testing.T) {
		t.Parallel()
		user := storetest.UserID(t)
		for _, due := range []string{"2026-12-01", "2026-12-02", "2026-12-03", "2026-12-04"} {
			addDue(t, svc, user, "task", due, "")
		}
		first := s.tasksPage(t, user, "?sort=due&limit=2")
		if !slices.Equal(first.ids(), []int64{1, 2}) || first.NextCursor == nil {
			t.Fatalf("first page %v, next %v", first.ids(), first.NextCursor)
		}
		addDue(t, svc, user, "before the cursor", "2026-11-30", "") // 5: behind the client
		addDue(t, svc, user, "at the cursor", "2026-12-02", "")     // 6: after task 2, due as it is
		addDue(t, svc, user, "after it", "2026-12-10", "")          // 7
		var rest []int64
		for cursor, pages := first.NextCursor, 1; cursor != nil; pages++ {
			if pages > 10 {
				t.Fatalf("more than 10 pages of 7 tasks: %v…", rest)
			}
			p := s.tasksPage(t, user, "?sort=due&limit=2&cursor="+url.QueryEscape(*cursor))
			rest, cursor = append(rest, p.ids()...), p.NextCursor
		}
		if !slices.Equal(rest, []int64{6, 3, 4, 7}) {
			t.Fatalf("the pages after the first gave %v, want [6 3 4 7]", rest)
		}
	})
}

// A user's settings are UTC until they set a time zone; PUT sets it, GET
// reads it back, and a zone that is not one is refused without storing
// anything. One user's settings are not another's.
func TestSettings(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New())
	user, other := storetest.UserID(t), storetest.UserID(t)
	settingsOf := func(t *testing.T, r reply) (zone string, at *time.Time) {
		t.Helper()
		var set struct {
			TimeZone  string     `json:"time_zone"`
			UpdatedAt *time.Time `json:"updated_at"`
		}
		if err := json.Unmarshal(r.body, &set); err != nil {
			t.Fatal(err)
		}
		return set.TimeZone, set.UpdatedAt
	}

	never := []byte(`{"time_zone":"UTC","updated_at":null}` + "\n")
	if r := s.getSettings(t, user); !bytes.Equal(r.body, never) {
		t.Fatalf("settings never set = %s", r.body)
	}

	before := time.Now()
	r := s.putSettings(t, user, `{"time_zone":"Europe/Paris"}`)
	if r.status != 200 {
		t.Fatalf("PUT = %d %s", r.status, r.body)
	}
	zone, at := settingsOf(t, r)
	// The database's clock, not this one, sets updated_at: the same machine's.
	if zone != "Europe/Paris" || at == nil || at.Before(before.Add(-time.Minute)) || at.After(time.Now().Add(time.Minute)) || at.Location() != time.UTC {
		t.Fatalf("PUT answered %s", r.body)
	}
	paris := r.body
	if got := s.getSettings(t, user); !bytes.Equal(got.body, paris) {
		t.Fatalf("GET after PUT = %s, want %s", got.body, paris)
	}
	if got := s.getSettings(t, other); !bytes.Equal(got.body, never) {
		t.Fatalf("another user's settings = %s", got.body)
	}

	t.Run("refused", func(t *testing.T) {
		for _, c := range []struct{ name, body, field string }{
			{"an unknown zone", `{"time_zone":"Mars/Olympus"}`, "time_zone"},
			{"empty", `{"time_zone":""}`, "time_zone"},
			{"blank", `{"time_zone":"  "}`, "time_zone"},
			{"the machine's zone", `{"time_zone":"Local"}`, "time_zone"},
			{"the machine's zone, lower case", `{"time_zone":"local"}`, "time_zone"},
			{"another case", `{"time_zone":"europe/paris"}`, "time_zone"},
			{"a path out of the zone database", `{"time_zone":"Europe/../Europe/Paris"}`, "time_zone"},
			{"65 characters", fmt.Sprintf(`{"time_zone":%q}`, "Europe/"+strings.Repeat("x", 58)), "time_zone"},
			{"64 characters, no zone", fmt.Sprintf(`{"time_zone":%q}`, "Europe/"+strings.Repeat("x", 57)), "time_zone"},
			{"missing", `{}`, "time_zone"},
			{"null", `{"time_zone":null}`, "time_zone"},
			{"a number", `{"time_zone":65}`, "time_zone"},
			{"an unknown field", `{"time_zone":"UTC","locale":"fr"}`, "locale"},
			{"a field in another case", `{"Time_Zone":"UTC"}`, "Time_Zone"},
		} {
			t.Run(c.name, func(t *testing.T) {
				r := s.putSettings(t, user, c.body)
				mustProblem(t, r, 400, "invalid_request")
				mustNameField(t, r, c.field)
			})
		}
		for _, body := range []string{``, `"UTC"`, `{"time_zone":"UTC"}{}`} {
			mustProblem(t, s.putSettings(t, user, body), 400, "invalid_request")
		}
		r := s.putSettings(t, user, fmt.Sprintf(`{"time_zone":%q}`, strings.Repeat(" ", 4096)))
		mustProblem(t, r, 413, "payload_too_large")
		r = s.do(t, call{method: "PUT", path: "/api/" + url.PathEscape(user) + "/settings", token: mustToken(t, user),
			body: `{"time_zone":"UTC"}`, header: map[string][]string{"Content-Type": {"text/plain"}}})
		mustMatchSpec(t, "PUT", "/api/{user_id}/settings", r.status, r.header, r.body)
		mustProblem(t, r, 415, "unsupported_media_type")
		r = s.do(t, call{method: "PUT", path: "/api/" + url.PathEscape(other) + "/settings", token: mustToken(t, user), body: `{"time_zone":"UTC"}`})
		mustMatchSpec(t, "PUT", "/api/{user_id}/settings", r.status, r.header, r.body)
		mustProblem(t, r, 403, "forbidden")
		// Nothing was stored.
		if got := s.getSettings(t, user); !bytes.Equal(got.body, paris) {
			t.Fatalf("after the refused PUTs: %s, want %s", got.body, paris)
		}
		if got := s.getSettings(t, other); !bytes.Equal(got.body, never) {
			t.Fatalf("another user's settings = %s", got.body)
		}
	})

	t.Run("set again", func(t *testing.T) {
		r := s.putSettings(t, user, `{"time_zone":" America/New_York\n"}`) // kept trimmed
		if zone, again := settingsOf(t, r); r.status != 200 || zone != "America/New_York" || again == nil || again.Before(*at) {
			t.Fatalf("PUT again = %d %s (first at %s)", r.status, r.body, at)
		}
		s.setZone(t, other, "Asia/Tokyo")
		if zone, _ := settingsOf(t, s.getSettings(t, user)); zone != "America/New_York" {
			t.Fatalf("after another user set theirs, the zone is %s", zone)
		}
		if zone, _ := settingsOf(t, s.getSettings(t, other)); zone != "Asia/Tokyo" {
			t.Fatalf("the other user's zone is %s", zone)
		}
	})
}

// The days of due_after and due_before, and a time without an offset, are
// read in the user's time zone as it is when they are asked for, and in no
// other user's. A due date keeps the zone it was given in.
func TestDueFiltersReadTheUsersZone(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	s := mustServerOn(t, pool, offline.New())
	svc := tasks.NewService(store.NewTasks(pool))
	user, other := storetest.UserID(t), storetest.UserID(t)
	for _, u := range []string{user, other} { // in UTC, the default
		addDue(t, svc, u, "a", "2026-12-04T23:30:00+01:00", "") // 1: 22:30 UTC on the 4th, 23:30 in Paris
		addDue(t, svc, u, "b", "2026-12-05T00:30:00+01:00", "") // 2: 23:30 UTC on the 4th, the 5th in Paris
		addDue(t, svc, u, "c", "2026-12-04T23:30:00-05:00", "") // 3: 23:30 in New York, the 5th in UTC
		addDue(t, svc, u, "d", "2026-12-04T00:30:00+01:00", "") // 4: 23:30 UTC on the 3rd, the 4th in Paris
		addDue(t, svc, u, "e", "2026-12-04", "")                // 5: the 4th in UTC, through 23:59:59.999999 UTC
	}
	for _, c := range []struct {
		zone                  string // "": never set
		before, after, afterT []int64
	}{
		// due_before=2026-12-04: before the 5th starts in the zone; due_after: from the 4th's start;
		// afterT: due_after=2026-12-04T23:30, a wall clock of the zone.
		{"", []int64{4, 1, 2, 5}, []int64{1, 2, 5, 3}, []int64{2, 5, 3}},
		{"Europe/Paris", []int64{4, 1}, []int64{4, 1, 2, 5, 3}, []int64{1, 2, 5, 3}},
		{"America/New_York", []int64{4, 1, 2, 5, 3}, []int64{1, 2, 5, 3}, []int64{3}}, // c at 23:30 exactly: included
		{"UTC", []int64{4, 1, 2, 5}, []int64{1, 2, 5, 3}, []int64{2, 5, 3}},
	} {
		if c.zone != "" {
			s.setZone(t, user, c.zone)
		}
		for q, want := range map[string][]int64{
			"?due_before=2026-12-04": c.before, "?due_after=2026-12-04": c.after, "?due_after=2026-12-04T23:30": c.afterT,
		} {
			if got := s.tasksPage(t, user, q).ids(); !slices.Equal(got, want) {
				t.Errorf("in %q, %s listed %v, want %v", c.zone, q, got, want)
			}
			if got, utc := s.tasksPage(t, other, q).ids(), s.tasksPage(t, user, q).ids(); c.zone == "UTC" && !slices.Equal(got, utc) {
				t.Errorf("%s: the other user, in UTC, listed %v; the user, in UTC, %v", q, got, utc)
			}
		}
		if got := s.tasksPage(t, other, "?due_before=2026-12-04").ids(); !slices.Equal(got, []int64{4, 1, 2, 5}) {
			t.Errorf("with the user in %q, the other user's due_before=2026-12-04 listed %v, read in UTC [4 1 2 5]", c.zone, got)
		}
		// What was given stays as it was given, whatever the zone now.
		var dues []string
		for _, task := range s.tasksPage(t, user, "").Tasks {
			dues = append(dues, showNullable(task.Due))
		}
		if want := []string{"2026-12-04T22:30:00Z", "2026-12-04T23:30:00Z", "2026-12-05T04:30:00Z", "2026-12-03T23:30:00Z", "2026-12-04"}; !slices.Equal(dues, want) {
			t.Errorf("in %q, the due dates show as %v, want %v", c.zone, dues, want)
		}
	}
}
