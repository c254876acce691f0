// Package memstore keeps users' tasks in memory: a tasks.Store for tests
// that run the task tools, and the models that call them, many times over
// without a database (the offline model's evaluation runs its conversations
// on it in a few seconds).
//
// It answers as the PostgreSQL store (internal/store) does, and its tests
// hold it to that by running the same operations on both: each user's
// tasks numbered 1, 2, 3… and a number never given twice, not even after a
// delete or a refused add; the database's limits on a title, a description,
// a user id and a time zone's name; due dates as PostgreSQL keeps them (an
// instant to the microsecond) and priorities as it keeps them (by rank);
// listings in number order or in due-date order, a query's words matched
// in any case in the title or the description, a due-date range's bounds
// compared to the microsecond, and cursors written and refused as the
// PostgreSQL store writes and refuses them. What it does not keep is
// the audit of tool calls: it has no conversations, so a change made for a
// chat turn's call is refused as one whose turn no longer holds its
// conversation (tasks.ErrTurnEnded), and an outside client's call is
// carried out, its record not kept.
package memstore

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/taskchat/taskchat/internal/tasks"
)

// Tasks is every user's tasks, in memory. It implements tasks.Store and is
// safe for concurrent use. The zero value is not ready: use NewTasks.
type Tasks struct {
	mu       sync.Mutex
	users    map[string]*list
	settings map[string]tasks.Settings
	now      time.Time // the time of the latest change, so each is after the one before
}

// list is one user's tasks, in number order, and the last number given.
type list struct {
	last  int64
	tasks []tasks.Task
}

// NewTasks returns an empty store.
func NewTasks() *Tasks {
	return &Tasks{users: map[string]*list{}, settings: map[string]tasks.Settings{}}
}

var _ tasks.Store = (*Tasks)(nil)

// The database's limits on a task (migration 000001), which the PostgreSQL
// store answers as tasks.ErrInvalid when a caller skips the service.
const (
	maxUserIDLen = 255
	maxTitleLen  = 200
	maxDescLen   = 1000
	maxZoneLen   = 64 // user_settings.time_zone (migration 000019)
)

