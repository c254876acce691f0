package tasks

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrRateLimited means a user has sent more than their rate allows: their
// token bucket is empty; see RateLimitError.
var ErrRateLimited = errors.New("rate limited")

// Rate is a token bucket: PerMinute tokens a minute, up to Burst at once.
// The zero Rate is no limit.
type Rate struct {
	PerMinute float64
	Burst     int
}

// Limited reports whether r limits anything.
func (r Rate) Limited() bool { return r.PerMinute > 0 && r.Burst > 0 }

// The kinds of requests a user's buckets count, each at its own rate.
const (
	BucketTurns = "turns" // chat turns, taken as a turn starts
	BucketMCP   = "mcp"   // requests to /mcp
)

// RateLimitError refuses a request whose bucket is empty: a token is there
// again after RetryAfter. It matches ErrRateLimited.
type RateLimitError struct {
	Rate       Rate
	RetryAfter time.Duration
}

func (e *RateLimitError) Error() string {
	return fmt.Sprintf("%v: at most %g a minute; retry after %s", ErrRateLimited, e.Rate.PerMinute, e.RetryAfter)
}

// Is makes a *RateLimitError match ErrRateLimited.
func (e *RateLimitError) Is(target error) bool { return target == ErrRateLimited }

// RateBuckets keeps every user's token buckets where every replica takes
// from them, so that a rate holds whatever the number of replicas.
type RateBuckets interface {
	// TakeToken takes a token from the user's bucket of kind, which
	// refills at rate, or fails with a *RateLimitError and takes none.
	TakeToken(ctx context.Context, userID, kind string, rate Rate) error
}

// ErrTooManyStreams means a user holds as many open streams as they may,
// on all replicas together; see StreamsError.
var ErrTooManyStreams = errors.New("too many open streams")

// StreamLease is an open stream's lease, in the table where every replica
// counts each user's open streams.
type StreamLease struct {
	ID  string        // random, made by the replica as the stream opens
	Max int           // the most leases the user may hold at once
	For time.Duration // how long the lease lasts unless it is renewed
}

// StreamsError refuses a stream to a user who holds Max leases already.
type StreamsError struct {
	Max int
}

func (e *StreamsError) Error() string {
	return fmt.Sprintf("%v: at most %d", ErrTooManyStreams, e.Max)
}

// Is makes a *StreamsError match ErrTooManyStreams.
func (e *StreamsError) Is(target error) bool { return target == ErrTooManyStreams }

// StreamLeases keeps the leases of every replica's open streams, so that a
// user's cap on them holds whatever the number of replicas. A streamed
// turn takes its lease as it starts (TurnStart.Stream); any other stream
// with OpenStream.
type StreamLeases interface {
	// OpenStream takes the lease l for a stream of userID, or fails with
	// a *StreamsError when the user holds l.Max leases already. Taking a
	// lease again renews it.
	OpenStream(ctx context.Context, userID string, l StreamLease) error
	// CloseStream gives back the lease id of userID's stream.
	CloseStream(ctx context.Context, userID, id string) error
	// RenewStreams extends the leases ids to d from now.
	RenewStreams(ctx context.Context, ids []string, d time.Duration) error
}
