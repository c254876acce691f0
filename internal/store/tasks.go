package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
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

// taskColumns are a task as the domain sees it: its id is its number on its
// user's list (tasks.number); the table's own key, tasks.id, stays inside.
const taskColumns = `number, user_id, title, description, completed, created_at, updated_at`

// The statements that change one task. Each is the body of a change (see
// newChange), some after common table expressions of their own: $1 is the
// user, $2 (but for a new task) the task's number, and %s the condition
// under which the change may happen at all.
var (
	// A new task takes the next number from its user's counter in the same
	// statement. The counter's row is locked until the statement's
	// transaction ends, so tasks created at once by one user never share a
	// number; the guard sits on the bump, so a refused change spends none.
	createTask = newChange(3, tasks.StatusCreated, `
		n AS (
			INSERT INTO task_counters (user_id, last_number)
			SELECT $1, 1 WHERE %s
			ON CONFLICT (user_id) DO UPDATE SET last_number = task_counters.last_number + 1
			RETURNING last_number
		)`, `
		INSERT INTO tasks (user_id, number, title, description)
		SELECT $1, n.last_number, $2, $3 FROM n
		RETURNING `+taskColumns)
	completeTask = newChange(2, tasks.StatusDone, "", `
		UPDATE tasks SET completed = true, updated_at = now()
		WHERE user_id = $1 AND number = $2 AND %s
		RETURNING `+taskColumns)
	deleteTask = newChange(2, tasks.StatusDeleted, "", `
		DELETE FROM tasks
		WHERE user_id = $1 AND number = $2 AND %s
		RETURNING `+taskColumns)
	updateTask = newChange(4, tasks.StatusUpdated, "", `
		UPDATE tasks
		SET title = COALESCE($3, title),
		    description = COALESCE($4, description),
		    updated_at = now()
		WHERE user_id = $1 AND number = $2 AND %s
		RETURNING `+taskColumns)
)

// CreateTask inserts a task for userID.
func (s *Tasks) CreateTask(ctx context.Context, userID, title, description string, rec *tasks.CallRecord) (tasks.Task, error) {
	return s.change(ctx, createTask, userID, 0, rec, title, description)
}

// listTasksPage builds the statement that reads a page of the tasks of
// status whose title or description holds every one of words, in number
// order after the number $2 (0 for the first page), at
// most $3 of them. Each reads from an index that holds the page's tasks in
// that order: (user_id, number) for all of a user's tasks, (user_id,
// completed, number) of migration 000012 for the pending or the completed
// ones. So a page reads about a page of index entries, custom plan or
// generic, wherever it is in the list and however few of the user's tasks
// match (TestTaskPagesReadOnlyThemselves). One statement with the status
// as "$4 = 'all' OR completed = …" would read, for a page of the few
// pending tasks of a long list, every completed task in between. A query's
// words are matched against each task the index yields, so a page of a
// rare word reads the user's tasks up to its last match: a user's list,
// not the table — under planFromIndexes, without which the planner,
// believing the words rare, reads the whole table and sorts it.
func listTasksPage(userID string, status tasks.Status, words []string, after int64, limit int) (string, []any) {
	var sql strings.Builder
	sql.WriteString(`
		SELECT ` + taskColumns + `
		FROM tasks
		WHERE user_id = $1 AND number > $2`)
	args := []any{userID, after, limit}
	if status != tasks.StatusAll {
		args = append(args, status == tasks.StatusCompleted)
		fmt.Fprintf(&sql, " AND completed = $%d", len(args))
	}
	if len(words) > 0 {
		patterns := make([]string, len(words))
		for i, w := range words {
			patterns[i] = "%" + likeEscaper.Replace(w) + "%"
		}
		args = append(args, patterns)
		// A word holds no space, so none matches across the two fields.
		fmt.Fprintf(&sql, " AND title || ' ' || description ILIKE ALL ($%d)", len(args))
	}
	sql.WriteString(`
		ORDER BY number
		LIMIT $3`)
	return sql.String(), args
}

