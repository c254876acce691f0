package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/taskchat/taskchat/internal/tasks"
)

// Tasks is the tasks table. It implements tasks.Store.
type Tasks struct {
	pool *pgxpool.Pool
}

// NewTasks returns the tasks table on pool.
func NewTasks(pool *pgxpool.Pool) *Tasks {
	return &Tasks{pool: pool}
}

var _ tasks.Store = (*Tasks)(nil)

// CreateTask inserts a task for userID.
func (s *Tasks) CreateTask(ctx context.Context, userID string, t tasks.NewTask, rec *tasks.CallRecord) (tasks.Task, error) {
	due := dueArgs(t.Due)
	return s.change(ctx, stmt.CreateTask, tasks.StatusCreated, userID, 0, rec, t.Title, t.Description, due[0], due[1], due[2], due[3], due[4], rank(t.Priority))
}

// dueArgs are a due date's columns (see sql/tasks.sql): due_on, due_at,
// due_zone, due_by and due_text; all NULL for none.
func dueArgs(d *tasks.Due) [5]any {
	if d == nil {
		return [5]any{}
	}
	return [5]any{d.Date, d.At, d.Zone, d.By(), d.String()}
}

// rank is a priority as the store keeps it, NULL for none.
func rank(p tasks.Priority) any {
	if r := p.Rank(); r > 0 {
		return int16(r)
	}
	return nil
}

// listTasksPage is the statement that reads a page of the tasks f picks,
// and its arguments after the user, the number the page starts after and
// its size: in number order, one statement for each pair of status and
// query filters (see sql/tasks.sql, ListTasks), or one of a priority; in
// due-date order (f.Dated), ListTasksByDue from dueAfter, the cursor's
// due_by.
func listTasksPage(f tasks.Filter, words []string, dueAfter time.Time) (sql string, args []any) {
	var patterns []string
	if len(words) > 0 {
		patterns = make([]string, len(words))
		for i, w := range words {
			patterns[i] = "%" + likeEscaper.Replace(w) + "%"
		}
	}
	var completed *bool
	if f.Status != tasks.StatusAll {
		completed = ptr(f.Status == tasks.StatusCompleted)
	}
	switch {
	case f.Dated():
		from, to := pgtype.Timestamptz{InfinityModifier: pgtype.NegativeInfinity, Valid: true}, pgtype.Timestamptz{InfinityModifier: pgtype.Infinity, Valid: true}
		if !f.DueFrom.IsZero() {
			from = pgtype.Timestamptz{Time: f.DueFrom, Valid: true}
		}
		if !f.DueTo.IsZero() {
			to = pgtype.Timestamptz{Time: f.DueTo, Valid: true}
		}
		after := pgtype.Timestamptz{InfinityModifier: pgtype.NegativeInfinity, Valid: true}
		if !dueAfter.IsZero() {
			after = pgtype.Timestamptz{Time: dueAfter, Valid: true}
		}
		if f.Status == tasks.StatusPending {
			return stmt.ListTasksByDueOpen, []any{from, to, after, rank(f.Priority), patterns}
		}
		return stmt.ListTasksByDue, []any{from, to, after, completed, rank(f.Priority), patterns}
	case f.Priority != "":
		return stmt.ListTasksOfPriority, []any{rank(f.Priority), completed, patterns}
	}
	if completed != nil {
		args = append(args, *completed)
	}
	if len(words) > 0 {
		args = append(args, patterns)
	}
	status := f.Status
	switch {
	case status == tasks.StatusAll && len(words) == 0:
		return stmt.ListTasks, args
	case status == tasks.StatusAll:
		return stmt.ListTasksMatching, args
	case len(words) == 0:
		return stmt.ListTasksWithStatus, args
	}
	return stmt.ListTasksWithStatusMatching, args
}

