// Package limits keeps what of the per-user limits a replica holds in its
// own memory. The limits themselves are kept in PostgreSQL, shared by every
// replica: the rates of turns and of /mcp requests are token buckets
// (tasks.RateBuckets), and each user's open streams are leases
// (tasks.StreamLeases). Here are the leases of this replica's own streams,
// which Leases takes, renews and gives back, and LocalBuckets, /mcp's
// fallback for when the database does not answer in time.
package limits

import (
	"context"
	"crypto/rand"
	"log/slog"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/taskchat/taskchat/internal/tasks"
)

// Stream leases last streamLease unless renewed; a replica renews those of
// its open streams every third of it. A replica that dies leaves its
// streams' leases to run out within streamLease: until then they count
// against their users.
const streamLease = 30 * time.Second

// Leases caps each user's open streams, on every replica together,
// with a lease per stream (tasks.StreamLeases).
type Leases struct {
	store      tasks.StreamLeases
	maxStreams int
	log        *slog.Logger

	mu       sync.Mutex
	open     map[string]struct{} // the ids of this replica's leases
	renewing bool                // whether the renewal loop runs
}

func NewLeases(store tasks.StreamLeases, maxStreams int, log *slog.Logger) *Leases {
	return &Leases{store: store, maxStreams: maxStreams, log: log, open: map[string]struct{}{}}
}

// ForTurn returns a new lease for a streamed turn to take as it starts
// (chat.Request.Stream), counted and renewed here from now on; client is
// the context of the request the turn answers.
func (l *Leases) ForTurn(client context.Context, userID string) *TurnLease {
	lease := l.add()
	return &TurnLease{leases: l, client: client, userID: userID, Lease: lease,
		giveBack: sync.OnceFunc(func() { l.close(userID, lease.ID) })}
}

// TurnLease is a streamed turn's lease as its handler holds it. It is
// given back when the handler returns, or, once the turn has started, as
// soon as the client leaves: given back before the batch that starts the
// turn has stored it, it would be deleted before it was there, and count
// against its user until it ran out.
type TurnLease struct {
	leases   *Leases
	client   context.Context
	userID   string
	Lease    *tasks.StreamLease // what the turn takes (chat.Request.Stream)
	giveBack func()
	stop     func() bool // ends the watch on the client, once started
}

// Started gives the lease back as soon as the client leaves (at once if
// it has left): the turn, started, has taken it. A nil lease is none.
func (h *TurnLease) Started() {
	if h != nil && h.stop == nil {
		h.stop = context.AfterFunc(h.client, h.giveBack)
	}
}

// Take takes the lease in a statement of its own, for a stream that
// follows the turn of an earlier request (a keyed retry's) instead of
// starting one. A nil lease is none to take.
func (h *TurnLease) Take(ctx context.Context) error {
	if h == nil {
		return nil
	}
	return h.leases.store.OpenStream(ctx, h.userID, *h.Lease)
}

// Release gives the lease back, once.
func (h *TurnLease) Release() {
	if h.stop != nil {
		h.stop()
	}
	h.giveBack()
}

// Open takes a lease for a stream that starts no turn (a follower's,
// or a decision's, whose turn starts only once it is decided), in a
// statement of its own. It fails with a *tasks.StreamsError when the user holds as
// many as they may; release gives the lease back.
func (l *Leases) Open(ctx context.Context, userID string) (release func(), err error) {
	lease := l.add()
	if err := l.store.OpenStream(ctx, userID, *lease); err != nil {
		l.forget(lease.ID)
		return nil, err
	}
	return func() { l.close(userID, lease.ID) }, nil
}

// add makes a lease and counts it here, starting the renewal loop if it
// is the only one.
func (l *Leases) add() *tasks.StreamLease {
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
func (l *Leases) close(userID, id string) {
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

func (l *Leases) forget(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.open, id)
}

// renew renews this replica's leases every third of their length, in one
// statement, for as long as it has any.
func (l *Leases) renew() {
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
func (l *Leases) renewOnce() bool {
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

// OpenStreams is how many streams this replica holds open, for the metrics.
func (l *Leases) OpenStreams() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.open)
}

// LocalBuckets are each user's token buckets in this replica's memory:
// what decides when the shared buckets cannot answer in time.
type LocalBuckets struct {
	rate tasks.Rate

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	limiter *rate.Limiter
	seen    time.Time
}

func NewLocalBuckets(r tasks.Rate) *LocalBuckets {
	return &LocalBuckets{rate: r, buckets: map[string]*bucket{}}
}

// Take takes a token from the user's bucket, or fails with a
// *tasks.RateLimitError saying how long until one is there.
func (l *LocalBuckets) Take(userID string) error {
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
func (l *LocalBuckets) sweep(now time.Time) {
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
