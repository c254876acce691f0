package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"

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
	claimed := true
	if in.ConversationID == 0 {
		queueNewConversation(b, in, token, &turn)
	} else {
		claimed = false
		queueClaim(b, in, token, &turn, &claimed)
		// Under the claim just taken, a turn cut short before this one (its
		// calls have no reply) gets its interrupted reply, ahead of the new
		// message, so the history below shows the model what it did.
		b.Queue(recoverConversation(`claim_token = $3::uuid`), in.ConversationID, in.UserID, token)
		queueUserMessage(b, in, token, &turn)
		queueHistory(b, in, &turn)
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
	b.Queue(`SELECT set_config('synchronous_commit', 'off', true)`)
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
	b.Queue(`SELECT set_config('enable_bitmapscan', 'off', true), set_config('enable_seqscan', 'off', true)`)
}

// queueNewConversation creates a conversation, claimed, with its first
// message, remembers it under the client's chat id (if any), and tells the
// request's idempotency key (if any) its turn.
func queueNewConversation(b *pgx.Batch, in tasks.TurnStart, token string, turn *tasks.Turn) {
	c, m := &turn.Conversation, &turn.UserMessage
	b.Queue(`
		WITH c AS (
			INSERT INTO conversations (user_id, title, claim_token, claimed_until)
			VALUES ($1, $2, $3, now() + $4::interval)
			RETURNING id, user_id, title, created_at, updated_at
		), m AS (
			INSERT INTO messages (conversation_id, user_id, role, content)
			SELECT id, user_id, 'user', $5 FROM c
			RETURNING id, conversation_id, role, content, interrupted, created_at
		), k AS (
			UPDATE idempotency_keys SET conversation_id = m.conversation_id, turn_id = m.id, locked_until = now() + $4::interval
			FROM m WHERE idempotency_keys.user_id = $1 AND key = $6
		), r AS (`+insertRunFrom("m", "$1", "$4")+`
		)`+chatIDInsert+`
		SELECT c.id, c.user_id, c.title, c.created_at, c.updated_at,
		       m.id, m.conversation_id, m.role, m.content, m.interrupted, m.created_at, r.id
		FROM c, m, r`,
		in.UserID, tasks.TitleFrom(in.Message), token, in.ClaimFor, in.Message, nullable(in.IdempotencyKey), nullable(in.ChatID)).
		QueryRow(func(row pgx.Row) error {
			return row.Scan(&c.ID, &c.UserID, &c.Title, &c.CreatedAt, &c.UpdatedAt,
				&m.ID, &m.ConversationID, &m.Role, &m.Content, &m.Interrupted, &m.CreatedAt, &turn.RunID)
		})
}

// queueClaim claims an existing conversation that no turn holds; claimed
// reports whether it did.
func queueClaim(b *pgx.Batch, in tasks.TurnStart, token string, turn *tasks.Turn, claimed *bool) {
	b.Queue(`
		UPDATE conversations
		SET claim_token = $3, claimed_until = now() + $4::interval, updated_at = now()
		WHERE id = $1 AND user_id = $2 AND `+unheld+`
		RETURNING id, user_id, title, created_at, updated_at`,
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
	b.Queue(`
		WITH m AS (
			INSERT INTO messages (conversation_id, user_id, role, content)
			SELECT id, user_id, 'user', $4 FROM conversations
			WHERE id = $1 AND user_id = $2 AND claim_token = $3
			RETURNING id, conversation_id, role, content, interrupted, created_at
		), k AS (
			UPDATE idempotency_keys SET conversation_id = m.conversation_id, turn_id = m.id, locked_until = now() + $6::interval
			FROM m WHERE idempotency_keys.user_id = $2 AND key = $5
		), r AS (`+insertRunFrom("m", "$2", "$6")+`
		)
		SELECT m.id, m.conversation_id, m.role, m.content, m.interrupted, m.created_at, r.id FROM m, r`,
		in.ConversationID, in.UserID, token, in.Message, nullable(in.IdempotencyKey), in.ClaimFor).QueryRow(func(row pgx.Row) error {
		u := &turn.UserMessage
		err := row.Scan(&u.ID, &u.ConversationID, &u.Role, &u.Content, &u.Interrupted, &u.CreatedAt, &turn.RunID)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		return err
	})
}

// queueHistory adds the two history queries to b, read from the index
// (planFromIndexes). They skip the newest message, the user message the
// same batch stores.
func queueHistory(b *pgx.Batch, in tasks.TurnStart, turn *tasks.Turn) {
	planFromIndexes(b)
	b.Queue(historyMessages, in.ConversationID, in.UserID, in.HistoryLimit).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var m tasks.Message
			if err := scanMessage(rows, &m); err != nil {
				return err
			}
			turn.History = append(turn.History, m)
		}
		return rows.Err()
	})
	b.Queue(historyToolCalls, in.ConversationID, in.UserID, in.HistoryLimit).Query(func(rows pgx.Rows) error {
		return attachToolCalls(rows, turn.History)
	})
}

