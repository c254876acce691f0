// Package memstore keeps users' tasks in memory: a tasks.Store for tests
// that run the task tools, and the models that call them, many times over
// without a database (the offline model's evaluation runs its conversations
// on it in a few seconds).
//
// It answers as the PostgreSQL store (internal/store) does, and its tests
// hold it to that by running the same operations on both: each user's
// tasks numbered 1, 2, 3… and a number never given twice, not even after a
// delete or a refused add; the database's limits on a title, a description
// and a user id; listings in number order, a query's words matched in any
// case in the title or the description, and cursors written and refused as
// the PostgreSQL store writes and refuses them. What it does not keep is
// the audit of tool calls: it has no conversations, so a change made for a
// chat turn's call is refused as one whose turn no longer holds its
// conversation (tasks.ErrTurnEnded), and an outside client's call is
// carried out, its record not kept.
package memstore

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/taskchat/taskchat/internal/tasks"
)

// Tasks is every user's tasks, in memory. It implements tasks.Store and is
// safe for concurrent use. The zero value is not ready: use NewTasks.
type Tasks struct {
	mu    sync.Mutex
	users map[string]*list
	now   time.Time // the time of the latest change, so each is after the one before
}

// list is one user's tasks, in number order, and the last number given.
type list struct {
	last  int64
	tasks []tasks.Task
}

// NewTasks returns an empty store.
func NewTasks() *Tasks {
	return &Tasks{users: map[string]*list{}}
}

var _ tasks.Store = (*Tasks)(nil)

// The database's limits on a task (migration 000001), which the PostgreSQL
// store answers as tasks.ErrInvalid when a caller skips the service.
const (
	maxUserIDLen = 255
	maxTitleLen  = 200
	maxDescLen   = 1000
)

// CreateTask adds a task for userID with the user's next number. A task
// refused for its fields takes no number.
func (s *Tasks) CreateTask(ctx context.Context, userID, title, description string, rec *tasks.CallRecord) (tasks.Task, error) {
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
	t := tasks.Task{ID: l.last, UserID: userID, Title: title, Description: description, CreatedAt: now, UpdatedAt: now}
	l.tasks = append(l.tasks, t)
	return t, nil
}

// ListTasksPage returns a page of userID's tasks that f picks, in number
// order: at most limit of them, after cursor. As in PostgreSQL, the cursor
// is the page's last number, so tasks changed between pages never make
// another show twice or go missing.
func (s *Tasks) ListTasksPage(ctx context.Context, userID string, f tasks.Filter, limit int, cursor string) (tasks.Page[tasks.Task], error) {
	after, err := decodeCursor(cursor)
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
	s.mu.Lock()
	defer s.mu.Unlock()
	var mine []tasks.Task
	if l := s.users[userID]; l != nil {
		mine = l.tasks
	}
	items := []tasks.Task{} // as pgx collects rows: empty, not nil
	for _, t := range mine {
		if t.ID <= after || !picks(f.Status, words, t) {
			continue
		}
		if len(items) == limit {
			return tasks.Page[tasks.Task]{Items: items, Next: encodeCursor(items[limit-1].ID)}, nil
		}
		items = append(items, t)
	}
	return tasks.Page[tasks.Task]{Items: items}, nil
}

// picks reports whether t has the status and holds each of words, in any
// case, in its title or its description: PostgreSQL's ILIKE ALL on
// "title || ' ' || description". A word holds no space, so none matches
// across the two.
func picks(status tasks.Status, words []string, t tasks.Task) bool {
	if status == tasks.StatusPending && t.Completed || status == tasks.StatusCompleted && !t.Completed {
		return false
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
		return nil
	})
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
	for _, c := range []struct {
		column   string
		value    string
		min, max int
	}{{"user_id", userID, 1, maxUserIDLen}, {"title", title, 1, maxTitleLen}, {"description", description, 0, maxDescLen}} {
		if n := utf8.RuneCountInString(c.value); n < c.min || n > c.max {
			return fmt.Errorf("task %d: %w: %s of %d characters breaks its check (%d to %d)", id, tasks.ErrInvalid, c.column, n, c.min, c.max)
		}
	}
	return nil
}

// encodeCursor writes the cursor of a page that ends at task number: the
// PostgreSQL store's, base64url of "t" and the number, so a client can
// never tell the two stores apart.
func encodeCursor(number int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte("t" + strconv.FormatInt(number, 10)))
}

// decodeCursor reads a cursor encodeCursor wrote: the number the page
// starts after, 0 for "" (the first page). Anything else is refused.
func decodeCursor(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return 0, errBadCursor()
	}
	key, ok := strings.CutPrefix(string(b), "t")
	n, err := strconv.ParseInt(key, 10, 64)
	if !ok || err != nil || n < 1 || encodeCursor(n) != s {
		return 0, errBadCursor()
	}
	return n, nil
}

func errBadCursor() error { return tasks.Invalid("cursor", "is not a cursor this service returned") }