// likeEscaper makes a word match itself in a LIKE pattern: LIKE's escape
// character is the backslash.
var likeEscaper = strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`)

// ListTasksPage returns a page of userID's tasks that f picks, in number
// order or, when f.Dated, due-date order: at most limit of them, after
// cursor, which is opaque to callers. A cursor marks a position in the
// list (the last task's number, and its due_by in due-date order), so
// tasks added, completed or deleted while a client pages never make
// another task show twice or not at all.
func (s *Tasks) ListTasksPage(ctx context.Context, userID string, f tasks.Filter, limit int, cursor string) (tasks.Page[tasks.Task], error) {
	if limit < 1 {
		return tasks.Page[tasks.Task]{}, tasks.Invalid("limit", "must be at least 1")
	}
	var after int64
	var dueAfter time.Time
	var err error
	if f.Dated() {
		dueAfter, after, err = tasks.ParseDueCursor(cursor)
	} else {
		after, err = tasks.ParseTaskCursor(cursor)
	}
	if err != nil {
		return tasks.Page[tasks.Task]{}, err
	}
	words := f.Words()
	sql, filters := listTasksPage(f, words, dueAfter)
	b := &pgx.Batch{}
	if len(words) > 0 {
		planFromIndexes(b)
	}
	var list []tasks.Task
	b.Queue(sql, append([]any{userID, after, limit + 1}, filters...)...).Query(func(rows pgx.Rows) (err error) {
		list, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (tasks.Task, error) { return scanTask(r, 0) })
		return err
	})
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return tasks.Page[tasks.Task]{}, translate(err)
	}
	page := tasks.Page[tasks.Task]{Items: list}
	if len(list) > limit {
		page.Items = list[:limit]
		last := page.Items[limit-1]
		if page.Next = tasks.TaskCursor(last.ID); f.Dated() {
			page.Next = tasks.DueCursor(last.Due.By(), last.ID) // the stored due_by the page is ordered by
		}
	}
	return page, nil
}

// CompleteTask marks userID's task id as completed.
func (s *Tasks) CompleteTask(ctx context.Context, userID string, id int64, rec *tasks.CallRecord) (tasks.Task, error) {
	return s.change(ctx, stmt.CompleteTask, tasks.StatusDone, userID, id, rec, id)
}

// DeleteTask removes userID's task id and returns it as it was.
func (s *Tasks) DeleteTask(ctx context.Context, userID string, id int64, rec *tasks.CallRecord) (tasks.Task, error) {
	return s.change(ctx, stmt.DeleteTask, tasks.StatusDeleted, userID, id, rec, id)
}

// UpdateTask changes the fields of u that are set on userID's task id.
func (s *Tasks) UpdateTask(ctx context.Context, userID string, id int64, u tasks.TaskUpdate, rec *tasks.CallRecord) (tasks.Task, error) {
	due := dueArgs(u.Due.Value)
	var priority any
	if u.Priority.Value != nil {
		priority = rank(*u.Priority.Value)
	}
	return s.change(ctx, stmt.UpdateTask, tasks.StatusUpdated, userID, id, rec, id, u.Title, u.Description,
		u.Due.Set, due[0], due[1], due[2], due[3], due[4], u.Priority.Set, priority, u.Completed)
}

// change runs sql, a statement that changes at most one task (see
// sql/tasks.sql), for userID ($1) with args ($2 on), and the call's record
// after them: rec's, or none. A recorded change writes its record in the
// same statement, so a change without its record cannot exist; status is
// the result's. id is the task's number, 0 for a new one.
func (s *Tasks) change(ctx context.Context, sql, status, userID string, id int64, rec *tasks.CallRecord, args ...any) (tasks.Task, error) {
	args = append(append([]any{userID}, args...), recordArgs(rec, status)...)
	t, err := scanTask(s.pool.QueryRow(ctx, sql, args...), id)
	if rec == nil || rec.Source == tasks.SourceMCP {
		return t, err
	}
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr) && pgErr.Code == "23503":
		// foreign_key_violation: the conversation was deleted meanwhile.
		return tasks.Task{}, tasks.ErrTurnEnded
	case errors.Is(err, tasks.ErrNotFound):
		return tasks.Task{}, s.whyUnchanged(ctx, userID, id, rec)
	}
	return t, err
}

// recordArgs are the parameters of a change's record (see sql/tasks.sql):
// all NULL without one; an MCP client's has no turn, and any other is a
// chat turn's.
func recordArgs(rec *tasks.CallRecord, status string) []any {
	ms := func() int64 { return time.Since(rec.Started).Milliseconds() }
	switch {
	case rec == nil:
		return make([]any, 11)
	case rec.Source == tasks.SourceMCP:
		return []any{string(tasks.SourceMCP), nil, nil, nil, auditName(rec.CallID, "call"), auditName(rec.Tool, "unnamed"),
			jsonOr(rec.Arguments, "{}"), status, 0, 0, ms()}
	}
	return []any{string(tasks.SourceChat), rec.ConversationID, rec.ClaimToken, rec.TurnID, auditName(rec.CallID, "call"),
		auditName(rec.Tool, "unnamed"), string(rec.Arguments), status, rec.Round, rec.Seq, ms()}
}

// whyUnchanged tells a missing task from a turn that no longer holds its
// conversation, after a recorded change changed nothing.
func (s *Tasks) whyUnchanged(ctx context.Context, userID string, id int64, rec *tasks.CallRecord) error {
	var held bool
	err := s.pool.QueryRow(ctx, stmt.TurnHoldsConversation, rec.ConversationID, userID, rec.ClaimToken).Scan(&held)
	switch {
	case err != nil:
		return translate(err)
	case !held:
		return tasks.ErrTurnEnded
	}
	return tasks.NotFound("task", id)
}

// scanTask reads one task; a missing row becomes tasks.NotFound("task", id).
func scanTask(row pgx.Row, id int64) (tasks.Task, error) {
	var t tasks.Task
	var dueOn, dueAt, dueBy *time.Time
	var dueZone, dueText *string
	var priority *int16
	err := row.Scan(&t.ID, &t.UserID, &t.Title, &t.Description, &t.Completed, &t.CreatedAt, &t.UpdatedAt, &dueOn, &dueAt, &dueZone, &dueBy, &dueText, &priority)
	if err == nil {
		if dueOn != nil && dueZone != nil && dueBy != nil && dueText != nil {
			t.Due = &tasks.Due{Date: dueOn.Format(tasks.DateLayout), At: dueAt, Zone: *dueZone, StoredBy: *dueBy, StoredText: *dueText}
		}
		if priority != nil {
			t.Priority = tasks.PriorityOfRank(int(*priority))
		}
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return tasks.Task{}, tasks.NotFound("task", id)
	}
	if err != nil {
		return tasks.Task{}, fmt.Errorf("task %d: %w", id, translate(err))
	}
	return t, nil
}
