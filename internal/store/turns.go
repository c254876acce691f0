package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"math"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/taskchat/taskchat/internal/tasks"
)

// Turns writes chat turns: the claim on a conversation, the user message,
// the reply with its tool calls, the idempotency keys of chat requests, and
// the recovery of turns cut short. It implements tasks.TurnStore. A turn's
// own writes cost two round trips, StartTurn and FinishTurn, each sending
// all its statements at once; a keyed request adds BeginIdempotent, and
// every task change a tool makes is one more (see Tasks), which records the
// call too.
type Turns struct {
	pool *pgxpool.Pool
}

// NewTurns returns the turn tables on pool.
func NewTurns(pool *pgxpool.Pool) *Turns {
	return &Turns{pool: pool}
}

var _ tasks.TurnStore = (*Turns)(nil)

// StartTurn loads or creates the conversation, claims it, finishes a turn
// of it that was cut short, stores the user message and loads the history,
// in one round trip, after checking the user's daily token budget when
// there is one. Its commit does not wait for the disk; see commitLazily.
func (s *Turns) StartTurn(ctx context.Context, in tasks.TurnStart) (tasks.Turn, error) {
	token := newToken()
	b := &pgx.Batch{}
	commitLazily(b)
	queueChecks(b, in)
	var turn tasks.Turn
	queueTimeZone(b, in.UserID, &turn)
	claimed := true
	if in.ConversationID == 0 {
		queueNewConversation(b, in, token, &turn)
	} else {
		claimed = false
		queueClaim(b, in, token, &turn, &claimed)
		// Under the claim just taken, a turn cut short before this one (its
		// calls have no reply) gets its interrupted reply, ahead of the new
		// message, so the history below shows the model what it did.
		b.Queue(stmt.RecoverConversationClaimed, in.ConversationID, in.UserID, token)
		queueUserMessage(b, in, token, &turn)
		queueHistory(b, in, &turn)
		queueSummary(b, in, &turn)
	}
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		if re := refusal(err, in); re != nil {
			return tasks.Turn{}, re
		}
		if chatIDTaken(err) {
			return tasks.Turn{}, tasks.ErrConversationBusy
		}
		return tasks.Turn{}, translate(err)
	}
	if !claimed {
		return tasks.Turn{}, s.whyNotClaimed(ctx, in.UserID, in.ConversationID)
	}
	turn.ClaimToken = token
	return turn, nil
}

// commitLazily makes the transaction of batch b commit without waiting for
// its WAL to reach the disk (synchronous_commit off, for this transaction
// only). It is for StartTurn, the one write on a turn's critical path whose
// durability can wait: whatever a turn does next — a tool's write,
// FinishTurn, AbandonTurn — commits synchronously, and a synchronous commit
// flushes the WAL up to its own record, so up to StartTurn's too. The user
// message and the claim are therefore on disk before any tool's effect is,
// and before the client hears how the turn ended; only a database crash in
// the meantime could lose them, and that turn then fails as a whole. Until
// then they are committed as usual: visible to every other transaction.
func commitLazily(b *pgx.Batch) {
	b.Queue(stmt.CommitLazily)
}

// planFromIndexes has the statements queued after it in batch b, in its
// transaction only, reach their rows through an index. Left free, the
// planner reads a conversation's history by fetching every message of the
// conversation (a bitmap scan) and sorting them for the newest fifty, when
// it believes the conversation small: on tables it has no statistics of
// yet, and in a generic plan, which assumes the average conversation. At
// 10,000 messages that was a full read of the conversation on every turn.
// Without bitmap and sequential scans, what is left is walking the index
// (conversation_id, id) backwards, which stops after fifty rows whatever the
// statistics say (TestHistoryPlansStayBounded). queueHistory queues it
// before the history statements, which run nowhere else: their cached
// plans are made under these settings too.
func planFromIndexes(b *pgx.Batch) {
	b.Queue(stmt.PlanFromIndexes)
}

