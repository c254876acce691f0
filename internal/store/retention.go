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
// expired idempotency keys. A user's tasks are never touched. Whatever
// the days, it deletes turns' runs once RunsFor has passed, and stream
// leases a minute after they ran out: buffers, not history.
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
	StreamLeases    int64 // those a replica that died left behind
	Conversations   int64 // each with its messages, chat id and tool calls
	ToolCalls       int64 // those that belonged to no conversation
	IdempotencyKeys int64
	UsageDays       int64 // token_usage rows, one per user and day
	Batches         int   // the statements that deleted something
}

// Total is every row a pass deleted, not counting those that went with
// their conversation.
func (s Swept) Total() int64 {
	return s.Runs + s.StreamLeases + s.Conversations + s.ToolCalls + s.IdempotencyKeys + s.UsageDays
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
	if err := r.drain(ctx, r.batchStep(stmt.DeleteOldRuns, r.cfg.RunsFor), &s.Runs, &s.Batches); err != nil {
		return s, err
	}
	if err := r.drain(ctx, r.batchStep(stmt.DeleteOldStreamLeases, time.Minute), &s.StreamLeases, &s.Batches); err != nil || r.cfg.Days == 0 {
		return s, err // zero days keeps everything else
	}
	for _, t := range []struct {
		step  func(context.Context) (deleted int64, more bool, err error)
		count *int64
	}{
		{r.conversationStep(), &s.Conversations},
		{r.batchStep(stmt.DeleteOldDetachedCalls, r.cfg.Days), &s.ToolCalls},
		{r.batchStep(stmt.DeleteExpiredKeys, r.cfg.KeyTTL), &s.IdempotencyKeys},
		{r.batchStep(stmt.DeleteOldUsage, r.cfg.Days), &s.UsageDays},
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

// conversationStep runs DeleteOldConversations. More may be left while a
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
		if err := r.pool.QueryRow(ctx, stmt.DeleteOldConversations, r.cfg.Days, pick, messages).Scan(&deleted, &found, &left); err != nil {
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
