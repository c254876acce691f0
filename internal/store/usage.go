package store

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/taskchat/taskchat/internal/tasks"
)

// The token_usage table: each user's tokens per UTC day. A turn adds its
// usage in FinishTurn's statement, and StartTurn checks the daily budget in
// its batch, so neither costs a round trip of its own; the rows outlive
// conversations, so deleting one gives no tokens back.

// budgetExceeded is the SQLSTATE check_token_budget raises (migration 9).
const budgetExceeded = "TCB01"

// queueBudgetCheck makes batch b fail, writing nothing, when the user's
// usage today has reached budget; see budgetError.
func queueBudgetCheck(b *pgx.Batch, userID string, budget int64) {
	b.Queue(stmt.CheckTokenBudget, userID, budget)
}

// budgetError turns the check's refusal into the domain's *BudgetError; it
// returns nil for any other error.
func budgetError(err error, budget int64) error {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != budgetExceeded {
		return nil
	}
	used, _ := strconv.ParseInt(pgErr.Detail, 10, 64)
	return &tasks.BudgetError{Budget: budget, Used: used}
}

// RecordUsage adds the usage of a turn that stored no reply to today's, as
// FinishTurn does for one that stored its reply.
func (s *Turns) RecordUsage(ctx context.Context, userID string, u tasks.Usage) error {
	_, err := s.pool.Exec(ctx, stmt.RecordUsage, userID, max(u.InputTokens, 0), max(u.OutputTokens, 0))
	return translate(err)
}

// DailyUsage returns the user's days from from to to (UTC dates, inclusive)
// that have usage, oldest first.
func (s *Turns) DailyUsage(ctx context.Context, userID string, from, to time.Time) ([]tasks.DailyUsage, error) {
	rows, err := s.pool.Query(ctx, stmt.DailyUsage, userID, from.UTC(), to.UTC())
	if err != nil {
		return nil, translate(err)
	}
	days, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (tasks.DailyUsage, error) {
		var d tasks.DailyUsage
		err := row.Scan(&d.Day, &d.Usage.InputTokens, &d.Usage.OutputTokens, &d.Turns)
		d.Day = d.Day.UTC()
		return d, err
	})
	return days, translate(err)
}
