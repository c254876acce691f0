package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/taskchat/taskchat/internal/tasks"
)

// RetentionConfig says what a retention pass deletes, and how gently.
type RetentionConfig struct {
	// Days is RETENTION_DAYS: conversations untouched for longer go, and
	// with them, or on their own, the history that grows with use.
	Days int
	// KeyTTL is how long an idempotency key is kept; older ones go.
	KeyTTL time.Duration
	// Batch is the most rows one statement deletes (a conversation counts
	// as one, its messages going with it).
	Batch int
	// BatchMessages is the most messages a statement deletes with its
	// conversations (0: 50 × Batch): fewer conversations go at once when
	// they are long, so that no statement deletes millions of rows in one
	// transaction. A conversation is never split: one that alone holds
	// more goes whole, on its own.
	BatchMessages int
	// RunsFor is how long a turn's run (its events, see Runs) is kept
	// after its lease ended (the turn's claim: its timeout and a margin).
	// Runs are swept whatever Days says: they are a stream's buffer, not
	// history.
	RunsFor time.Duration
	// Pause is the least wait between two statements; a statement that
	// took longer is followed by a wait as long as it took, so that a pass
	// through a large backlog keeps its connection busy at most half the
	// time and leaves the database to the turns.
	Pause time.Duration
}

// Retention deletes what RETENTION_DAYS no longer keeps: conversations
// whose last activity is older (their messages, chat ids and tool calls
// with them); tool calls that belong to no conversation (MCP calls, those
// of deleted conversations) and are older; token usage of older days; and
// expired idempotency keys. A user's tasks are never touched.
//
// It is the one part of the store that works across users: every statement
// picks its rows by age, not by user. Several replicas may run it at once:
// each statement locks the rows it picks with SKIP LOCKED, so two passes
// share the work instead of waiting on each other or deleting a row twice.
type Retention struct {
	pool *pgxpool.Pool
	cfg  RetentionConfig
}

// NewRetention returns the retention of the tables on pool.
func NewRetention(pool *pgxpool.Pool, cfg RetentionConfig) *Retention {
	return &Retention{pool: pool, cfg: cfg}
}

// Swept counts what one pass deleted.
type Swept struct {
	Runs            int64 // each with its events
	Conversations   int64 // each with its messages, chat id and tool calls
	ToolCalls       int64 // those that belonged to no conversation
	IdempotencyKeys int64
	UsageDays       int64 // token_usage rows, one per user and day
	Batches         int   // the statements that deleted something
}

// Total is every row a pass deleted, not counting those that went with
// their conversation.
func (s Swept) Total() int64 {
	return s.Runs + s.Conversations + s.ToolCalls + s.IdempotencyKeys + s.UsageDays
}

// Sweep runs one pass: each table in batches of at most Batch rows, one
// short transaction each, at least Pause apart, until a batch finds fewer
// than Batch rows to delete (conversations, until one finds fewer than it
// may pick and leaves none of them; see conversationStep). It returns what
// it deleted, also when ctx ends it early (the statement under way then
// rolls back whole).
func (r *Retention) Sweep(ctx context.Context) (Swept, error) {
	var s Swept
	if r.cfg.Days < 0 || r.cfg.Batch < 1 || r.cfg.RunsFor <= 0 {
		return s, fmt.Errorf("retention of %d days and runs for %s in batches of %d: %w", r.cfg.Days, r.cfg.RunsFor, r.cfg.Batch, tasks.ErrInvalid)
	}
	if err := r.drain(ctx, r.batchStep(deleteOldRuns, r.cfg.RunsFor), &s.Runs, &s.Batches); err != nil || r.cfg.Days == 0 {
		return s, err // zero days keeps everything else
	}
	for _, t := range []struct {
		step  func(context.Context) (deleted int64, more bool, err error)
		count *int64
	}{
		{r.conversationStep(), &s.Conversations},
		{r.batchStep(deleteOldDetachedCalls, r.cfg.Days), &s.ToolCalls},
		{r.batchStep(deleteExpiredKeys, r.cfg.KeyTTL), &s.IdempotencyKeys},
		{r.batchStep(deleteOldUsage, r.cfg.Days), &s.UsageDays},
	} {
		if err := r.drain(ctx, t.step, t.count, &s.Batches); err != nil {
			return s, err
		}
	}
	return s, nil
}

// drain runs step, which deletes one batch and says whether more may be
// left, until it deletes nothing or says no more, adding what it deleted to
// count.
func (r *Retention) drain(ctx context.Context, step func(context.Context) (int64, bool, error), count *int64, batches *int) error {
	for {
		start := time.Now()
		n, more, err := step(ctx)
		if err != nil {
			return translate(err)
		}
		if n == 0 {
			return nil
		}
		*count += n
		*batches++
		if !more {
			return nil
		}
		if err := pause(ctx, max(r.cfg.Pause, time.Since(start))); err != nil {
			return err
		}
	}
}

// batchStep runs statement sql, which deletes at most $2 rows older than
// $1; a full batch may leave more.
func (r *Retention) batchStep(sql string, age any) func(context.Context) (int64, bool, error) {
	return func(ctx context.Context) (int64, bool, error) {
		tag, err := r.pool.Exec(ctx, sql, age, r.cfg.Batch)
		n := tag.RowsAffected()
		return n, n == int64(r.cfg.Batch), err
	}
}

