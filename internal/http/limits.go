package http

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/taskchat/taskchat/internal/tasks"
)

// The per-user rates, of turns and of /mcp requests, are token buckets in
// PostgreSQL (tasks.RateBuckets), shared by every replica: a turn takes its
// token in the statement that starts it (chat.Config.TurnRate), a request
// to /mcp in one statement of its own (mcpFront.take). What is kept here,
// in this replica's memory, is the cap on each user's open streams, which
// bounds what a user holds of this replica, and /mcp's fallback bucket for
// when the database does not answer in time.

// streamLimits caps each user's open streams on this replica.
type streamLimits struct {
	maxStreams int

	mu      sync.Mutex
	streams map[string]int
	open    int // streams open now, all users'
}

func newStreamLimits(maxStreams int) *streamLimits {
	return &streamLimits{maxStreams: maxStreams, streams: map[string]int{}}
}

// openStream counts a stream against the user's cap; release undoes it.
func (l *streamLimits) openStream(userID string) (release func(), err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.streams[userID] >= l.maxStreams {
		ae := apiErrf(codeRateLimited, "Too many open streams: at most %d at a time.", l.maxStreams)
		ae.retryAfter = time.Second
		return nil, ae
	}
	l.streams[userID]++
	l.open++
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.open--
		if l.streams[userID]--; l.streams[userID] <= 0 {
			delete(l.streams, userID)
		}
	}, nil
}

// openStreams is how many streams are open now, for the metrics.
func (l *streamLimits) openStreams() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}

// localBuckets are each user's token buckets in this replica's memory:
// what decides when the shared buckets cannot answer in time.
type localBuckets struct {
	rate tasks.Rate

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	limiter *rate.Limiter
	seen    time.Time
}

func newLocalBuckets(r tasks.Rate) *localBuckets {
	return &localBuckets{rate: r, buckets: map[string]*bucket{}}
}

// take takes a token from the user's bucket, or fails with a
// *tasks.RateLimitError saying how long until one is there.
func (l *localBuckets) take(userID string) error {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep(now)
	b := l.buckets[userID]
	if b == nil {
		b = &bucket{limiter: rate.NewLimiter(rate.Limit(l.rate.PerMinute/60), l.rate.Burst)}
		l.buckets[userID] = b
	}
	b.seen = now
	r := b.limiter.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return &tasks.RateLimitError{Rate: l.rate, RetryAfter: d}
	}
	return nil
}

// sweep forgets buckets that have been full for a while, so memory stays
// bounded by the users active in the last few minutes. The caller holds l.mu.
func (l *localBuckets) sweep(now time.Time) {
	if len(l.buckets) < 1024 {
		return
	}
	refill := time.Duration(float64(l.rate.Burst)/l.rate.PerMinute*float64(time.Minute)) + time.Minute
	for id, b := range l.buckets {
		if now.Sub(b.seen) > refill {
			delete(l.buckets, id)
		}
	}
}

// rateLimited is the 429 of an empty bucket, with Retry-After; what names
// what the bucket counts.
func rateLimited(re *tasks.RateLimitError, what string) *apiError {
	ae := apiErrf(codeRateLimited, "Too many %s: at most %g per minute. Try again in %d seconds.", what, re.Rate.PerMinute, seconds(re.RetryAfter))
	ae.retryAfter = re.RetryAfter
	return ae
}

func seconds(d time.Duration) int { return int(math.Ceil(d.Seconds())) }