// likeEscaper makes a word match itself in a LIKE pattern: LIKE's escape
// character is the backslash.
var likeEscaper = strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`)

// ListTasksPage returns a page of userID's tasks that f picks, in number
// order: at most limit of them, after cursor, which is opaque to callers.
// A cursor marks a position in the list (the last task's number), so tasks
// added, completed or deleted while a client pages never make another task
// show twice or not at all.
func (s *Tasks) ListTasksPage(ctx context.Context, userID string, f tasks.Filter, limit int, cursor string) (tasks.Page[tasks.Task], error) {
	after, err := decodeTaskCursor(cursor)
	if err != nil {
		return tasks.Page[tasks.Task]{}, err
	}
	words := f.Words()
	sql, args := listTasksPage(userID, f.Status, words, after, limit+1)
	b := &pgx.Batch{}
	if len(words) > 0 {
		planFromIndexes(b)
	}
	var list []tasks.Task
	b.Queue(sql, args...).Query(func(rows pgx.Rows) (err error) {
		list, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (tasks.Task, error) { return scanTask(r, 0) })
		return err
	})
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return tasks.Page[tasks.Task]{}, translate(err)
	}
	page := tasks.Page[tasks.Task]{Items: list}
	if len(list) > limit {
		page.Items = list[:limit]
		page.Next = encodeTaskCursor(page.Items[limit-1].ID)
	}
	return page, nil
}

// CompleteTask marks userID's task id as completed.
func (s *Tasks) CompleteTask(ctx context.Context, userID string, id int64, rec *tasks.CallRecord) (tasks.Task, error) {
	return s.change(ctx, completeTask, userID, id, rec, id)
}

// DeleteTask removes userID's task id and returns it as it was.
func (s *Tasks) DeleteTask(ctx context.Context, userID string, id int64, rec *tasks.CallRecord) (tasks.Task, error) {
	return s.change(ctx, deleteTask, userID, id, rec, id)
}

// UpdateTask changes the fields of u that are set on userID's task id.
func (s *Tasks) UpdateTask(ctx context.Context, userID string, id int64, u tasks.TaskUpdate, rec *tasks.CallRecord) (tasks.Task, error) {
	return s.change(ctx, updateTask, userID, id, rec, id, u.Title, u.Description)
}

// change is a statement that changes at most one task, in three forms:
// plain, recorded as a tool call of a chat turn, and recorded as a call of
// an outside MCP client. A recorded form is one statement, so one
// transaction and one round trip: it inserts the call's audit row (its
// result the changed row's tasks.ChangeResult, built in SQL as the tool
// builds it in Go) in the same breath as the change. A change without its record cannot exist.
//
// A chat turn's change is made only while the turn holds its conversation.
// The claim is read FOR SHARE: a claim taken over meanwhile, which takes
// the row FOR NO KEY UPDATE, either waits for this change (which its turn's
// recovery then sees) or makes this one find the claim gone. An MCP
// client's change has no turn to wait for, and no condition.
type change struct {
	plain, recorded, mcp string
	nargs                int
	status               string
}

// newChange builds both forms of a change from its statement, body, and
// the common table expressions the statement needs first, with (may be
// empty). The guard (%s) appears once, in with or in body.
func newChange(n int, status, with, body string) change {
	plain, ctes := body, ""
	if with != "" {
		plain, ctes = "WITH "+with+body, with+","
	}
	return change{
		plain: fmt.Sprintf(plain, "true"),
		recorded: fmt.Sprintf(`
			WITH held AS (
				SELECT 1 FROM conversations
				WHERE id = $%[1]d AND user_id = $1 AND claim_token = $%[2]d::uuid AND claimed_until > now()
				FOR SHARE
			), `+strings.Replace(ctes+` t AS (`+body, "%s", "%[3]s", 1)+`
			), a AS (
				INSERT INTO tool_calls (conversation_id, turn_id, user_id, call_id, tool, arguments, result, is_error, round, seq, duration_ms)
				SELECT $%[1]d, $%[4]d, $1, $%[5]d, $%[6]d, $%[7]d::jsonb,
				       jsonb_build_object('task_id', t.number, 'status', $%[8]d::text, 'title', t.title),
				       false, $%[9]d, $%[10]d, $%[11]d
				FROM t
			)
			SELECT `+taskColumns+` FROM t`,
			n+1, n+2, "EXISTS (SELECT 1 FROM held)", n+3, n+4, n+5, n+6, n+7, n+8, n+9, n+10),
		mcp: `
			WITH ` + strings.Replace(ctes+` t AS (`+body, "%s", "true", 1) + fmt.Sprintf(`
			), a AS (
				INSERT INTO tool_calls (source, user_id, call_id, tool, arguments, result, is_error, round, seq, duration_ms)
				SELECT 'mcp', $1, $%[1]d, $%[2]d, $%[3]d::jsonb,
				       jsonb_build_object('task_id', t.number, 'status', $%[4]d::text, 'title', t.title),
				       false, 0, 0, $%[5]d
				FROM t
			)
			SELECT `+taskColumns+` FROM t`, n+1, n+2, n+3, n+4, n+5),
		nargs:  n,
		status: status,
	}
}

// change runs c for userID ($1) with args ($2 on); id is the task's
// number, 0 for a new one.
func (s *Tasks) change(ctx context.Context, c change, userID string, id int64, rec *tasks.CallRecord, args ...any) (tasks.Task, error) {
	args = append([]any{userID}, args...)
	switch {
	case rec == nil:
		return scanTask(s.pool.QueryRow(ctx, c.plain, args...), id)
	case rec.Source == tasks.SourceMCP:
		args = append(args, auditName(rec.CallID, "call"), auditName(rec.Tool, "unnamed"), jsonOr(rec.Arguments, "{}"),
			c.status, time.Since(rec.Started).Milliseconds())
		return scanTask(s.pool.QueryRow(ctx, c.mcp, args...), id)
	}
	args = append(args, rec.ConversationID, rec.ClaimToken, rec.TurnID, auditName(rec.CallID, "call"),
		auditName(rec.Tool, "unnamed"), string(rec.Arguments), c.status, rec.Round, rec.Seq,
		time.Since(rec.Started).Milliseconds())
	t, err := scanTask(s.pool.QueryRow(ctx, c.recorded, args...), id)
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

// whyUnchanged tells a missing task from a turn that no longer holds its
// conversation, after a recorded change changed nothing.
func (s *Tasks) whyUnchanged(ctx context.Context, userID string, id int64, rec *tasks.CallRecord) error {
	var held bool
	err := s.pool.QueryRow(ctx, `
		SELECT EXISTS (SELECT 1 FROM conversations
			WHERE id = $1 AND user_id = $2 AND claim_token = $3::uuid AND claimed_until > now())`,
		rec.ConversationID, userID, rec.ClaimToken).Scan(&held)
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
	err := row.Scan(&t.ID, &t.UserID, &t.Title, &t.Description, &t.Completed, &t.CreatedAt, &t.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return tasks.Task{}, tasks.NotFound("task", id)
	}
	if err != nil {
		return tasks.Task{}, fmt.Errorf("task %d: %w", id, translate(err))
	}
	return t, nil
}
