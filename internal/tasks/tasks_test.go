package tasks_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/taskchat/taskchat/internal/tasks"
)

// recorder is a Store that records what reached it, so the tests can show
// that invalid input never does and valid input arrives normalised.
type recorder struct {
	title, description string
	update             tasks.TaskUpdate
	filter             tasks.Filter
	calls              int
}

func (r *recorder) CreateTask(_ context.Context, _ string, t tasks.NewTask, _ *tasks.CallRecord) (tasks.Task, error) {
	r.calls++
	r.title, r.description = t.Title, t.Description
	return tasks.Task{Title: t.Title}, nil
}
func (r *recorder) ListTasks(context.Context, string, tasks.Status) ([]tasks.Task, error) {
	r.calls++
	return nil, nil
}
func (r *recorder) ListTasksPage(_ context.Context, _ string, f tasks.Filter, _ int, _ string) (tasks.Page[tasks.Task], error) {
	r.calls++
	r.filter = f
	return tasks.Page[tasks.Task]{}, nil
}
func (r *recorder) CompleteTask(context.Context, string, int64, *tasks.CallRecord) (tasks.Task, error) {
	r.calls++
	return tasks.Task{}, nil
}
func (r *recorder) DeleteTask(context.Context, string, int64, *tasks.CallRecord) (tasks.Task, error) {
	r.calls++
	return tasks.Task{}, nil
}
func (r *recorder) UpdateTask(_ context.Context, _ string, _ int64, u tasks.TaskUpdate, _ *tasks.CallRecord) (tasks.Task, error) {
	r.calls++
	r.update = u
	return tasks.Task{}, nil
}
func (r *recorder) RecordCall(context.Context, string, tasks.CallRecord, json.RawMessage, bool) error {
	r.calls++
	return nil
}
func (r *recorder) Settings(context.Context, string) (tasks.Settings, error) {
	return tasks.DefaultSettings(), nil
}
func (r *recorder) SaveSettings(_ context.Context, _ string, s tasks.Settings) (tasks.Settings, error) {
	return s, nil
}

func TestAddValidates(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, title, description string
		field                    string // "" when valid
	}{
		{"trimmed", "  Buy groceries\n", " milk ", ""},
		{"200 characters", strings.Repeat("é", 200), "", ""},
		{"empty", "", "", "title"},
		{"blank", " \t ", "", "title"},
		{"201 characters", strings.Repeat("é", 201), "", "title"},
		{"NUL", "a\x00", "", "title"},
		{"invalid UTF-8", "a\xff", "", "title"},
		{"accents and emoji", "Buy café au lait ☕", "", ""},
		{"200 emoji", strings.Repeat("☕", 200), "", ""},
		{"right-to-left marks", "קנה חלב\u200f (2)", "اشتر\u061c الحليب", ""},
		{"emoji joined and modified", "Cook 👩🏽‍🍳 🇫🇷 ❤️", "", ""},
		{"description of lines and tabs", "t", "milk\n\teggs\r\nbread", ""},
		{"ESC", "a\x1b[31mred", "", "title"},
		{"BEL", "a\a", "", "title"},
		{"DEL", "a\x7f", "", "title"},
		{"C1", "a\u009bb", "", "title"},
		{"NEL", "t", "a\u0085b", "description"},
		{"line feed in a title", "a\nb", "", "title"},
		{"line separator in a title", "a\u2028b", "", "title"},
		{"tab in a title", "a\tb", "", "title"},
		{"lone carriage return", "t", "a\rb", "description"},
		{"right-to-left override", "\u202egpj.exe", "", "title"},
		{"isolate in a description", "t", "a\u2066b", "description"},
		{"ESC in a description", "t", "a\x1b]8;;http://x\x1b\\", "description"},
		{"1000-character description", "t", strings.Repeat("d", 1000), ""},
		{"1001-character description", "t", strings.Repeat("d", 1001), "description"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := &recorder{}
			_, err := tasks.NewService(r).Add(context.Background(), "u", tasks.NewTask{Title: c.title, Description: c.description}, nil)
			if c.field == "" {
				if err != nil || r.title != strings.TrimSpace(c.title) || r.description != strings.TrimSpace(c.description) {
					t.Fatalf("err %v; stored %q/%q", err, r.title, r.description)
				}
				return
			}
			var fe *tasks.FieldError
			if !errors.As(err, &fe) || fe.Field != c.field || !errors.Is(err, tasks.ErrInvalid) || r.calls != 0 {
				t.Fatalf("err = %v (store called %d times), want invalid %s", err, r.calls, c.field)
			}
		})
	}
}

