package http

// Due dates and priorities on the page, in a real browser: the task panel
// shows each task's due date as a person reads it (a day as that calendar
// day, never as midnight UTC), marks an overdue one, names a priority, and
// the page gives a user with no time zone the browser's.

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/taskchat/taskchat/internal/agent/offline"
	"github.com/taskchat/taskchat/internal/store"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/tasks"
)

func TestPageShowsDueDatesAndPriorities(t *testing.T) {
	t.Parallel()
	browser := mustBrowser(t)
	s := mustServer(t, offline.New())
	svc := tasks.NewService(store.NewTasks(storetest.Pool(t)))
	ctx := context.Background()
	user := storetest.UserID(t)
	tomorrow := time.Now().In(time.UTC).AddDate(0, 0, 1)
	add := func(title, due string, p tasks.Priority) {
		t.Helper()
		nt := tasks.NewTask{Title: title, Priority: p}
		if due != "" {
			d, err := svc.Due(ctx, user, due)
			if err != nil {
				t.Fatal(err)
			}
			nt.Due = &d
		}
		if _, err := svc.Add(ctx, user, nt, nil); err != nil {
			t.Fatal(err)
		}
	}
	add("Pay rent", tomorrow.Format(tasks.DateLayout), tasks.PriorityHigh)
	add("File taxes", "2020-04-15", "")
	add("Call mom", "", tasks.PriorityLow)
	add("Water plants", "", "")

	// The browser is in New York: the page gives the user, who has no
	// zone yet, that one.
	b := openTab(t, browser, s.URL+"/", 1280, 800)
	if _, err := chromedp.Call(b.ctx, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: "America/New_York"}); err != nil {
		t.Fatal(err)
	}
	b.signInWithToken(user)
	b.waitJS("the tasks", `document.querySelectorAll('#task-list .task').length === 4`)

	type row struct {
		Title, Meta string
		Overdue     bool
	}
	rows := js[[]row](b, `[...document.querySelectorAll('#task-list .task')].map(li => ({
		Title: li.querySelector('.task-title').textContent,
		Meta: li.querySelector('.task-meta')?.textContent ?? '',
		Overdue: li.classList.contains('overdue')}))`)
	// A day is shown as that day wherever the browser is: read with the
	// page's own formatting of a local calendar date.
	day := func(y int, m time.Month, d int) string {
		return js[string](b, `new Date(`+jsonInts(y, int(m)-1, d)+`).toLocaleDateString(undefined, {weekday: "short", month: "short", day: "numeric"})`)
	}
	want := []row{
		{"Pay rent", "due " + day(tomorrow.Year(), tomorrow.Month(), tomorrow.Day()) + "high priority", false},
		{"File taxes", "overdue: " + day(2020, time.April, 15), true},
		{"Call mom", "low priority", false},
		{"Water plants", "", false},
	}
	for i := range want {
		if i >= len(rows) || rows[i] != want[i] {
			t.Fatalf("the task panel shows %+v, want %+v", rows, want)
		}
	}

	b.waitJS("the user's zone", `document.getElementById('app').dataset.timeZone === 'America/New_York'`)
	if !poll(b.ctx, func() bool {
		r := s.do(t, call{method: "GET", path: "/api/" + user + "/settings", token: mustToken(t, user)})
		var set settingsJSON
		return r.status == 200 && json.Unmarshal(r.body, &set) == nil && set.TimeZone == "America/New_York"
	}) {
		t.Fatal("the page did not give the user the browser's time zone")
	}

	// A zone the user set stays, whatever browser they sign in from.
	other := storetest.UserID(t)
	if r := s.do(t, call{method: "PUT", path: "/api/" + other + "/settings", token: mustToken(t, other), body: `{"time_zone":"Europe/Paris"}`}); r.status != 200 {
		t.Fatalf("PUT settings = %d %s", r.status, r.body)
	}
	b2 := openTab(t, browser, s.URL+"/", 1280, 800)
	if _, err := chromedp.Call(b2.ctx, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: "Asia/Tokyo"}); err != nil {
		t.Fatal(err)
	}
	b2.signInWithToken(other)
	b2.waitJS("the user's zone", `document.getElementById('app').dataset.timeZone === 'Europe/Paris'`)
	r := s.do(t, call{method: "GET", path: "/api/" + other + "/settings", token: mustToken(t, other)})
	var set settingsJSON
	if err := json.Unmarshal(r.body, &set); err != nil || set.TimeZone != "Europe/Paris" {
		t.Fatalf("settings after signing in from Tokyo = %s, want Europe/Paris kept", r.body)
	}
}

// jsonInts is ints as a JavaScript argument list.
func jsonInts(ints ...int) string {
	b, _ := json.Marshal(ints)
	return string(b[1 : len(b)-1])
}
