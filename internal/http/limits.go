package http

import (
	"context"
	"crypto/rand"
	"log/slog"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/taskchat/taskchat/internal/tasks"
)

// The per-user limits are kept in PostgreSQL, shared by every replica:
// the rates of turns and of /mcp requests are token buckets
// (tasks.RateBuckets) — a turn takes its token in the statement that starts
// it (chat.Config.TurnRate), a request to /mcp in one statement of its own
// (mcpFront.take) — and each user's open streams are leases
// (tasks.StreamLeases), which streamLeases takes, renews and gives back.
// What is kept here, in this replica's memory, is the leases of its own
// streams, to renew them, and /mcp's fallback bucket for when the database
// does not answer in time.

// Stream leases last streamLease unless renewed; a replica renews those of
// its open streams every third of it. A replica that dies leaves its
// streams' leases to run out within streamLease: until then they count
// against their users.
const streamLease = 30 * time.Second

// streamLeases caps each user's open streams, on every replica together,
// with a lease per stream (tasks.StreamLeases).
type streamLeases struct {
	store      tasks.StreamLeases
	maxStreams int
	log        *slog.Logger

	mu       sync.Mutex
	open     map[string]struct{} // the ids of this replica's leases
	renewing bool                // whether the renewal loop runs
}

func newStreamLeases(store tasks.StreamLeases, maxStreams int, log *slog.Logger) *streamLeases {
	return &streamLeases{store: store, maxStreams: maxStreams, log: log, open: map[string]struct{}{}}
}

// forTurn returns a new lease for a streamed turn to take as it starts
// (chat.Request.Stream), counted and renewed here from now on; client is
// the context of the request the turn answers.
func (l *streamLeases) forTurn(client context.Context, userID string) *turnLease {
	lease := l.add()
	return &turnLease{leases: l, client: client, userID: userID, lease: lease,
		giveBack: sync.OnceFunc(func() { l.close(userID, lease.ID) })}
}

// turnLease is a streamed turn's lease as its handler holds it. It is
// given back when the handler returns, or, once the turn has started, as
// soon as the client leaves: given back before the batch that starts the
// turn has stored it, it would be deleted before it was there, and count
// against its user until it ran out.
type turnLease struct {
	leases   *streamLeases
	client   context.Context
	userID   string
	lease    *tasks.StreamLease
	giveBack func()
	stop     func() bool // ends the watch on the client, once started
}

// started gives the lease back as soon as the client leaves (at once if
// it has left): the turn, started, has taken it. A nil lease is none.
func (h *turnLease) started() {
	if h != nil && h.stop == nil {
		h.stop = context.AfterFunc(h.client, h.giveBack)
	}
}

// take takes the lease in a statement of its own, for a stream that
// follows the turn of an earlier request (a keyed retry's) instead of
// starting one. A nil lease is none to take.
func (h *turnLease) take(ctx context.Context) error {
	if h == nil {
		return nil
	}
	return h.leases.store.OpenStream(ctx, h.userID, *h.lease)
}

// release gives the lease back, once.
func (h *turnLease) release() {
	if h.stop != nil {
		h.stop()
	}
	h.giveBack()
}

// openStream takes a lease for a stream that starts no turn (a follower's,
// or a decision's, whose turn starts only once it is decided), in a
// statement of its own. It fails with a 429 when the user holds as many as
// they may; release gives the lease back.
func (l *streamLeases) openStream(ctx context.Context, userID string) (release func(), err error) {
	lease := l.add()
	if err := l.store.OpenStream(ctx, userID, *lease); err != nil {
		l.forget(lease.ID)
		return nil, err
	}
	return func() { l.close(userID, lease.ID) }, nil
}

// add makes a lease and counts it here, starting the renewal loop if it
// is the only one.
func (l *streamLeases) add() *tasks.StreamLease {
	lease := &tasks.StreamLease{ID: rand.Text(), Max: l.maxStreams, For: streamLease}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open[lease.ID] = struct{}{}
	if !l.renewing {
		l.renewing = true
		go l.renew()
	}
	return lease
}

// close gives a lease back: no longer renewed here, and deleted. It waits
// for the deletion at most a second (a stream's last event waits on it, so
// that a client that reads it and opens another stream finds the lease
// gone); a database slower than that finishes it meanwhile, and one that
// does not answer leaves the lease to run out.
func (l *streamLeases) close(userID, id string) {
	l.forget(id)
	done := make(chan struct{})
	go func() {
		defer close(done)
		ctx, cancel := context.WithTimeout(context.Background(), streamLease/3)
		defer cancel()
		if err := l.store.CloseStream(ctx, userID, id); err != nil {
			l.log.Warn("give back a stream's lease", "err", err)
		}
	}()
	select {
	case <-done:
	case <-time.After(time.Second):
	}
}

func (l *streamLeases) forget(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.open, id)
}

// renew renews this replica's leases every third of their length, in one
// statement, for as long as it has any.
func (l *streamLeases) renew() {
	t := time.NewTicker(streamLease / 3)
	defer t.Stop()
	for range t.C {
		if !l.renewOnce() {
			return
		}
	}
}

// renewOnce renews the leases held now, and reports whether there were
// any; when there were none, the loop ends (add starts another).
func (l *streamLeases) renewOnce() bool {
	l.mu.Lock()
	ids := make([]string, 0, len(l.open))
	for id := range l.open {
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		l.renewing = false
	}
	l.mu.Unlock()
	if len(ids) == 0 {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), streamLease/3)
	defer cancel()
	if err := l.store.RenewStreams(ctx, ids, streamLease); err != nil {
		l.log.Warn("renew the streams' leases", "streams", len(ids), "err", err)
	}
	return true
}

// openStreams is how many streams this replica holds open, for the metrics.
func (l *streamLeases) openStreams() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.open)
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
