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
// user and kind, and the leases of every replica's open streams (migration
// 000016), so that a rate, and the cap on a user's streams, hold across
// every replica. A turn takes its token, and a streamed turn its stream's
// lease, in the batch that starts it (queueChecks); a request to /mcp, or
// a follower's stream, which have no such batch, take theirs in one
// statement. It implements tasks.RateBuckets and tasks.StreamLeases.
type Limits struct {
	pool *pgxpool.Pool
}

// NewLimits returns the bucket and lease tables on pool.
func NewLimits(pool *pgxpool.Pool) *Limits {
	return &Limits{pool: pool}
}

var (
	_ tasks.RateBuckets  = (*Limits)(nil)
	_ tasks.StreamLeases = (*Limits)(nil)
)

// The SQLSTATEs take_rate_token and open_stream raise.
const (
	rateLimited    = "TCL01"
	tooManyStreams = "TCS01"
)

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

// OpenStream takes the lease l for a stream of userID, or fails with a
// *tasks.StreamsError and takes none. Like CloseStream and RenewStreams,
// it commits without waiting for the disk (commitLazily): a lease is a
// count, not a record, and one a crash loses, or brings back, is set right
// within its length.
func (l *Limits) OpenStream(ctx context.Context, userID string, lease tasks.StreamLease) error {
	b := &pgx.Batch{}
	commitLazily(b)
	queueOpenStream(b, userID, lease)
	err := l.pool.SendBatch(ctx, b).Close()
	if se := streamsError(err, lease); se != nil {
		return se
	}
	return translate(err)
}

// CloseStream deletes the lease id of userID's stream.
func (l *Limits) CloseStream(ctx context.Context, userID, id string) error {
	return l.lazily(ctx, stmt.CloseStream, id, userID)
}

// RenewStreams extends the leases ids to d from now, in one statement.
func (l *Limits) RenewStreams(ctx context.Context, ids []string, d time.Duration) error {
	return l.lazily(ctx, stmt.RenewStreams, ids, d)
}

// lazily runs a statement in a transaction that commits without waiting
// for the disk.
func (l *Limits) lazily(ctx context.Context, sql string, args ...any) error {
	b := &pgx.Batch{}
	commitLazily(b)
	b.Queue(sql, args...)
	return translate(l.pool.SendBatch(ctx, b).Close())
}

// queueOpenStream queues the taking of a streamed turn's lease; see
// streamsError for its refusal.
func queueOpenStream(b *pgx.Batch, userID string, lease tasks.StreamLease) {
	b.Queue(stmt.OpenStream, lease.ID, userID, lease.Max, lease.For)
}

// streamsError turns open_stream's refusal into a *tasks.StreamsError; nil
// for any other error.
func streamsError(err error, lease tasks.StreamLease) error {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != tooManyStreams {
		return nil
	}
	return &tasks.StreamsError{Max: lease.Max}
}
