package runs

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/taskchat/taskchat/internal/tasks"
)

// Why a turn's context ends, as context.Cause tells it.
var (
	// ErrStopped: someone asked the turn to stop (POST …/stop).
	ErrStopped = tasks.ErrStopped
	// ErrShutdown: the replica is shutting down and its time to let turns
	// finish ran out.
	ErrShutdown = errors.New("the server is shutting down")
	// ErrCutShort: a followed run's replica stopped before the run ended
	// (its lease lapsed with no end written).
	ErrCutShort = errors.New("the turn was cut short")
	// ErrClosing: the replica is shutting down; a follower should resume
	// elsewhere.
	ErrClosing = errors.New("the server is shutting down; resume the stream")
)

// Notifier is the replica's one listening connection (store.Listener).
type Notifier interface {
	// Subscribe asks for a channel's notifications and reports whether
	// they are coming now; Unsubscribe undoes one Subscribe.
	Subscribe(ctx context.Context, channel string) bool
	Unsubscribe(channel string)
	// Connected reports whether notifications reach the replica now.
	Connected() bool
}

// Config is how a Hub writes and waits. Every field is required.
type Config struct {
	// FlushEvery is how long a turn's events wait to be written together:
	// what a follower lags behind the turn's own stream at most.
	FlushEvery time.Duration
	// PollEvery is how often a follower reads, and a replica asks about
	// stops, when notifications do not reach the replica.
	PollEvery time.Duration
	// StopWait is how long a stop waits for the turn to end before it
	// answers.
	StopWait time.Duration
}

func (c Config) validate() error {
	if c.FlushEvery <= 0 || c.PollEvery <= 0 || c.StopWait <= 0 {
		return errors.New("runs: FlushEvery, PollEvery and StopWait must be positive")
	}
	return nil
}

// Hub is one replica's runs: those it runs, and those its followers wait on.
type Hub struct {
	log   *slog.Logger
	store tasks.RunStore
	cfg   Config

	mu       sync.Mutex
	notifier Notifier // nil: nothing listens, everyone polls
	running  map[int64]*Turn
	watchers map[int64]map[chan struct{}]struct{}
	closing  chan struct{} // closed when the replica begins to shut down
	closed   bool
	done     chan struct{} // ends the stop poller
	stopOnce sync.Once
	polling  sync.WaitGroup // the stop poller
	// begun are the turns begun and not yet over, started or not: those
	// Interrupt ends.
	begun map[*Turn]struct{}
	// writes are the turns waiting for one of the replica's writers.
	writes writeQueue
}

// New returns a Hub over store. Until SetNotifier gives it a listening
// connection, its followers poll.
func New(log *slog.Logger, store tasks.RunStore, cfg Config) (*Hub, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	h := &Hub{log: log, store: store, cfg: cfg, running: map[int64]*Turn{},
		watchers: map[int64]map[chan struct{}]struct{}{}, closing: make(chan struct{}), done: make(chan struct{})}
	h.begun = map[*Turn]struct{}{}
	h.writes.start()
	h.polling.Go(h.pollStops)
	return h, nil
}

// SetNotifier gives the hub the replica's listening connection.
func (h *Hub) SetNotifier(n Notifier) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.notifier = n
}

// Notify takes a notification from the listening connection: a stop, with
// the run's id, or a run's new events.
func (h *Hub) Notify(channel, payload string) {
	if channel == tasks.StopChannel {
		if id, err := strconv.ParseInt(payload, 10, 64); err == nil {
			h.stopLocal(id)
		}
		return
	}
	if id, ok := tasks.RunOfChannel(channel); ok {
		h.wakeLocal(id)
	}
}

// Reconnected is told that the listening connection is back after a loss:
// whatever was notified meanwhile is lost, so every follower reads again
// and the replica asks whether its turns were stopped.
func (h *Hub) Reconnected() {
	h.mu.Lock()
	for _, ws := range h.watchers {
		wakeAll(ws)
	}
	h.mu.Unlock()
	go h.checkStops() // not on the listener's goroutine: it delivers notifications
}

// EndFollowers begins the replica's shutdown: its followers end their
// streams without an end, so that their clients resume on another replica.
// The turns run on; Interrupt ends them.
func (h *Hub) EndFollowers() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.closed {
		h.closed = true
		close(h.closing)
	}
}