// queueNewConversation creates a conversation, claimed, with its first
// message, remembers it under the client's chat id (if any), and tells the
// request's idempotency key (if any) its turn.
func queueNewConversation(b *pgx.Batch, in tasks.TurnStart, token string, turn *tasks.Turn) {
	c, m := &turn.Conversation, &turn.UserMessage
	b.Queue(stmt.StartConversation,
		in.UserID, tasks.TitleFrom(in.Message), token, in.ClaimFor, in.Message, nullable(in.IdempotencyKey), nullable(in.ChatID)).
		QueryRow(func(row pgx.Row) error {
			return row.Scan(&c.ID, &c.UserID, &c.Title, &c.CreatedAt, &c.UpdatedAt,
				&m.ID, &m.ConversationID, &m.Role, &m.Content, &m.Interrupted, &m.CreatedAt, &turn.RunID)
		})
}

// queueClaim claims an existing conversation that no turn holds; claimed
// reports whether it did.
func queueClaim(b *pgx.Batch, in tasks.TurnStart, token string, turn *tasks.Turn, claimed *bool) {
	b.Queue(stmt.ClaimConversation,
		in.ConversationID, in.UserID, token, in.ClaimFor).QueryRow(func(row pgx.Row) error {
		err := scanConversation(row, &turn.Conversation)
		*claimed = err == nil
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		return err
	})
}

// queueUserMessage stores the user message in the conversation this turn
// claimed, and tells the request's idempotency key (if any) its turn. The
// key's lock is renewed to end with the claim: a retry must not find the
// key free while the turn may still write.
func queueUserMessage(b *pgx.Batch, in tasks.TurnStart, token string, turn *tasks.Turn) {
	b.Queue(stmt.AddUserMessage,
		in.ConversationID, in.UserID, token, in.Message, nullable(in.IdempotencyKey), in.ClaimFor).QueryRow(func(row pgx.Row) error {
		u := &turn.UserMessage
		err := row.Scan(&u.ID, &u.ConversationID, &u.Role, &u.Content, &u.Interrupted, &u.CreatedAt, &turn.RunID)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		return err
	})
}

// queueHistory adds the history statements to b, read from the index
// (planFromIndexes): HistoryWindow bounds the history by count and by
// size, and the two others read what it bounds. They skip the newest
// message, the user message the same batch stores.
func queueHistory(b *pgx.Batch, in tasks.TurnStart, turn *tasks.Turn) {
	planFromIndexes(b)
	chars := int64(in.HistoryChars)
	if chars <= 0 {
		chars = math.MaxInt64
	}
	b.Queue(stmt.HistoryWindow, in.ConversationID, in.UserID, in.HistoryLimit, chars)
	b.Queue(stmt.HistoryMessages, in.ConversationID, in.UserID).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var m tasks.Message
			if err := scanMessage(rows, &m); err != nil {
				return err
			}
			turn.History = append(turn.History, m)
		}
		return rows.Err()
	})
	b.Queue(stmt.HistoryToolCalls, in.ConversationID, in.UserID).Query(func(rows pgx.Rows) error {
		return attachToolCalls(rows, turn.History)
	})
}

// whyNotClaimed tells a missing conversation from a busy one. It runs only
// when a claim failed.
func (s *Turns) whyNotClaimed(ctx context.Context, userID string, id int64) error {
	var exists bool
	err := s.pool.QueryRow(ctx, stmt.ConversationExists, id, userID).Scan(&exists)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return tasks.NotFound("conversation", id)
	case err != nil:
		return translate(err)
	}
	return tasks.ErrConversationBusy
}

