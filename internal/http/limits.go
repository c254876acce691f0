package http

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// userLimits holds each user's chat-turn token bucket and open-stream
// count. They live in this replica's memory: with N replicas behind a load
// balancer a user can get up to N times the configured rate (docs/operating.md says so).
type userLimits struct {
	perMinute  float64
	burst      int
	maxStreams int

	mu      sync.Mutex
	buckets map[string]*bucket
	streams map[string]int
	open    int // streams open now, all users'
}

type bucket struct {
	limiter *rate.Limiter
	seen    time.Time
}

// rateLimitError says how long to wait before trying again.
type rateLimitError struct {
	retryAfter time.Duration
	detail     string
}

func (e *rateLimitError) Error() string { return e.detail }

func newUserLimits(perMinute float64, burst, maxStreams int) *userLimits {
	return &userLimits{perMinute: perMinute, burst: burst, maxStreams: maxStreams,
		buckets: map[string]*bucket{}, streams: map[string]int{}}
}

// allowTurn takes a token from the user's bucket, or says how long until
// one is there.
func (l *userLimits) allowTurn(userID string) error {
	return l.allow(userID, "messages")
}

// allow is allowTurn for what the bucket counts, named in the refusal.
func (l *userLimits) allow(userID, what string) error {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep(now)
	b := l.buckets[userID]
	if b == nil {
		b = &bucket{limiter: rate.NewLimiter(rate.Limit(l.perMinute/60), l.burst)}
		l.buckets[userID] = b
	}
	b.seen = now
	r := b.limiter.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return &rateLimitError{retryAfter: d, detail: fmt.Sprintf("Too many %s: at most %g per minute. Try again in %d seconds.", what, l.perMinute, seconds(d))}
	}
	return nil
}

// sweep forgets buckets that have been full for a while, so memory stays
// bounded by the users active in the last few minutes. The caller holds l.mu.
func (l *userLimits) sweep(now time.Time) {
	if len(l.buckets) < 1024 {
		return
	}
	refill := time.Duration(float64(l.burst)/l.perMinute*float64(time.Minute)) + time.Minute
	for id, b := range l.buckets {
		if now.Sub(b.seen) > refill {
			delete(l.buckets, id)
		}
	}
}

// openStream counts a stream against the user's cap; release undoes it.
func (l *userLimits) openStream(userID string) (release func(), err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.streams[userID] >= l.maxStreams {
		return nil, &rateLimitError{retryAfter: time.Second, detail: fmt.Sprintf("Too many open streams: at most %d at a time.", l.maxStreams)}
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
func (l *userLimits) openStreams() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}

// writeRateLimited answers 429 with Retry-After in whole seconds.
func writeRateLimited(w http.ResponseWriter, err error) {
	rl := err.(*rateLimitError)
	w.Header().Set("Retry-After", strconv.Itoa(seconds(rl.retryAfter)))
	writeProblem(w, apiErr(codeRateLimited, rl.detail))
}

func seconds(d time.Duration) int { return int(math.Ceil(d.Seconds())) }
