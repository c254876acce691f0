package store

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/taskchat/taskchat/internal/tasks"
)

// Settings returns userID's settings; the defaults, with a zero UpdatedAt,
// when they never set any.
func (s *Tasks) Settings(ctx context.Context, userID string) (tasks.Settings, error) {
	var set tasks.Settings
	err := s.pool.QueryRow(ctx, stmt.ShowSettings, userID).Scan(&set.TimeZone, &set.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return tasks.DefaultSettings(), nil
	}
	return set, translate(err)
}

// SaveSettings stores userID's settings, as the service checked them.
func (s *Tasks) SaveSettings(ctx context.Context, userID string, set tasks.Settings) (tasks.Settings, error) {
	var at time.Time
	if err := s.pool.QueryRow(ctx, stmt.SaveSettings, userID, set.TimeZone).Scan(&at); err != nil {
		return tasks.Settings{}, translate(err)
	}
	set.UpdatedAt = at
	return set, nil
}

// queueTimeZone reads the user's time zone setting into turn, in the
// batch that starts it.
func queueTimeZone(b *pgx.Batch, userID string, turn *tasks.Turn) {
	b.Queue(stmt.UserTimeZone, userID).QueryRow(func(row pgx.Row) error { return row.Scan(&turn.TimeZone) })
}