// conversationStep runs deleteOldConversations. More may be left while a
// statement leaves some of what it picked (for their messages' sake) or
// picks as many as it may. A statement that leaves some has the next pick
// one more than it deleted, so long conversations are not counted, and
// locked, again and again while they wait their turn; a statement that
// deletes all it picked doubles the pick again, up to a batch.
func (r *Retention) conversationStep() func(context.Context) (int64, bool, error) {
	messages := r.cfg.BatchMessages
	if messages <= 0 {
		messages = 50 * r.cfg.Batch
	}
	pick := int64(r.cfg.Batch)
	return func(ctx context.Context) (int64, bool, error) {
		var deleted, found, left int64
		if err := r.pool.QueryRow(ctx, deleteOldConversations, r.cfg.Days, pick, messages).Scan(&deleted, &found, &left); err != nil {
			return 0, false, err
		}
		more := left > 0 || found == pick
		if left > 0 {
			pick = deleted + 1
		} else {
			pick = min(2*pick, int64(r.cfg.Batch))
		}
		return deleted, more, nil
	}
}

// pause waits for d, or until ctx ends.
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// The statements below pick a batch in a CTE that locks its rows, then
// delete them by key: "= ANY(ARRAY(...))" makes that an index (or TID) scan
// of the batch's keys, whatever the planner thinks of the condition
// checked again beside it, which on a join it may well scan the whole
// range of old rows for, in every batch.

// deleteOldConversations deletes a batch of conversations untouched for $1
// days, oldest first, with their tool calls; their messages and chat ids go
// by cascade. Its first CTE locks the rows it picks and skips those another
// pass or a turn has locked; a row a turn claimed or answered meanwhile is
// checked again against its newest version (READ COMMITTED's recheck of
// locked rows), and so is it by the DELETE: a conversation with a new turn
// is never deleted, nor one a turn holds, even with a claim made to look
// old. Of the $2 it picks, it deletes the oldest whose messages come to at
// most $3 together, and always the first: a conversation is never split.
// No conversation's messages are counted past $3 + 1, which is enough to
// know it does not fit. Deleting the calls here spares the detaching
// update that deleting the conversation alone would make each of them
// (see migration 000005): they are as old as it is, so the next statement
// would delete them anyway.
// It returns how many it deleted, how many it picked, and how many of
// those it left for the next statement.
const deleteOldConversations = `
	WITH picked AS (
		SELECT id, updated_at FROM conversations
		WHERE updated_at < now() - make_interval(days => $1) AND ` + unheld + `
		ORDER BY updated_at
		LIMIT $2
		FOR UPDATE SKIP LOCKED
	), sized AS (
		SELECT id,
		       row_number() OVER w AS pos,
		       sum((SELECT count(*) FROM (
		           SELECT FROM messages m WHERE m.conversation_id = p.id LIMIT $3::bigint + 1) n)) OVER w AS upto
		FROM picked p
		WINDOW w AS (ORDER BY updated_at, id)
	), doomed AS (
		SELECT id FROM sized WHERE pos = 1 OR upto <= $3::bigint
	), calls AS (
		DELETE FROM tool_calls WHERE conversation_id = ANY(ARRAY(SELECT id FROM doomed))
	), gone AS (
		DELETE FROM conversations
		WHERE id = ANY(ARRAY(SELECT id FROM doomed))
		  AND updated_at < now() - make_interval(days => $1) AND ` + unheld + `
		RETURNING id
	)
	SELECT (SELECT count(*) FROM gone), (SELECT count(*) FROM picked),
	       (SELECT count(*) FROM picked) - (SELECT count(*) FROM doomed)`

// deleteOldDetachedCalls deletes a batch of tool calls older than $1 days
// that belong to no conversation: an MCP client's, or those of a
// conversation its user deleted. A call of a kept conversation stays with
// it, however old: its thread shows it.
const deleteOldDetachedCalls = `
	WITH old AS (
		SELECT id FROM tool_calls
		WHERE conversation_id IS NULL AND created_at < now() - make_interval(days => $1)
		ORDER BY created_at
		LIMIT $2
		FOR UPDATE SKIP LOCKED
	)
	DELETE FROM tool_calls WHERE id = ANY(ARRAY(SELECT id FROM old)) AND conversation_id IS NULL`

// deleteExpiredKeys deletes a batch of idempotency keys older than $1, as
// BeginIdempotent does for the user who sends a new key; a key reused as
// new meanwhile is checked again, by its new age. Rows are named by ctid,
// which a row keeps while this statement holds its lock.
const deleteExpiredKeys = `
	WITH old AS (
		SELECT ctid FROM idempotency_keys
		WHERE created_at < now() - $1::interval
		ORDER BY created_at
		LIMIT $2
		FOR UPDATE SKIP LOCKED
	)
	DELETE FROM idempotency_keys
	WHERE ctid = ANY(ARRAY(SELECT ctid FROM old)) AND created_at < now() - $1::interval`

// deleteOldRuns deletes a batch of runs whose lease ended more than $1
// ago, with their events by cascade. A run's lease ends with its turn's
// claim, so a run is kept at least $1 after its turn ended, and at most
// the turn's longest run more.
const deleteOldRuns = `
	WITH old AS (
		SELECT id FROM turn_runs
		WHERE lease_until < now() - $1::interval
		ORDER BY lease_until
		LIMIT $2
		FOR UPDATE SKIP LOCKED
	)
	DELETE FROM turn_runs WHERE id = ANY(ARRAY(SELECT id FROM old))`

// deleteOldUsage deletes a batch of token usage rows of UTC days more than
// $1 days before today. The daily budget reads today's row only.
const deleteOldUsage = `
	WITH old AS (
		SELECT ctid FROM token_usage
		WHERE day < (now() AT TIME ZONE 'UTC')::date - $1::int
		ORDER BY day
		LIMIT $2
		FOR UPDATE SKIP LOCKED
	)
	DELETE FROM token_usage
	WHERE ctid = ANY(ARRAY(SELECT ctid FROM old)) AND day < (now() AT TIME ZONE 'UTC')::date - $1::int`
