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

// insertRunFrom is the CTE body that starts the run of the turn whose user
// message the CTE src returns, for the user in parameter user, leased for
// the interval in parameter lease (the turn's claim).
func insertRunFrom(src, user, lease string) string {
	return `
			INSERT INTO turn_runs (conversation_id, user_id, turn_id, lease_until)
			SELECT ` + src + `.conversation_id, ` + user + `, ` + src + `.id, now() + ` + lease + `::interval FROM ` + src + `
			RETURNING id`
}

// runChannelOf is the SQL for tasks.RunChannel of the run id in column.
func runChannelOf(column string) string {
	return `'` + tasks.RunChannelPrefix + `' || ` + column
}

// runningTurnsExceeded is the SQLSTATE check_running_turns raises.
const runningTurnsExceeded = "TCR01"

// queueChecks queues the checks that may refuse a turn before it writes
// anything: the user's daily token budget and running turns, when set.
func queueChecks(b *pgx.Batch, in tasks.TurnStart) {
	if in.DailyTokenBudget > 0 {
		queueBudgetCheck(b, in.UserID, in.DailyTokenBudget)
	}
	if in.MaxRunningTurns > 0 {
		b.Queue(`SELECT check_running_turns($1, $2)`, in.UserID, in.MaxRunningTurns)
	}
}

// refusal turns a check's refusal into the domain's error; nil for any
// other error.
func refusal(err error, in tasks.TurnStart) error {
	if be := budgetError(err, in.DailyTokenBudget); be != nil {
		return be
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
	b.Queue(`
		WITH r AS (`+lockRun("$1", "$2", "true")+`
		), e AS (`+insertEvents("$3", "$4", "$5", "$6")+`
		), n AS (`+notifyRun+`
		)
		SELECT stop, (SELECT count(*) FROM n) FROM r`,
		runID, userID, first, len(events), batch, last).QueryRow(func(row pgx.Row) error {
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

// lockRun is the CTE body that reads run id (of user) for a write of its
// events, when the condition and holds: whether it is watched, and whether
// it was asked to stop. Its lock orders the write with a follower marking
// the run watched (see AppendRunEvents).
func lockRun(id, user, and string) string {
	return `
			SELECT id, watched, stop_requested_at IS NOT NULL AS stop FROM turn_runs
			WHERE id = ` + id + ` AND user_id = ` + user + ` AND ` + and + ` FOR SHARE`
}

// insertEvents is the CTE body that writes, for the run of CTE r, the
// count events in text from number first, last saying whether the run
// ends with them; nothing when text is NULL. A batch written again (its
// first write committed, but its answer was lost) is written once; one
// written again with more events after it overlaps it, and readers skip
// what they have read (ReadRunEvents).
func insertEvents(first, count, text, last string) string {
	return `
			INSERT INTO turn_events (run_id, first_seq, last_seq, events, last)
			SELECT id, ` + first + `::int, ` + first + `::int + ` + count + `::int - 1, ` + text + `, ` + last + `
			FROM r WHERE ` + text + `::text IS NOT NULL
			ON CONFLICT (run_id, last_seq) DO NOTHING`
}

// notifyRun is the CTE body that wakes the followers of the run of CTE r,
// when it has any; the statement must read it for it to run.
var notifyRun = `
			SELECT pg_notify(` + runChannelOf("id") + `, '') FROM r WHERE watched`

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

// runColumns are a run's columns as scanRun reads them, of turn_runs r and
// its newest batch of events e (see runLast).
const runColumns = `r.id, r.conversation_id, r.turn_id, coalesce(e.last_seq, 0), r.lease_until, coalesce(e.last, false), r.stop_requested_at IS NOT NULL, now()`

// runLast joins a run r to its newest batch of events, e.
const runLast = ` LEFT JOIN LATERAL (
		SELECT last_seq, last FROM turn_events WHERE run_id = r.id ORDER BY last_seq DESC LIMIT 1
	) e ON true`

// scanRun reads runColumns, of a left join: a conversation with no run
// leaves run zero.
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
	err := scanRun(s.pool.QueryRow(ctx, `
		SELECT c.id, `+runColumns+`
		FROM conversations c LEFT JOIN LATERAL (
			SELECT * FROM turn_runs WHERE conversation_id = c.id AND user_id = c.user_id ORDER BY id DESC LIMIT 1
		) r ON true`+runLast+`
		WHERE c.id = $1 AND c.user_id = $2`, conversationID, userID), &id, &run)
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
		b.Queue(`UPDATE turn_runs SET watched = true WHERE id = $1 AND user_id = $2 AND NOT watched`, runID, userID)
	}
	var run tasks.Run
	var found bool
	b.Queue(`SELECT r.conversation_id, `+runColumns+` FROM turn_runs r`+runLast+` WHERE r.id = $1 AND r.user_id = $2`, runID, userID).
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
	b.Queue(`
		SELECT e.first_seq, e.events FROM turn_events e JOIN turn_runs r ON r.id = e.run_id
		WHERE e.run_id = $1 AND r.user_id = $2 AND e.last_seq > $3
		ORDER BY e.last_seq LIMIT $4`, runID, userID, after, limit).Query(func(rows pgx.Rows) error {
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
	err := scanRun(s.pool.QueryRow(ctx, `
		WITH r AS (
			UPDATE turn_runs r SET stop_requested_at = coalesce(stop_requested_at, now())
			WHERE id = (SELECT id FROM turn_runs WHERE conversation_id = $1 AND user_id = $2 ORDER BY id DESC LIMIT 1)
			  AND user_id = $2 AND lease_until > now()
			  AND NOT EXISTS (SELECT 1 FROM turn_events e WHERE e.run_id = r.id AND e.last)
			RETURNING *
		), n AS (
			SELECT pg_notify('`+tasks.StopChannel+`', id::text) FROM r
		)
		SELECT c.id, `+runColumns+`
		FROM conversations c LEFT JOIN r ON (SELECT count(*) FROM n) >= 0`+runLast+`
		WHERE c.id = $1 AND c.user_id = $2`, conversationID, userID), &id, &run)
	if errors.Is(err, pgx.ErrNoRows) {
		return tasks.Run{}, tasks.NotFound("conversation", conversationID)
	}
	return run, translate(err)
}

// StopsRequested returns which of runs were asked to stop. It is the one
// statement here not scoped to a user: a replica asks it of the runs it
// runs itself, whoever's they are, when it cannot hear stops by NOTIFY.
func (s *Runs) StopsRequested(ctx context.Context, runs []int64) ([]int64, error) {
	rows, err := s.pool.Query(ctx, `SELECT id FROM turn_runs WHERE id = ANY($1) AND stop_requested_at IS NOT NULL`, runs)
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