// CreateTask adds a task for userID with the user's next number. A task
// refused for its fields takes no number.
func (s *Tasks) CreateTask(ctx context.Context, userID string, nt tasks.NewTask, rec *tasks.CallRecord) (tasks.Task, error) {
	title, description := nt.Title, nt.Description
	if err := check(ctx, rec, userID, title, description); err != nil {
		return tasks.Task{}, err
	}
	if err := checkRow(0, userID, title, description); err != nil {
		return tasks.Task{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.users[userID]
	if l == nil {
		l = &list{}
		s.users[userID] = l
	}
	l.last++
	now := s.tick()
	t := tasks.Task{ID: l.last, UserID: userID, Title: title, Description: description, Due: stored(nt.Due), Priority: storedPriority(nt.Priority), CreatedAt: now, UpdatedAt: now}
	l.tasks = append(l.tasks, t)
	return t, nil
}

// ListTasksPage returns a page of userID's tasks that f picks, in number
// order or, when f.Dated, in due-date order: at most limit of them, after
// cursor. As in PostgreSQL, the cursor is the page's last number (and its
// due date's instant), so tasks changed between pages never make another
// show twice or go missing.
func (s *Tasks) ListTasksPage(ctx context.Context, userID string, f tasks.Filter, limit int, cursor string) (tasks.Page[tasks.Task], error) {
	var after int64
	var afterBy time.Time
	var err error
	if f.Dated() {
		afterBy, after, err = tasks.ParseDueCursor(cursor)
	} else {
		after, err = tasks.ParseTaskCursor(cursor)
	}
	if err != nil {
		return tasks.Page[tasks.Task]{}, err
	}
	words := f.Words()
	if err := check(ctx, nil, append([]string{userID}, words...)...); err != nil {
		return tasks.Page[tasks.Task]{}, err
	}
	if limit < 1 {
		return tasks.Page[tasks.Task]{}, tasks.Invalid("limit", "must be at least 1")
	}
	if f.Dated() {
		return s.listByDue(userID, f, words, limit, cursor != "", afterBy, after), nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var mine []tasks.Task
	if l := s.users[userID]; l != nil {
		mine = l.tasks
	}
	items := []tasks.Task{} // as pgx collects rows: empty, not nil
	for _, t := range mine {
		if t.ID <= after || !picks(f, words, t) {
			continue
		}
		if len(items) == limit {
			return tasks.Page[tasks.Task]{Items: items, Next: tasks.TaskCursor(items[limit-1].ID)}, nil
		}
		items = append(items, t)
	}
	return tasks.Page[tasks.Task]{Items: items}, nil
}

// picks reports whether t has the status and holds each of words, in any
// case, in its title or its description: PostgreSQL's ILIKE ALL on
// "title || ' ' || description". A word holds no space, so none matches
// across the two.
func picks(f tasks.Filter, words []string, t tasks.Task) bool {
	if f.Status == tasks.StatusPending && t.Completed || f.Status == tasks.StatusCompleted && !t.Completed {
		return false
	}
	if f.Priority != "" && t.Priority != f.Priority {
		return false
	}
	if f.Dated() {
		if t.Due == nil {
			return false
		}
		// The bounds as PostgreSQL compares with them, to the microsecond.
		by, from, to := t.Due.By(), f.DueFrom.Truncate(time.Microsecond), f.DueTo.Truncate(time.Microsecond)
		if !f.DueFrom.IsZero() && by.Before(from) || !f.DueTo.IsZero() && !by.Before(to) {
			return false
		}
	}
	text := strings.ToLower(t.Title + " " + t.Description)
	for _, w := range words {
		if !strings.Contains(text, strings.ToLower(w)) {
			return false
		}
	}
	return true
}

// CompleteTask marks userID's task id as completed; a completed one stays
// so, its update time moved on as PostgreSQL moves it.
func (s *Tasks) CompleteTask(ctx context.Context, userID string, id int64, rec *tasks.CallRecord) (tasks.Task, error) {
	return s.change(ctx, userID, id, rec, nil, func(t *tasks.Task) error {
		t.Completed = true
		return nil
	})
}

// DeleteTask removes userID's task id and returns it as it was. Its
// number is never given again.
func (s *Tasks) DeleteTask(ctx context.Context, userID string, id int64, rec *tasks.CallRecord) (tasks.Task, error) {
	if err := check(ctx, rec, userID); err != nil {
		return tasks.Task{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	l, i := s.find(userID, id)
	if i < 0 {
		return tasks.Task{}, tasks.NotFound("task", id)
	}
	t := l.tasks[i]
	l.tasks = slices.Delete(l.tasks, i, i+1)
	return t, nil
}

// UpdateTask changes the fields of u that are set on userID's task id.
func (s *Tasks) UpdateTask(ctx context.Context, userID string, id int64, u tasks.TaskUpdate, rec *tasks.CallRecord) (tasks.Task, error) {
	var texts []string
	for _, field := range []*string{u.Title, u.Description} {
		if field != nil {
			texts = append(texts, *field)
		}
	}
	return s.change(ctx, userID, id, rec, texts, func(t *tasks.Task) error {
		title, description := t.Title, t.Description
		if u.Title != nil {
			title = *u.Title
		}
		if u.Description != nil {
			description = *u.Description
		}
		if err := checkRow(id, userID, title, description); err != nil {
			return err
		}
		t.Title, t.Description = title, description
		if u.Due.Set {
			t.Due = stored(u.Due.Value)
		}
		if u.Priority.Set {
			t.Priority = ""
			if u.Priority.Value != nil {
				t.Priority = storedPriority(*u.Priority.Value)
			}
		}
		if u.Completed != nil {
			t.Completed = *u.Completed
		}
		return nil
	})
}

// Settings are userID's settings, the defaults until they set some.
func (s *Tasks) Settings(ctx context.Context, userID string) (tasks.Settings, error) {
	if err := check(ctx, nil, userID); err != nil {
		return tasks.Settings{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if set, ok := s.settings[userID]; ok {
		return set, nil
	}
	return tasks.DefaultSettings(), nil
}

// SaveSettings stores userID's settings, held to the database's checks
// on the lengths of a user id and a time zone's name (migration 000019).
func (s *Tasks) SaveSettings(ctx context.Context, userID string, set tasks.Settings) (tasks.Settings, error) {
	if err := check(ctx, nil, userID, set.TimeZone); err != nil {
		return tasks.Settings{}, err
	}
	if err := checkLengths([]column{{"user_id", userID, 1, maxUserIDLen}, {"time_zone", set.TimeZone, 1, maxZoneLen}}); err != nil {
		return tasks.Settings{}, fmt.Errorf("settings of %q: %w", userID, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	set.UpdatedAt = s.tick()
	s.settings[userID] = set
	return set, nil
}

// storedPriority is p as PostgreSQL keeps it, by its rank: a priority
// the service would have refused is none.
func storedPriority(p tasks.Priority) tasks.Priority { return tasks.PriorityOfRank(p.Rank()) }

// stored is d as PostgreSQL gives it back: its instant to the
// microsecond, in UTC.
func stored(d *tasks.Due) *tasks.Due {
	if d == nil {
		return nil
	}
	out := *d
	if d.At != nil {
		at := d.At.Truncate(time.Microsecond).UTC()
		out.At = &at
	}
	out.StoredBy, out.StoredText = d.By().Truncate(time.Microsecond), d.String()
	return &out
}

// listByDue is ListTasksPage in due-date order, by Due.By then number,
// after the task after due by afterBy when paged.
func (s *Tasks) listByDue(userID string, f tasks.Filter, words []string, limit int, paged bool, afterBy time.Time, after int64) tasks.Page[tasks.Task] {
	s.mu.Lock()
	var dated []tasks.Task
	if l := s.users[userID]; l != nil {
		for _, t := range l.tasks {
			if picks(f, words, t) {
				dated = append(dated, t)
			}
		}
	}
	s.mu.Unlock()
	key := func(t tasks.Task) (time.Time, int64) { return t.Due.By().Truncate(time.Microsecond), t.ID }
	slices.SortFunc(dated, func(a, b tasks.Task) int {
		ab, an := key(a)
		bb, bn := key(b)
		return cmp.Or(ab.Compare(bb), cmp.Compare(an, bn))
	})
	items := []tasks.Task{}
	for _, t := range dated {
		by, n := key(t)
		if paged && (by.Before(afterBy) || by.Equal(afterBy) && n <= after) {
			continue
		}
		if len(items) == limit {
			last := items[limit-1]
			lb, ln := key(last)
			return tasks.Page[tasks.Task]{Items: items, Next: tasks.DueCursor(lb, ln)}
		}
		items = append(items, t)
	}
	return tasks.Page[tasks.Task]{Items: items}
}

// RecordCall takes an outside client's call that changed no task, which
// this store does not keep, and refuses any other as PostgreSQL does.
func (s *Tasks) RecordCall(ctx context.Context, userID string, rec tasks.CallRecord, _ json.RawMessage, _ bool) error {
	if rec.Source != tasks.SourceMCP {
		return fmt.Errorf("record a %q call: %w", rec.Source, tasks.ErrInvalid)
	}
	return check(ctx, nil, userID)
}

// change applies edit to userID's task id, unless check refuses texts,
// the new values it is made with, or edit refuses the task it makes.
func (s *Tasks) change(ctx context.Context, userID string, id int64, rec *tasks.CallRecord, texts []string, edit func(*tasks.Task) error) (tasks.Task, error) {
	if err := check(ctx, rec, append(texts, userID)...); err != nil {
		return tasks.Task{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	l, i := s.find(userID, id)
	if i < 0 {
		return tasks.Task{}, tasks.NotFound("task", id)
	}
	t := l.tasks[i]
	if err := edit(&t); err != nil {
		return tasks.Task{}, err
	}
	t.UpdatedAt = s.tick()
	l.tasks[i] = t
	return t, nil
}

// find returns userID's list and the index of task id in it, -1 when the
// user has no such task; s.mu must be held.
func (s *Tasks) find(userID string, id int64) (*list, int) {
	l := s.users[userID]
	if l == nil {
		return nil, -1
	}
	i, ok := slices.BinarySearchFunc(l.tasks, id, func(t tasks.Task, id int64) int { return cmp.Compare(t.ID, id) })
	if !ok {
		return l, -1
	}
	return l, i
}

// tick returns the time of a change: now, as PostgreSQL keeps it (to the
// microsecond), and after the previous change's, as the times of
// PostgreSQL's transactions one after another are; s.mu must be held.
func (s *Tasks) tick() time.Time {
	now := time.Now().Truncate(time.Microsecond)
	if !now.After(s.now) {
		now = s.now.Add(time.Microsecond)
	}
	s.now = now
	return now
}

// check refuses a change before it looks at any task, in PostgreSQL's
// order: text it cannot hold is refused with the statement's parameters,
// and then a change made for a chat turn's call finds no conversation here
// for the turn to hold. A canceled context changes nothing, as a statement
// never sent changes nothing.
func check(ctx context.Context, rec *tasks.CallRecord, texts ...string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, s := range texts {
		if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
			return fmt.Errorf("%w: %q is not text PostgreSQL can hold", tasks.ErrInvalid, s)
		}
	}
	if rec != nil && rec.Source != tasks.SourceMCP {
		return tasks.ErrTurnEnded
	}
	return nil
}

// checkRow holds a task to the database's checks on the lengths, in
// characters, of its columns.
func checkRow(id int64, userID, title, description string) error {
	if err := checkLengths([]column{{"user_id", userID, 1, maxUserIDLen}, {"title", title, 1, maxTitleLen}, {"description", description, 0, maxDescLen}}); err != nil {
		return fmt.Errorf("task %d: %w", id, err)
	}
	return nil
}

// column is a text column's value and the lengths its check allows.
type column struct {
	name     string
	value    string
	min, max int
}

// checkLengths holds values to the database's checks on their lengths,
// in characters.
func checkLengths(columns []column) error {
	for _, c := range columns {
		if n := utf8.RuneCountInString(c.value); n < c.min || n > c.max {
			return fmt.Errorf("%w: %s of %d characters breaks its check (%d to %d)", tasks.ErrInvalid, c.name, n, c.min, c.max)
		}
	}
	return nil
}
