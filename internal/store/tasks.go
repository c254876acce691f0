package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
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

const taskColumns = `id, user_id, title, description, completed, created_at, updated_at`

// CreateTask inserts a task for userID.
func (s *Tasks) CreateTask(ctx context.Context, userID, title, description string) (tasks.Task, error) {
	row := s.pool.QueryRow(ctx, `
		INSERT INTO tasks (user_id, title, description)
		VALUES ($1, $2, $3)
		RETURNING `+taskColumns, userID, title, description)
	return scanTask(row, 0)
}

// ListTasks returns userID's tasks matching status, in id order.
func (s *Tasks) ListTasks(ctx context.Context, userID string, status tasks.Status) ([]tasks.Task, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT `+taskColumns+`
		FROM tasks
		WHERE user_id = $1 AND ($2 = 'all' OR completed = ($2 = 'completed'))
		ORDER BY id`, userID, string(status))
	if err != nil {
		return nil, translate(err)
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (tasks.Task, error) { return scanTask(r, 0) })
	if err != nil {
		return nil, translate(err)
	}
	return list, nil
}

// CompleteTask marks userID's task id as completed.
func (s *Tasks) CompleteTask(ctx context.Context, userID string, id int64) (tasks.Task, error) {
	row := s.pool.QueryRow(ctx, `
		UPDATE tasks SET completed = true, updated_at = now()
		WHERE user_id = $1 AND id = $2
		RETURNING `+taskColumns, userID, id)
	return scanTask(row, id)
}

// DeleteTask removes userID's task id and returns it as it was.
func (s *Tasks) DeleteTask(ctx context.Context, userID string, id int64) (tasks.Task, error) {
	row := s.pool.QueryRow(ctx, `
		DELETE FROM tasks
		WHERE user_id = $1 AND id = $2
		RETURNING `+taskColumns, userID, id)
	return scanTask(row, id)
}

// UpdateTask changes the fields of u that are set on userID's task id.
func (s *Tasks) UpdateTask(ctx context.Context, userID string, id int64, u tasks.TaskUpdate) (tasks.Task, error) {
	row := s.pool.QueryRow(ctx, `
		UPDATE tasks
		SET title = COALESCE($3, title),
		    description = COALESCE($4, description),
		    updated_at = now()
		WHERE user_id = $1 AND id = $2
		RETURNING `+taskColumns, userID, id, u.Title, u.Description)
	return scanTask(row, id)
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
