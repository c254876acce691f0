package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/taskchat/taskchat/internal/tasks"
)

// Runs keeps the turns' runs (migration 000013): the log of each turn's
// events, a batch of them a row, and the stops asked of them. A run starts
// with its turn, in StartTurn's statement; what it writes after that is one
// statement a batch, which also tells whether the turn was asked to stop
// and, only while a follower waits, wakes it with a NOTIFY. It implements
// tasks.RunStore.
type Runs struct {
	pool *pgxpool.Pool
}

// NewRuns returns the run tables on pool.
func NewRuns(pool *pgxpool.Pool) *Runs {
	return &Runs{pool: pool}
}

var _ tasks.RunStore = (*Runs)(nil)

// runningTurnsExceeded is the SQLSTATE check_running_turns raises.
const runningTurnsExceeded = "TCR01"

// queueChecks queues the checks that may refuse a turn before it writes
// anything: the user's daily token budget, turn rate, running turns and
// open streams, when set. A refusal aborts the batch's transaction, so a turn refused
// for any of them takes no token from its bucket either.
func queueChecks(b *pgx.Batch, in tasks.TurnStart) {
	if in.TurnRate.Limited() {
		queueTakeToken(b, in.UserID, tasks.BucketTurns, in.TurnRate)
	}
	if in.DailyTokenBudget > 0 {
		queueBudgetCheck(b, in.UserID, in.DailyTokenBudget)
	}
	if in.MaxRunningTurns > 0 {
		b.Queue(stmt.CheckRunningTurns, in.UserID, in.MaxRunningTurns)
	}
	if in.Stream != nil {
		queueOpenStream(b, in.UserID, *in.Stream)
	}
}

// refusal turns a check's refusal into the domain's error; nil for any
// other error.
func refusal(err error, in tasks.TurnStart) error {
	if be := budgetError(err, in.DailyTokenBudget); be != nil {
		return be
	}
	if re := rateError(err, in.TurnRate); re != nil {
		return re
	}
	if in.Stream != nil {
		if se := streamsError(err, *in.Stream); se != nil {
			return se
		}
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == runningTurnsExceeded {
		return &tasks.RunningTurnsError{Max: in.MaxRunningTurns}
	}
	return nil
}

// AppendRunEvents writes a batch of the run's events and, when last, ends
// the run, in one round trip. It commits without waiting for the disk
// (commitLazily): the events are a stream's buffer, and the conversation's
// messages, written durably, are the record. The run's row is only locked,
// not updated, so the common turn writes it once; the lock orders this
// write with a follower marking the run watched: either this write sees
// the mark and NOTIFYs, or the follower's read, after its mark, sees the
// events.
func (s *Runs) AppendRunEvents(ctx context.Context, userID string, runID int64, first int, events [][]byte, last bool) (bool, error) {
	batch := eventsText(events)
	var stop, found bool
	b := &pgx.Batch{}
	commitLazily(b)
	b.Queue(stmt.AppendRunEvents, runID, userID, first, len(events), batch, last, tasks.RunChannelPrefix).QueryRow(func(row pgx.Row) error {
		err := row.Scan(&stop, nil)
		found = err == nil
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		return err
	})
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return false, translate(err)
	}
	if !found {
		// The conversation was deleted, its runs with it: nobody follows.
		return false, tasks.NotFound("run", runID)
	}
	return stop, nil
}

// runEnd is a tasks.RunEnd as FinishTurn's parameters: all NULL without one.
type runEnd struct {
	id, first, count *int64
	events           *string
}

func runEndOf(e *tasks.RunEnd) runEnd {
	if e == nil || e.RunID == 0 || len(e.Events) == 0 {
		return runEnd{}
	}
	return runEnd{id: &e.RunID, first: ptr(int64(e.First)), count: ptr(int64(len(e.Events))), events: eventsText(e.Events)}
}

// eventsText is events as turn_events keeps a batch: a JSON array.
func eventsText(events [][]byte) *string {
	if len(events) == 0 {
		return nil
	}
	return ptr(string(append(append([]byte{'['}, bytes.Join(events, []byte{','})...), ']')))
}

