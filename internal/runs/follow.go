package runs

import (
	"context"
	"errors"
	"time"

	"github.com/taskchat/taskchat/internal/tasks"
)

// readLimit is the most batches of events a follower reads at once: its
// memory stays near a chat stream's however long the turn.
const readLimit = 64

// safetyPoll is how often a follower reads although notifications come:
// a last guard against one lost for a reason nobody foresaw.
const safetyPoll = 5 * time.Second

// Follow sends run runID's events after after to emit, in order, as they
// are written, until emit reports the run's last event (nil), the run is
// cut short (ErrCutShort), the replica shuts down (ErrClosing), ctx ends,
// or emit fails. It waits between reads for the run's writes, woken by
// this replica's turns or by a notification, and reads anyway every
// PollEvery when notifications do not reach the replica. The database
// failing for a while (a restart) is waited out until the run's lease ends.
func (h *Hub) Follow(ctx context.Context, userID string, runID int64, after int, emit func(tasks.RunEvent) (last bool, err error)) error {
	w := h.watch(ctx, runID)
	defer w.release()
	marked := false
	lease := time.Time{}
	for {
		events, run, err := h.store.ReadRunEvents(ctx, userID, runID, after, readLimit, w.subscribed != nil && !marked)
		switch {
		case errors.Is(err, tasks.ErrNotFound):
			return err
		case err != nil && ctx.Err() == nil && (lease.IsZero() || time.Now().Before(lease.Add(writeTimeout))):
			// (lease is of the database's clock, and it does not answer:
			// this one is the replica's, and has only to end the wait.)
			h.log.Warn("runs: a follower could not read its run; reading again shortly", "run_id", runID, "err", err)
			if err := h.sleep(ctx, w.wake, h.cfg.PollEvery); err != nil {
				return err
			}
			continue
		case err != nil:
			return err
		}
		marked = marked || w.subscribed != nil
		lease = run.LeaseUntil
		for _, ev := range events {
			after = ev.Seq
			last, err := emit(ev)
			if err != nil || last {
				return err
			}
		}
		switch {
		case len(events) > 0 && run.LastSeq > after:
			continue // more than a read's worth
		case run.Ended && run.LastSeq > after:
			continue // written after the state was read
		case run.Ended:
			return nil // ended, and everything after after was sent
		case run.Lapsed():
			return ErrCutShort
		}
		wait := safetyPoll
		if w.subscribed == nil || !h.listening() {
			wait = h.cfg.PollEvery
		}
		wait = min(wait, run.LeaseUntil.Sub(run.ReadAt)+10*time.Millisecond)
		if err := h.sleep(ctx, w.wake, wait); err != nil {
			return err
		}
		if w.subscribed == nil && h.listening() {
			w.subscribe(ctx) // the listening connection is back
		}
	}
}

// sleep waits for d, a wake, ctx's end or the replica's shutdown.
func (h *Hub) sleep(ctx context.Context, wake <-chan struct{}, d time.Duration) error {
	t := time.NewTimer(max(d, time.Millisecond))
	defer t.Stop()
	select {
	case <-wake:
		return nil
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-h.closing:
		return ErrClosing
	}
}

// Latest returns the conversation's newest run; Run{} when it has none.
func (h *Hub) Latest(ctx context.Context, userID string, conversationID int64) (tasks.Run, error) {
	return h.store.LatestRun(ctx, userID, conversationID)
}

// LatestOfChat returns the newest run of the conversation a client's chat
// id names (tasks.TurnStore.ChatConversation); ErrNotFound when it names
// none yet.
func (h *Hub) LatestOfChat(ctx context.Context, userID, chatID string) (tasks.Run, error) {
	id, err := h.store.ChatConversation(ctx, userID, chatID)
	if err != nil {
		return tasks.Run{}, err
	}
	return h.store.LatestRun(ctx, userID, id)
}

// Stop asks the conversation's running turn to stop, wherever it runs, and
// waits up to StopWait for it to end, so that the next message finds the
// conversation free. It returns the run that was asked to stop, Run{} when
// none was running, and whether it ended within the wait.
func (h *Hub) Stop(ctx context.Context, userID string, conversationID int64) (tasks.Run, bool, error) {
	run, err := h.store.RequestStop(ctx, userID, conversationID)
	if err != nil || run.ID == 0 {
		return run, false, err
	}
	h.stopLocal(run.ID)
	ctx, cancel := context.WithTimeout(ctx, h.cfg.StopWait)
	defer cancel()
	err = h.Follow(ctx, userID, run.ID, run.LastSeq, func(tasks.RunEvent) (bool, error) { return false, nil })
	return run, err == nil, nil
}