// historyMessages is a conversation's newest $3 messages but the newest,
// oldest first.
const historyMessages = `
	SELECT id, conversation_id, role, content, interrupted, created_at FROM (
		SELECT id, conversation_id, role, content, interrupted, created_at
		FROM messages WHERE conversation_id = $1 AND user_id = $2
		ORDER BY id DESC LIMIT $3 OFFSET 1
	) newest ORDER BY id`

// historyToolCalls is the tool calls of historyMessages' replies.
const historyToolCalls = `
	SELECT message_id, ` + toolCallColumns + `
	FROM tool_calls
	WHERE conversation_id = $1 AND user_id = $2 AND message_id >= (
		SELECT coalesce(min(id), 0) FROM (
			SELECT id FROM messages WHERE conversation_id = $1 AND user_id = $2
			ORDER BY id DESC LIMIT $3 + 1
		) newest)
	ORDER BY message_id, seq`

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
	err := s.pool.QueryRow(ctx, `
		WITH m AS (
			INSERT INTO messages (conversation_id, user_id, role, content, interrupted)
			SELECT id, user_id, 'assistant', $4, $5 FROM conversations WHERE id = $1 AND user_id = $2
			RETURNING id, created_at
		), t AS (
			INSERT INTO tool_calls AS c (conversation_id, message_id, turn_id, user_id, call_id, tool, arguments, result, is_error, round, seq, duration_ms)
			SELECT $1, m.id, $15, $2, x.call_id, x.tool, x.arguments::jsonb, x.result::jsonb, x.is_error, x.round, x.seq, x.duration_ms
			FROM m, unnest($6::text[], $7::text[], $8::text[], $9::text[], $10::bool[], $11::int[], $12::int[], $16::int[])
				AS x(call_id, tool, arguments, result, is_error, round, duration_ms, seq)
			ON CONFLICT (turn_id, seq) DO UPDATE SET message_id = excluded.message_id, duration_ms = excluded.duration_ms
			WHERE c.user_id = excluded.user_id AND c.message_id IS NULL
		), c AS (
			UPDATE conversations SET claim_token = NULL, claimed_until = NULL, updated_at = now()
			WHERE id = $1 AND user_id = $2 AND claim_token = $3
		), k AS (
			UPDATE idempotency_keys SET response = $13::jsonb, conversation_id = $1, turn_id = $15, locked_until = NULL
			WHERE user_id = $2 AND key = $14 AND EXISTS (SELECT 1 FROM m)
			  AND response IS NULL AND (turn_id IS NULL OR turn_id = $15)
		), u AS (
			INSERT INTO token_usage AS u (user_id, day, input_tokens, output_tokens, turns)
			VALUES ($2, (now() AT TIME ZONE 'UTC')::date, $17, $18, 1)
			ON CONFLICT (user_id, day) DO UPDATE SET input_tokens = u.input_tokens + excluded.input_tokens,
				output_tokens = u.output_tokens + excluded.output_tokens, turns = u.turns + 1
		), lc AS (
			-- The conversation's lock before the run's: a delete of the
			-- conversation takes them in that order (its run goes by
			-- cascade), so the two never wait on each other in a circle.
			SELECT id FROM conversations WHERE id = $1 AND user_id = $2 AND $19::bigint IS NOT NULL FOR NO KEY UPDATE
		), r AS (`+lockRun("$19", "$2", "EXISTS (SELECT 1 FROM lc) AND EXISTS (SELECT 1 FROM m)")+`
		), ev AS (`+insertEvents("$20", "$21", "$22", "true")+`
		), nt AS (`+notifyRun+`
		)
		SELECT id, created_at, (SELECT count(*) FROM nt) FROM m`,
		e.ConversationID, e.UserID, e.ClaimToken, e.Reply, e.Interrupted,
		calls.callIDs, calls.tools, calls.args, calls.results, calls.isErr, calls.rounds, calls.durations,
		response, key, e.TurnID, calls.seqs, max(e.Usage.InputTokens, 0), max(e.Usage.OutputTokens, 0),
		run.id, run.first, run.count, run.events).Scan(&m.ID, &m.CreatedAt, nil)
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
	_, err := s.pool.Exec(ctx, `
		UPDATE conversations SET claim_token = NULL, claimed_until = NULL
		WHERE id = $1 AND user_id = $2 AND claim_token = $3`, conversationID, userID, claimToken)
	return translate(err)
}