// scanRun reads a conversation's id and a run's columns (see sql/runs.sql),
// of a left join: a conversation with no run leaves run zero.
func scanRun(row pgx.Row, conversationID *int64, run *tasks.Run) error {
	var id, conv, turn *int64
	var seq *int
	var lease *time.Time
	var ended, stop *bool
	var now time.Time
	if err := row.Scan(conversationID, &id, &conv, &turn, &seq, &lease, &ended, &stop, &now); err != nil {
		return err
	}
	*run = tasks.Run{ReadAt: now}
	if id != nil {
		*run = tasks.Run{ID: *id, ConversationID: *conv, TurnID: *turn, LastSeq: *seq, LeaseUntil: *lease, Ended: *ended, StopRequested: *stop, ReadAt: now}
	}
	return nil
}

// LatestRun returns the conversation's newest run, or Run{} when it has
// none; ErrNotFound when the user has no such conversation.
func (s *Runs) LatestRun(ctx context.Context, userID string, conversationID int64) (tasks.Run, error) {
	var run tasks.Run
	var id int64
	err := scanRun(s.pool.QueryRow(ctx, stmt.LatestRun, conversationID, userID), &id, &run)
	if errors.Is(err, pgx.ErrNoRows) {
		return tasks.Run{}, tasks.NotFound("conversation", conversationID)
	}
	return run, translate(err)
}

// ReadRunEvents reads the run's state, then its events after after: a run
// read as ended has every event written by then. watch first marks the
// run followed, so that its next write wakes the follower.
func (s *Runs) ReadRunEvents(ctx context.Context, userID string, runID int64, after, limit int, watch bool) ([]tasks.RunEvent, tasks.Run, error) {
	b := &pgx.Batch{}
	if watch {
		b.Queue(stmt.WatchRun, runID, userID)
	}
	var run tasks.Run
	var found bool
	b.Queue(stmt.ReadRun, runID, userID).
		QueryRow(func(row pgx.Row) error {
			var conv int64
			err := scanRun(row, &conv, &run)
			found = err == nil
			if errors.Is(err, pgx.ErrNoRows) {
				return nil
			}
			return err
		})
	var events []tasks.RunEvent
	next := after // the number of the last event read
	b.Queue(stmt.ReadRunEvents, runID, userID, after, limit).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var first int
			var batch []byte
			if err := rows.Scan(&first, &batch); err != nil {
				return err
			}
			var raws []json.RawMessage
			if err := json.Unmarshal(batch, &raws); err != nil {
				return err
			}
			for i, raw := range raws {
				if seq := first + i; seq > next {
					events = append(events, tasks.RunEvent{Seq: seq, Data: raw})
					next = seq
				}
			}
		}
		return rows.Err()
	})
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return nil, tasks.Run{}, translate(err)
	}
	if !found {
		return nil, tasks.Run{}, tasks.NotFound("run", runID)
	}
	return events, run, nil
}

// RequestStop marks the conversation's running turn as asked to stop and
// NOTIFYs the replicas, in one statement; a stop asked again is harmless.
func (s *Runs) RequestStop(ctx context.Context, userID string, conversationID int64) (tasks.Run, error) {
	var run tasks.Run
	var id int64
	err := scanRun(s.pool.QueryRow(ctx, stmt.RequestStop, conversationID, userID, tasks.StopChannel), &id, &run)
	if errors.Is(err, pgx.ErrNoRows) {
		return tasks.Run{}, tasks.NotFound("conversation", conversationID)
	}
	return run, translate(err)
}

// StopsRequested returns which of runs were asked to stop. It is the one
// statement here not scoped to a user: a replica asks it of the runs it
// runs itself, whoever's they are, when it cannot hear stops by NOTIFY.
func (s *Runs) StopsRequested(ctx context.Context, runs []int64) ([]int64, error) {
	rows, err := s.pool.Query(ctx, stmt.StopsRequested, runs)
	if err != nil {
		return nil, translate(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	return ids, translate(err)
}

// ChatConversation returns the conversation a client's chat id names; see
// Turns.ChatConversation.
func (s *Runs) ChatConversation(ctx context.Context, userID, chatID string) (int64, error) {
	return (&Turns{pool: s.pool}).ChatConversation(ctx, userID, chatID)
}