// Close ends the followers, if EndFollowers has not, and stops asking
// about stops and writing turns' events (a turn's End writes what is
// left); it returns once both have stopped.
func (h *Hub) Close() {
	h.EndFollowers()
	h.stopOnce.Do(func() {
		close(h.done)
		h.writes.close()
	})
	h.polling.Wait()
}

// Interrupt ends every turn this replica runs, or is beginning, with
// ErrShutdown: the last resort of a shutdown whose time ran out. Each
// stores what it did. Turns begun after it run as usual.
func (h *Hub) Interrupt() {
	h.mu.Lock()
	turns := make([]*Turn, 0, len(h.begun))
	for t := range h.begun {
		turns = append(turns, t)
	}
	h.mu.Unlock()
	for _, t := range turns {
		t.cancel(ErrShutdown)
	}
}

// stopLocal stops the turn of run id, if this replica runs it.
func (h *Hub) stopLocal(id int64) {
	h.mu.Lock()
	t := h.running[id]
	h.mu.Unlock()
	if t != nil {
		t.cancel(ErrStopped)
	}
}

// listening reports whether notifications reach the replica now.
func (h *Hub) listening() bool {
	h.mu.Lock()
	n := h.notifier
	h.mu.Unlock()
	return n != nil && n.Connected()
}

// pollStops asks, every PollEvery while notifications do not reach the
// replica, which of its turns were asked to stop.
func (h *Hub) pollStops() {
	t := time.NewTicker(h.cfg.PollEvery)
	defer t.Stop()
	for {
		select {
		case <-h.done:
			return
		case <-t.C:
		}
		if !h.listening() {
			h.checkStops()
		}
	}
}

// checkStops stops the turns of this replica that were asked to stop.
func (h *Hub) checkStops() {
	h.mu.Lock()
	ids := make([]int64, 0, len(h.running))
	for id := range h.running {
		ids = append(ids, id)
	}
	h.mu.Unlock()
	if len(ids) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	stopped, err := h.store.StopsRequested(ctx, ids)
	if err != nil {
		h.log.Warn("runs: could not ask which turns were stopped; asking again shortly", "err", err)
		return
	}
	for _, id := range stopped {
		h.stopLocal(id)
	}
}

// watcher is one follower of a run on this replica.
type watcher struct {
	hub        *Hub
	id         int64
	wake       chan struct{} // woken by the run's writes
	subscribed Notifier      // the notifier it subscribed to, if any
}

// watch registers a follower of run id and subscribes it to the run's
// notifications; release undoes both.
func (h *Hub) watch(ctx context.Context, id int64) *watcher {
	w := &watcher{hub: h, id: id, wake: make(chan struct{}, 1)}
	h.mu.Lock()
	ws := h.watchers[id]
	if ws == nil {
		ws = map[chan struct{}]struct{}{}
		h.watchers[id] = ws
	}
	ws[w.wake] = struct{}{}
	h.mu.Unlock()
	w.subscribe(ctx)
	return w
}

// subscribe asks for the run's notifications, unless it has them, and
// reports whether they are coming.
func (w *watcher) subscribe(ctx context.Context) bool {
	if w.subscribed != nil {
		return true
	}
	w.hub.mu.Lock()
	n := w.hub.notifier
	w.hub.mu.Unlock()
	if n == nil {
		return false
	}
	channel := tasks.RunChannel(w.id)
	if !n.Subscribe(ctx, channel) {
		n.Unsubscribe(channel)
		return false
	}
	w.subscribed = n
	return true
}

func (w *watcher) release() {
	if w.subscribed != nil {
		w.subscribed.Unsubscribe(tasks.RunChannel(w.id))
	}
	h := w.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	ws := h.watchers[w.id]
	delete(ws, w.wake)
	if len(ws) == 0 {
		delete(h.watchers, w.id)
	}
}

// wakeLocal wakes this replica's followers of run id, after a write of its.
func (h *Hub) wakeLocal(id int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	wakeAll(h.watchers[id])
}

func wakeAll(ws map[chan struct{}]struct{}) {
	for w := range ws {
		select {
		case w <- struct{}{}:
		default: // already woken
		}
	}
}
