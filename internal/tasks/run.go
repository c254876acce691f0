package tasks

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// A run is a turn as it streams: the log of its events, kept in the
// database while the turn runs and for a grace period after it, so that the
// turn outlives the connection that started it. Any replica can follow a
// run, and anyone who may see the conversation can stop it.

// ErrStopped is why a stopped turn's context ended (context.Cause): someone
// asked it to stop. A stopped turn is stored as interrupted, and is no
// failure.
var ErrStopped = errors.New("the turn was stopped")

// ErrTooManyRunningTurns means the user already runs as many turns as they
// may at once, on all replicas together; see RunningTurnsError.
var ErrTooManyRunningTurns = errors.New("too many turns running at once")

// RunningTurnsError refuses a turn of a user who runs Max turns already.
type RunningTurnsError struct {
	Max int
}

func (e *RunningTurnsError) Error() string {
	return fmt.Sprintf("%v: at most %d", ErrTooManyRunningTurns, e.Max)
}

// Is makes a *RunningTurnsError match ErrTooManyRunningTurns.
func (e *RunningTurnsError) Is(target error) bool { return target == ErrTooManyRunningTurns }

// Run is the state of a turn's run.
type Run struct {
	ID             int64
	ConversationID int64
	TurnID         int64
	// LastSeq is the number of the last event written; events are
	// numbered from 1 within the run.
	LastSeq int
	// LeaseUntil is when the run, if it has not ended, counts as cut
	// short: its replica stopped before it could write its end.
	LeaseUntil time.Time
	Ended      bool
	// StopRequested is set once someone asked the turn to stop.
	StopRequested bool
	// ReadAt is when the run was read, by the database's clock, which
	// LeaseUntil is of: a replica's own clock may differ.
	ReadAt time.Time
}

// Running reports whether the run was still going when it was read: not
// ended, and within its lease.
func (r Run) Running() bool {
	return r.ID != 0 && !r.Ended && r.ReadAt.Before(r.LeaseUntil)
}

// Lapsed reports whether the run was cut short when it was read: its lease
// ended before it did.
func (r Run) Lapsed() bool {
	return r.ID != 0 && !r.Ended && !r.ReadAt.Before(r.LeaseUntil)
}

// RunEvent is one event of a run: its number and its encoding, which the
// store keeps as it is (the front that streams it chose it).
type RunEvent struct {
	Seq  int
	Data []byte
}

// RunStore keeps the runs' events. Every method is scoped to the user but
// StopsRequested, which a replica asks about the runs it runs itself.
type RunStore interface {
	// AppendRunEvents writes events of run runID, the first numbered
	// first, in one statement; last marks the run ended, its last event
	// among events. It reports whether a stop was requested. A follower
	// that waits on the run is woken.
	AppendRunEvents(ctx context.Context, userID string, runID int64, first int, events [][]byte, last bool) (stop bool, err error)
	// LatestRun returns the conversation's newest run; Run{} when it has
	// none. An unknown conversation, or another user's, is ErrNotFound.
	LatestRun(ctx context.Context, userID string, conversationID int64) (Run, error)
	// ReadRunEvents returns up to limit of the run's events after after,
	// in order, with the run's state as it was when they were read. watch
	// marks the run as followed, so that its writes wake its followers.
	ReadRunEvents(ctx context.Context, userID string, runID int64, after, limit int, watch bool) ([]RunEvent, Run, error)
	// RequestStop asks the conversation's running turn, if any, to stop,
	// and wakes the replica that runs it. It returns the run (Run{} when
	// none was running); an unknown conversation is ErrNotFound.
	RequestStop(ctx context.Context, userID string, conversationID int64) (Run, error)
	// StopsRequested returns which of runs have been asked to stop.
	StopsRequested(ctx context.Context, runs []int64) ([]int64, error)
	// ChatConversation is TurnStore.ChatConversation: the conversation a
	// client's chat id names, ErrNotFound when none.
	ChatConversation(ctx context.Context, userID, chatID string) (int64, error)
}

// The channels of a run's notifications. A notification only wakes: what
// it is about is read from the tables.
const (
	// StopChannel is notified with a run's id when its turn is asked to stop.
	StopChannel = "taskchat_stop"
	// RunChannelPrefix, with a run's id, is the channel its writes notify
	// while a follower watches it.
	RunChannelPrefix = "taskchat_run_"
)

// RunChannel is the channel run id's writes notify.
func RunChannel(id int64) string { return RunChannelPrefix + strconv.FormatInt(id, 10) }

// RunOfChannel returns the run whose channel is channel.
func RunOfChannel(channel string) (int64, bool) {
	s, ok := strings.CutPrefix(channel, RunChannelPrefix)
	id, err := strconv.ParseInt(s, 10, 64)
	return id, ok && err == nil && id > 0
}
