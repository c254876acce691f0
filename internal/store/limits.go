package store

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/taskchat/taskchat/internal/tasks"
)

// Limits keeps each user's token buckets (migration 000015), one row per
// user and kind, so that a rate holds across every replica. A turn takes
// its token in the batch that starts it (queueChecks); a request to /mcp,
// which has no such batch, takes it with TakeToken, one statement. It
// implements tasks.RateBuckets.
type Limits struct {
	pool *pgxpool.Pool
}

// NewLimits returns the bucket table on pool.
func NewLimits(pool *pgxpool.Pool) *Limits {
	return &Limits{pool: pool}
}

var _ tasks.RateBuckets = (*Limits)(nil)

// rateLimited is the SQLSTATE take_rate_token raises.
const rateLimited = "TCL01"

// TakeToken takes a token from the user's bucket of kind, or fails with a
// *tasks.RateLimitError and takes none.
func (l *Limits) TakeToken(ctx context.Context, userID, kind string, rate tasks.Rate) error {
	_, err := l.pool.Exec(ctx, stmt.TakeRateToken, userID, kind, rate.PerMinute, rate.Burst)
	if re := rateError(err, rate); re != nil {
		return re
	}
	return translate(err)
}

// queueTakeToken queues the taking of a token from the user's bucket of
// kind; see rateError for its refusal.
func queueTakeToken(b *pgx.Batch, userID, kind string, rate tasks.Rate) {
	b.Queue(stmt.TakeRateToken, userID, kind, rate.PerMinute, rate.Burst)
}

// rateError turns take_rate_token's refusal into a *tasks.RateLimitError;
// nil for any other error.
func rateError(err error, rate tasks.Rate) error {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != rateLimited {
		return nil
	}
	ms, _ := strconv.ParseInt(pgErr.Detail, 10, 64)
	return &tasks.RateLimitError{Rate: rate, RetryAfter: time.Duration(ms) * time.Millisecond}
}