func TestParseStatus(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]tasks.Status{"": tasks.StatusAll, "all": tasks.StatusAll, " Pending ": tasks.StatusPending, "COMPLETED": tasks.StatusCompleted} {
		if got, err := tasks.ParseStatus(in); err != nil || got != want {
			t.Errorf("ParseStatus(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := tasks.ParseStatus("done"); !errors.Is(err, tasks.ErrInvalid) {
		t.Errorf("ParseStatus(done) = %v, want ErrInvalid", err)
	}
}

// A page of tasks is asked of the store only for a known status (empty
// meaning all), a storable query of at most MaxQueryLen characters and a
// limit of at least 1; the query arrives with its words set apart by single
// spaces.
func TestListPageValidates(t *testing.T) {
	t.Parallel()
	r := &recorder{}
	svc := tasks.NewService(r)
	for _, c := range []struct {
		status tasks.Status
		query  string
		limit  int
		field  string
	}{
		{"done", "", 10, "status"},
		{tasks.StatusPending, "", 0, "limit"},
		{tasks.StatusAll, "", -1, "limit"},
		{tasks.StatusAll, "", tasks.MaxTaskPage + 1, "limit"},
		{tasks.StatusAll, strings.Repeat("é", tasks.MaxQueryLen+1), 10, "query"},
		{tasks.StatusAll, "milk\x00", 10, "query"},
		{tasks.StatusAll, "\xff", 10, "query"},
		{tasks.StatusAll, "milk\x1b[2J", 10, "query"},
		{tasks.StatusAll, "one two three four five six seven eight nine ten eleven", 10, "query"},
	} {
		var fe *tasks.FieldError
		f := tasks.Filter{Status: c.status, Query: c.query}
		if _, err := svc.ListPage(context.Background(), "u", f, c.limit, ""); !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("ListPage(%+v, %d) = %v, want invalid %s", f, c.limit, err, c.field)
		}
	}
	if r.calls != 0 {
		t.Fatalf("%d refused listings reached the store", r.calls)
	}
	f := tasks.Filter{Query: " call\t  mom \n"}
	if _, err := svc.ListPage(context.Background(), "u", f, 1, ""); err != nil || r.filter != (tasks.Filter{Status: tasks.StatusAll, Query: "call mom"}) {
		t.Fatalf("ListPage(%+v) = %v, asked the store for %+v", f, err, r.filter)
	}
}

func TestUpdateNeedsAField(t *testing.T) {
	t.Parallel()
	r := &recorder{}
	svc := tasks.NewService(r)
	if _, err := svc.Update(context.Background(), "u", 1, tasks.TaskUpdate{}, nil); !errors.Is(err, tasks.ErrInvalid) {
		t.Fatalf("empty update: %v", err)
	}
	title := "  New "
	if _, err := svc.Update(context.Background(), "u", 1, tasks.TaskUpdate{Title: &title}, nil); err != nil || *r.update.Title != "New" || r.update.Description != nil {
		t.Fatalf("update = %v, %+v", err, r.update)
	}
	for _, id := range []int64{0, -3} {
		if _, err := svc.Complete(context.Background(), "u", id, nil); !errors.Is(err, tasks.ErrInvalid) {
			t.Errorf("Complete(%d) = %v, want ErrInvalid", id, err)
		}
	}
}

func TestErrorKinds(t *testing.T) {
	t.Parallel()
	err := tasks.NotFound("task", 42)
	if !errors.Is(err, tasks.ErrNotFound) || errors.Is(err, tasks.ErrInvalid) || err.Error() != "task 42 not found" {
		t.Fatalf("NotFound = %v", err)
	}
}

// Only an MCP client's calls are recorded on their own: a chat turn's are
// recorded with its reply, under its turn.
func TestRecordCallIsForMCPCalls(t *testing.T) {
	t.Parallel()
	r := &recorder{}
	svc := tasks.NewService(r)
	for _, source := range []tasks.CallSource{"", tasks.SourceChat, "browser"} {
		if err := svc.RecordCall(context.Background(), "u", tasks.CallRecord{Source: source, Tool: "list_tasks"}, nil, false); !errors.Is(err, tasks.ErrInvalid) {
			t.Errorf("RecordCall of a %q call = %v, want ErrInvalid", source, err)
		}
	}
	if r.calls != 0 {
		t.Fatalf("%d refused records reached the store", r.calls)
	}
	if err := svc.RecordCall(context.Background(), "u", tasks.CallRecord{Source: tasks.SourceMCP, Tool: "list_tasks"}, nil, false); err != nil || r.calls != 1 {
		t.Fatalf("RecordCall of an MCP call = %v (store called %d times)", err, r.calls)
	}
}

// A query's words are each matched once, and a word inside another is
// left out: every task holding the longer one holds it too.
func TestFilterWords(t *testing.T) {
	t.Parallel()
	for query, want := range map[string]string{
		"":                             "",
		"  dentist  ":                  "dentist",
		"call mom":                     "call mom",
		"Call call CALL":               "Call",
		"all call":                     "call",
		"e e e e e e e e e e e e q":    "e q",
		"dent DENTIST appointment app": "DENTIST appointment",
		"50% 5":                        "50%",
		"École école":                  "École",
	} {
		if got := strings.Join(tasks.Filter{Query: query}.Words(), " "); got != want {
			t.Errorf("Words(%q) = %q, want %q", query, got, want)
		}
	}
	// Eleven words of which ten matter are accepted.
	svc := tasks.NewService(&recorder{})
	if _, err := svc.ListPage(context.Background(), "u", tasks.Filter{Query: "one two three four five six seven eight nine ten TEN"}, 1, ""); err != nil {
		t.Fatalf("ten different words: %v", err)
	}
}
