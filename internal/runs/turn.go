package runs

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/taskchat/taskchat/internal/tasks"
)

// writeTimeout bounds one write of a turn's events; the last write, which
// ends the run, is tried again within it while the database fails.
const writeTimeout = 10 * time.Second

// Turn is a turn as this replica runs it: its context, which its request
// ending does not end, and the writer of its events. Events are numbered
// from 1 in the order they are added, and written a batch at a time: the
// first waits FlushEvery for others to join it, and a turn that is over
// before then writes them all with its end, once.
type Turn struct {
	hub    *Hub
	ctx    context.Context
	cancel context.CancelCauseFunc

	mu      sync.Mutex
	userID  string
	runID   int64
	next    int      // the number of the next event added
	pending [][]byte // events not written yet, numbered from first
	first   int
	timer   *time.Timer
	writing bool       // a write is under way
	written *sync.Cond // signalled when a write ends
	ended   bool       // no more writes by the timer: the end is being written
	over    bool       // the end is written, or End took it on
}

// Begin returns the context a turn runs on, detached from ctx's end but
// with its values, and the turn's writer. The turn ends when it finishes,
// is stopped, or the replica gives up on it (Interrupt); End must be
// called on every path.
func (h *Hub) Begin(ctx context.Context) (context.Context, *Turn) {
	t := &Turn{hub: h, next: 1, first: 1}
	t.written = sync.NewCond(&t.mu)
	t.ctx, t.cancel = context.WithCancelCause(context.WithoutCancel(ctx))
	h.mu.Lock()
	h.begun[t] = struct{}{} // Interrupt ends it too, started or not
	h.mu.Unlock()
	return t.ctx, t
}

// Started names the turn's run, once its first writes made it: from now on
// the turn can be stopped and its events are written.
func (t *Turn) Started(userID string, runID int64) {
	t.mu.Lock()
	t.userID, t.runID = userID, runID
	t.mu.Unlock()
	t.hub.mu.Lock()
	t.hub.running[runID] = t
	t.hub.mu.Unlock()
	// A stop asked before this reads as such from the first write.
}

// RunID is the turn's run; 0 before Started.
func (t *Turn) RunID() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.runID
}

// Add adds an event, in its encoding, and returns its number.
func (t *Turn) Add(event []byte) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	seq := t.next
	t.next++
	if t.runID == 0 || t.ended {
		return seq // a turn that never started writes nothing
	}
	t.pending = append(t.pending, event)
	if t.timer == nil && !t.writing {
		t.timer = time.AfterFunc(t.hub.cfg.FlushEvery, t.queue)
	}
	return seq
}

// queue hands the turn to one of the replica's writers.
func (t *Turn) queue() { t.hub.writes.add(t) }

// flush writes the events waiting, unless the turn has ended (End writes
// them) or a write is under way (it flushes again after it).
func (t *Turn) flush() {
	t.mu.Lock()
	t.timer = nil
	if t.ended || t.writing || len(t.pending) == 0 {
		t.mu.Unlock()
		return
	}
	batch, first := t.pending, t.first
	t.pending, t.first, t.writing = nil, first+len(batch), true
	t.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	stop, err := t.hub.store.AppendRunEvents(ctx, t.userID, t.runID, first, batch, false)
	cancel()

	t.mu.Lock()
	t.writing = false
	switch {
	case errors.Is(err, tasks.ErrNotFound):
		// The conversation was deleted, its run with it: nobody follows,
		// and the turn hears of it when it stores its reply.
		t.ended, t.pending = true, nil
	case err != nil:
		// Kept, to be written with the next batch: a follower waits for them.
		t.pending, t.first = append(batch, t.pending...), first
		t.hub.log.Warn("runs: could not write a turn's events; writing them with the next", "run_id", t.runID, "err", err)
	}
	if len(t.pending) > 0 && !t.ended && t.timer == nil {
		t.timer = time.AfterFunc(t.hub.cfg.FlushEvery, t.queue)
	}
	t.written.Broadcast()
	t.mu.Unlock()
	if err == nil {
		t.hub.wakeLocal(t.runID)
	}
	if stop {
		t.cancel(ErrStopped)
	}
}

// Take stops the turn's writes and returns what is left of its events,
// with last, the run's last event, after them: for the turn's own last
// write, which stores its reply, to write them in the same transaction.
// Written must follow if that write committed, End if it did not. runID is
// 0, and nothing is returned, when the turn never started or has ended.
func (t *Turn) Take(last []byte) (runID int64, first int, events [][]byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.runID == 0 || t.over {
		return 0, 0, nil
	}
	t.stopWriting()
	return t.runID, t.first, append(t.pending[:len(t.pending):len(t.pending)], last)
}

// Written tells the turn that what Take returned was written: its run has
// ended.
func (t *Turn) Written() {
	t.mu.Lock()
	t.over, t.pending = true, nil
	runID := t.runID
	t.mu.Unlock()
	t.forget(runID)
	t.hub.wakeLocal(runID)
}

// stopWriting ends the timer's writes and waits for one under way. The
// caller holds t.mu.
func (t *Turn) stopWriting() {
	t.ended = true
	if t.timer != nil {
		t.timer.Stop()
		t.timer = nil
	}
	for t.writing {
		t.written.Wait()
	}
}

// forget ends the turn's context and takes it off the replica's turns.
func (t *Turn) forget(runID int64) {
	t.cancel(context.Canceled)
	t.hub.mu.Lock()
	delete(t.hub.running, runID)
	delete(t.hub.begun, t)
	t.hub.mu.Unlock()
}

// End adds the turn's last event and writes what is left with the run's
// end, then forgets the turn, unless its end was written already (see
// Take). A turn that never started only ends its context.
func (t *Turn) End(last []byte) {
	t.mu.Lock()
	if t.over {
		runID := t.runID
		t.mu.Unlock()
		t.forget(runID)
		return
	}
	t.over = true
	t.stopWriting()
	runID := t.runID
	if runID == 0 {
		t.mu.Unlock()
		t.forget(0)
		return
	}
	batch := append(t.pending, last)
	first := t.first
	t.pending = nil
	t.mu.Unlock()

	t.forget(runID)
	write := func(ctx context.Context) error {
		_, err := t.hub.store.AppendRunEvents(ctx, t.userID, runID, first, batch, true)
		if err == nil {
			t.hub.wakeLocal(runID)
		}
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	err := write(ctx)
	switch {
	case err == nil, errors.Is(err, tasks.ErrNotFound): // its conversation was deleted, its run with it
		cancel()
		return
	case !errors.Is(err, tasks.ErrUnavailable):
		cancel()
		t.hub.log.Error("runs: could not write a turn's end", "run_id", runID, "err", err)
		return
	}
	// The database does not answer: the client hears the outcome now, and
	// the end is written when it answers again, within the write timeout.
	// Past it, the run's followers hear it was cut short when its lease
	// ends; the conversation's messages hold what it did.
	go func() {
		defer cancel()
		for ctx.Err() == nil {
			time.Sleep(200 * time.Millisecond)
			if err = write(ctx); !errors.Is(err, tasks.ErrUnavailable) {
				return
			}
		}
		t.hub.log.Error("runs: could not write a turn's end", "run_id", runID, "err", err)
	}()
}
