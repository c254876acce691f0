// Package tasks is taskchat's domain: tasks, conversations and their
// messages, the rules they obey, and the error kinds every other package
// speaks. It imports only the standard library; the store, the MCP tools,
// the agent and the HTTP layer all depend on it, never the reverse.
package tasks

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Limits on task fields, shared by validation and the tool descriptions.
const (
	MaxTitleLen       = 200
	MaxDescriptionLen = 1000
	MaxQueryLen       = 200
	// MaxQueryWords bounds the words of a query that matter (see
	// Filter.Words): each is matched against every task a page reads.
	MaxQueryWords = 10
	// MaxTaskPage is the most tasks a page of a listing holds: about 1.4
	// MB of JSON at the 1.35 KB a task of a review's list of 20,000 took,
	// 7.5 MB at worst (a 200-character title and a 1,000-character
	// description, every character escaped as \uXXXX), the same order as
	// the most a page of messages holds. A client that reads a long list
	// whole (the chat page, the offline model) asks for this many.
	MaxTaskPage = 1000
)

// Task is one item on a user's todo list.
type Task struct {
	// ID is the task's number on its user's list: 1, 2, 3… for each user,
	// never reused for that user, so "task 3" means the same task to the
	// person, the model and the store, and says nothing about other users.
	ID          int64
	UserID      string
	Title       string
	Description string
	Completed   bool
	Due         *Due     // nil: no due date
	Priority    Priority // "": none
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// NewTask is a task to create, as its person described it.
type NewTask struct {
	Title       string
	Description string
	Due         *Due
	Priority    Priority
}

// Status filters a task listing.
type Status string

// The statuses a listing can be filtered by.
const (
	StatusAll       Status = "all"
	StatusPending   Status = "pending"
	StatusCompleted Status = "completed"
)

// ParseStatus turns a filter as a person or model writes it into a Status.
// The empty string means all tasks.
func ParseStatus(s string) (Status, error) {
	switch st := Status(strings.ToLower(strings.TrimSpace(s))); st {
	case "":
		return StatusAll, nil
	case StatusAll, StatusPending, StatusCompleted:
		return st, nil
	}
	return "", Invalid("status", `must be one of "all", "pending" or "completed"`)
}

// Filter picks the tasks a listing holds.
type Filter struct {
	Status Status
	// Query holds words that must each appear, in any case, in a task's
	// title or description: "dentist", "call mom". Empty, every task
	// matches.
	Query string
	// Priority, when set, is the only priority listed.
	Priority Priority
	// DueFrom and DueTo, when set, bound the instants a listed task's
	// Due.By lies in: from DueFrom, up to but not including DueTo (see
	// ParseDueRange). Either one lists only tasks with a due date.
	DueFrom, DueTo time.Time
	// Overdue lists only the open tasks whose due date has passed.
	Overdue bool
	// ByDue orders the listing by due date (Due.By, then number), and
	// lists only tasks with one; otherwise it is in number order.
	ByDue bool
}

// Dated reports whether the listing reads only tasks with a due date, in
// due-date order: when it is filtered or ordered by due date.
func (f Filter) Dated() bool {
	return f.ByDue || f.Overdue || !f.DueFrom.IsZero() || !f.DueTo.IsZero()
}

// Words are the words of the filter's query that matter, each once: a
// word found inside another, in any case, is left out, since every task
// holding the longer one holds it too ("call", "Call", "all").
func (f Filter) Words() []string {
	words := strings.Fields(f.Query)
	lower := make([]string, len(words))
	for i, w := range words {
		lower[i] = strings.ToLower(w)
	}
	var out []string
	for i, w := range words {
		implied := false
		for j, other := range lower {
			// Of two equal words, the first stays.
			if j != i && strings.Contains(other, lower[i]) && (other != lower[i] || j < i) {
				implied = true
				break
			}
		}
		if !implied {
			out = append(out, w)
		}
	}
	return out
}

// TaskUpdate holds the fields of a task to change; nil (or an unset
// Field) leaves a field alone.
type TaskUpdate struct {
	Title       *string
	Description *string
	Due         Field[Due]
	Priority    Field[Priority]
	// Completed completes the task (true) or reopens it (false).
	Completed *bool
}

// empty reports whether u changes nothing.
func (u TaskUpdate) empty() bool {
	return u.Title == nil && u.Description == nil && !u.Due.Set && !u.Priority.Set && u.Completed == nil
}

// Store is what a task store implements. Every method is scoped to userID:
// another user's task behaves exactly like one that does not exist. A
// change made with a CallRecord is recorded as that tool call in the same
// transaction, and is made only while the call's turn holds its
// conversation (ErrTurnEnded otherwise); rec may be nil.
type Store interface {
	CreateTask(ctx context.Context, userID string, t NewTask, rec *CallRecord) (Task, error)
	// ListTasksPage returns a page of the tasks f picks, in number order
	// or, when f.Dated, due-date order: at most limit of them, after
	// cursor (the Next of the previous page of the same listing; "" for
	// the first).
	ListTasksPage(ctx context.Context, userID string, f Filter, limit int, cursor string) (Page[Task], error)
	CompleteTask(ctx context.Context, userID string, id int64, rec *CallRecord) (Task, error)
	DeleteTask(ctx context.Context, userID string, id int64, rec *CallRecord) (Task, error)
	UpdateTask(ctx context.Context, userID string, id int64, u TaskUpdate, rec *CallRecord) (Task, error)
	// RecordCall records a call of an outside MCP client that changed no
	// task (a listing, or a refused call) with the result the client was
	// told. A call that changed a task was recorded by its change.
	RecordCall(ctx context.Context, userID string, rec CallRecord, result json.RawMessage, isError bool) error
	SettingsStore
}

// Service applies the domain's rules before anything reaches the store.
type Service struct {
	store Store
}

// NewService returns a Service backed by store.
func NewService(store Store) *Service {
	return &Service{store: store}
}

// Add creates a task after validating and trimming its fields. Here and in
// the other methods that change a task, rec (may be nil) is the tool call
// the change is made for; see Store.
func (s *Service) Add(ctx context.Context, userID string, t NewTask, rec *CallRecord) (Task, error) {
	title, err := validTitle(t.Title)
	if err != nil {
		return Task{}, err
	}
	description, err := validDescription(t.Description)
	if err != nil {
		return Task{}, err
	}
	if t.Priority != "" {
		if t.Priority, err = ParsePriority(string(t.Priority)); err != nil {
			return Task{}, err
		}
	}
	t.Title, t.Description = title, description
	return s.store.CreateTask(ctx, userID, t, rec)
}

// Due reads a due date the user wrote (see ParseDue) in their time zone.
func (s *Service) Due(ctx context.Context, userID, text string) (Due, error) {
	loc, err := s.Zone(ctx, userID)
	if err != nil {
		return Due{}, err
	}
	return ParseDue(text, loc)
}

// DueRange reads the bounds of a due-date filter the user wrote (see
// ParseDueRange) in their time zone; it reads the zone only when needed.
func (s *Service) DueRange(ctx context.Context, userID, after, before string) (from, to time.Time, err error) {
	if after == "" && before == "" {
		return time.Time{}, time.Time{}, nil
	}
	loc, err := s.Zone(ctx, userID)
	if err != nil {
		return time.Time{}, time.Time{}, err
	}
	return ParseDueRange(after, before, loc)
}

// Zone is the user's time zone, UTC until they set one: the zone the
// dates they write ("2026-12-04", "2026-12-04T17:00") are read in.
func (s *Service) Zone(ctx context.Context, userID string) (*time.Location, error) {
	set, err := s.store.Settings(ctx, userID)
	if err != nil {
		return nil, err
	}
	return zone(set.TimeZone), nil
}

// Settings are the user's settings.
func (s *Service) Settings(ctx context.Context, userID string) (Settings, error) {
	return s.store.Settings(ctx, userID)
}

// SaveSettings checks and stores the user's settings.
func (s *Service) SaveSettings(ctx context.Context, userID string, set Settings) (Settings, error) {
	set, err := ValidSettings(set)
	if err != nil {
		return Settings{}, err
	}
	return s.store.SaveSettings(ctx, userID, set)
}

// ListPage returns a page of the user's tasks that f picks, oldest first
// or, when f.Dated, soonest due first: at most limit (1 or more) of them,
// after cursor, the Next of the previous page of the same listing ("" for
// the first). The query is trimmed, its words set apart by single spaces.
func (s *Service) ListPage(ctx context.Context, userID string, f Filter, limit int, cursor string) (Page[Task], error) {
	status, err := ParseStatus(string(f.Status))
	if err != nil {
		return Page[Task]{}, err
	}
	query, err := validText("query", f.Query, false, MaxQueryLen) // its words may be set apart by any space
	if err != nil {
		return Page[Task]{}, err
	}
	if n := len(Filter{Query: query}.Words()); n > MaxQueryWords {
		return Page[Task]{}, Invalid("query", fmt.Sprintf("must hold at most %d different words (got %d)", MaxQueryWords, n))
	}
	if limit < 1 || limit > MaxTaskPage {
		return Page[Task]{}, Invalid("limit", fmt.Sprintf("must be from 1 to %d", MaxTaskPage))
	}
	if f.Priority != "" {
		if f.Priority, err = ParsePriority(string(f.Priority)); err != nil {
			return Page[Task]{}, err
		}
	}
	if f.Overdue {
		if status == StatusCompleted {
			return Page[Task]{}, Invalid("overdue", "lists open tasks only: leave status out, or ask for pending")
		}
		status = StatusPending
		if now := time.Now(); f.DueTo.IsZero() || now.Before(f.DueTo) {
			f.DueTo = now
		}
	}
	f.Status, f.Query = status, strings.Join(strings.Fields(query), " ")
	return s.store.ListTasksPage(ctx, userID, f, limit, cursor)
}

// Complete marks a task as done. Completing a completed task is not an error.
func (s *Service) Complete(ctx context.Context, userID string, id int64, rec *CallRecord) (Task, error) {
	if err := validID(id); err != nil {
		return Task{}, err
	}
	return s.store.CompleteTask(ctx, userID, id, rec)
}

// Delete removes a task and returns it as it was.
func (s *Service) Delete(ctx context.Context, userID string, id int64, rec *CallRecord) (Task, error) {
	if err := validID(id); err != nil {
		return Task{}, err
	}
	return s.store.DeleteTask(ctx, userID, id, rec)
}

// Update changes a task's title, description or both; at least one is required.
func (s *Service) Update(ctx context.Context, userID string, id int64, u TaskUpdate, rec *CallRecord) (Task, error) {
	if err := validID(id); err != nil {
		return Task{}, err
	}
	if u.empty() {
		return Task{}, Invalid("title", "give at least one of title, description, due, priority or completed to change")
	}
	if u.Priority.Set && u.Priority.Value != nil {
		p, err := ParsePriority(string(*u.Priority.Value))
		if err != nil {
			return Task{}, err
		}
		u.Priority.Value = &p
	}
	if u.Title != nil {
		t, err := validTitle(*u.Title)
		if err != nil {
			return Task{}, err
		}
		u.Title = &t
	}
	if u.Description != nil {
		d, err := validDescription(*u.Description)
		if err != nil {
			return Task{}, err
		}
		u.Description = &d
	}
	return s.store.UpdateTask(ctx, userID, id, u, rec)
}

// RecordCall records a call of an outside MCP client (rec.Source must be
// SourceMCP) that changed no task; see Store. A chat turn's calls are
// recorded with its reply instead (TurnStore.FinishTurn).
func (s *Service) RecordCall(ctx context.Context, userID string, rec CallRecord, result json.RawMessage, isError bool) error {
	if rec.Source != SourceMCP {
		return Invalid("source", "only an MCP client's calls are recorded on their own")
	}
	return s.store.RecordCall(ctx, userID, rec, result, isError)
}

func validID(id int64) error {
	if id <= 0 {
		return Invalid("task_id", "must be a positive task id")
	}
	return nil
}

func validTitle(title string) (string, error) {
	return validString("title", title, true, MaxTitleLen)
}

func validDescription(d string) (string, error) {
	return validText("description", d, false, MaxDescriptionLen)
}

// validString trims s, a text of one line, and checks it against the rules
// every text field shares (see validText): no line break of any kind, and
// no tab, which would split it in two columns of a table it is copied to.
func validString(field, s string, required bool, maxLen int) (string, error) {
	s, err := validText(field, s, required, maxLen)
	if err == nil && strings.ContainsAny(s, "\t\n\r\u2028\u2029") {
		return "", Invalid(field, "must be one line, without tabs or line breaks")
	}
	return s, err
}

// validText trims s and checks it against the rules every text field
// shares: present if required, at most maxLen characters (code points), and
// text that shows as written wherever it is shown later. What a person may
// write is kept exactly, accents and emoji included; refused are invalid
// UTF-8, control characters (C0, DEL, C1) but for line feeds, tabs and the
// carriage return of a CRLF, which one-line fields refuse too, and the
// bidirectional embeddings, overrides and isolates that reorder what a
// terminal or a spreadsheet shows (the Trojan Source characters): the
// marks U+200E, U+200F and U+061C stay, as right-to-left writing uses them.
func validText(field, s string, required bool, maxLen int) (string, error) {
	s = strings.TrimSpace(s)
	switch n := utf8.RuneCountInString(s); {
	case n == 0 && required:
		return "", Invalid(field, "is required")
	case n > maxLen:
		return "", Invalid(field, fmt.Sprintf("must be at most %d characters (got %d)", maxLen, n))
	case !utf8.ValidString(s):
		return "", Invalid(field, "must be valid UTF-8")
	}
	for i, r := range s {
		switch {
		case r == '\n' || r == '\t' || r == '\r' && strings.HasPrefix(s[i+1:], "\n"):
		case unicode.IsControl(r):
			return "", Invalid(field, fmt.Sprintf("must not contain control characters (%U)", r))
		case r >= '\u202a' && r <= '\u202e' || r >= '\u2066' && r <= '\u2069':
			return "", Invalid(field, fmt.Sprintf("must not contain bidirectional overrides or isolates (%U)", r))
		}
	}
	return s, nil
}