// RecoverTurn finishes a turn that was cut short, unless a turn holds its
// conversation, and returns every call the turn recorded, in order.
func (s *Turns) RecoverTurn(ctx context.Context, userID string, turn tasks.TurnRef) ([]tasks.ToolCall, error) {
	var calls []tasks.ToolCall
	b := &pgx.Batch{}
	queueRecovery(b, turn.ConversationID, userID)
	b.Queue(`
		SELECT `+toolCallColumns+` FROM tool_calls
		WHERE user_id = $1 AND turn_id = $2 ORDER BY seq`, userID, turn.TurnID).Query(func(rows pgx.Rows) error {
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

// unheld is the condition on a conversation's row that no turn holds it.
const unheld = `(claimed_until IS NULL OR claimed_until < now())`

// queueRecovery adds to b the statements that finish a turn of the
// conversation cut short, when no turn holds the conversation: the first
// locks the conversation's row, only when there is a turn to finish, so
// that two requests finishing it one after the other see each other's work
// (each statement of a batch reads what committed before it started).
func queueRecovery(b *pgx.Batch, conversationID int64, userID string) {
	b.Queue(`
		SELECT 1 FROM conversations
		WHERE id = $1 AND user_id = $2 AND `+unheld+` AND EXISTS (
			SELECT 1 FROM tool_calls WHERE conversation_id = $1 AND user_id = $2 AND message_id IS NULL)
		FOR UPDATE`, conversationID, userID)
	b.Queue(recoverConversation(unheld), conversationID, userID)
}

// recoverConversation is the statement that finishes a turn of conversation
// $1 (user $2) that was cut short — tool calls that changed tasks, recorded
// with no reply — when the conversation's row matches held: the calls get
// an interrupted reply with no text. At most one turn of a conversation is
// ever in that state, since the next turn's StartTurn runs this first,
// under the claim it just took; other callers lock the row first (see
// queueRecovery).
func recoverConversation(held string) string {
	return `
		WITH m AS (
			INSERT INTO messages (conversation_id, user_id, role, content, interrupted)
			SELECT id, user_id, 'assistant', '', true FROM conversations
			WHERE id = $1 AND user_id = $2 AND ` + held + ` AND EXISTS (
				SELECT 1 FROM tool_calls WHERE conversation_id = $1 AND user_id = $2 AND message_id IS NULL)
			RETURNING id
		)
		UPDATE tool_calls SET message_id = m.id FROM m
		WHERE conversation_id = $1 AND user_id = $2 AND message_id IS NULL`
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
