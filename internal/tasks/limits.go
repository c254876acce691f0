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