// FinishTurn stores the reply, attaches every tool call of the turn to it,
// releases the claim, completes the idempotency key, adds the turn's
// usage to its user's day and ends its run, all in one statement (so one
// transaction and one round trip). The calls that changed
// a task were recorded when they ran; the others are recorded here. The
// reply is stored even if the claim expired meanwhile: nothing a turn did
// is ever dropped.
func (s *Turns) FinishTurn(ctx context.Context, e tasks.TurnEnd) (tasks.Message, error) {
	calls := newCallColumns(e.ToolCalls)
	var key, response *string
	if e.IdempotencyKey != "" {
		r, _ := tasks.StorableJSON(e.Response)
		key, response = &e.IdempotencyKey, ptr(string(r))
	}
	e.Reply = tasks.StorableText(e.Reply)
	run := runEndOf(e.Run)
	m := tasks.Message{ConversationID: e.ConversationID, Role: tasks.RoleAssistant, Content: e.Reply, Interrupted: e.Interrupted}
	err := s.pool.QueryRow(ctx, stmt.FinishTurn,
		e.ConversationID, e.UserID, e.ClaimToken, e.Reply, e.Interrupted,
		calls.callIDs, calls.tools, calls.args, calls.results, calls.isErr, calls.rounds, calls.durations,
		response, key, e.TurnID, calls.seqs, max(e.Usage.InputTokens, 0), max(e.Usage.OutputTokens, 0),
		run.id, run.first, run.count, run.events, tasks.RunChannelPrefix, e.Replaces).Scan(&m.ID, &m.CreatedAt, nil)
	var pgErr *pgconn.PgError
	deletedMidway := errors.As(err, &pgErr) && pgErr.Code == "23503"
	if errors.Is(err, pgx.ErrNoRows) || deletedMidway {
		// The conversation was deleted while the turn ran. The statement
		// counted the turn's usage, unless the deletion committed while it
		// waited for the conversation's row and failed it whole: the
		// model's tokens were spent all the same, so they count apart.
		if deletedMidway {
			if err := s.RecordUsage(ctx, e.UserID, e.Usage); err != nil {
				return tasks.Message{}, err
			}
		}
		return tasks.Message{}, tasks.NotFound("conversation", e.ConversationID)
	}
	if err != nil {
		return tasks.Message{}, translate(err)
	}
	m.ToolCalls = e.ToolCalls
	return m, nil
}

// AbandonTurn releases the claim of a turn that stored no reply. It is a
// durable write, which makes StartTurn's durable too, unless it matches no
// row: then the conversation was deleted, its messages with it, or the
// claim lapsed, which a turn bounded by its deadline does not outlive.
func (s *Turns) AbandonTurn(ctx context.Context, userID string, conversationID int64, claimToken string) error {
	_, err := s.pool.Exec(ctx, stmt.AbandonTurn, conversationID, userID, claimToken)
	return translate(err)
}

// RecoverTurn finishes a turn that was cut short, unless a turn holds its
// conversation, and returns every call the turn recorded, in order.
func (s *Turns) RecoverTurn(ctx context.Context, userID string, turn tasks.TurnRef) ([]tasks.ToolCall, error) {
	var calls []tasks.ToolCall
	b := &pgx.Batch{}
	queueRecovery(b, turn.ConversationID, userID)
	b.Queue(stmt.TurnCalls, userID, turn.TurnID).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var c tasks.ToolCall
			if err := scanToolCall(rows, &c); err != nil {
				return err
			}
			calls = append(calls, c)
		}
		return rows.Err()
	})
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return nil, translate(err)
	}
	return calls, nil
}

// queueRecovery adds to b the statements that finish a turn of the
// conversation cut short, when no turn holds the conversation: the first
// locks the conversation's row, only when there is a turn to finish, so
// that two requests finishing it one after the other see each other's work
// (each statement of a batch reads what committed before it started).
func queueRecovery(b *pgx.Batch, conversationID int64, userID string) {
	b.Queue(stmt.LockConversationToRecover, conversationID, userID)
	b.Queue(stmt.RecoverConversationUnheld, conversationID, userID)
}

// nullable is s, or NULL when s is empty.
func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func ptr[T any](v T) *T { return &v }

func newToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = b[6]&0x0f | 0x40 // a version 4 UUID
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
