package store

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/taskchat/taskchat/internal/tasks"
)

// Conversations holds the conversations, messages and tool_calls tables,
// and the idempotency keys of chat requests. It implements
// tasks.ConversationStore. A turn costs two round trips: StartTurn and
// FinishTurn each send all their statements at once.
type Conversations struct {
	pool *pgxpool.Pool
}

// NewConversations returns the conversation tables on pool.
func NewConversations(pool *pgxpool.Pool) *Conversations {
	return &Conversations{pool: pool}
}

var _ tasks.ConversationStore = (*Conversations)(nil)

// StartTurn loads or creates the conversation, claims it, stores the user
// message and loads the history, in one round trip. Its commit does not
// wait for the disk; see commitLazily.
func (s *Conversations) StartTurn(ctx context.Context, in tasks.TurnStart) (tasks.Turn, error) {
	token := newToken()
	b := &pgx.Batch{}
	commitLazily(b)
	if in.ConversationID == 0 {
		return s.startConversation(ctx, b, in, token)
	}
	var turn tasks.Turn
	claimed := false
	b.Queue(`
		UPDATE conversations
		SET claim_token = $3, claimed_until = now() + $4::interval, updated_at = now()
		WHERE id = $1 AND user_id = $2 AND (claimed_until IS NULL OR claimed_until < now())
		RETURNING id, user_id, title, created_at, updated_at`,
		in.ConversationID, in.UserID, token, in.ClaimFor).QueryRow(func(row pgx.Row) error {
		err := scanConversation(row, &turn.Conversation)
		claimed = err == nil
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		return err
	})
	b.Queue(`
		INSERT INTO messages (conversation_id, user_id, role, content)
		SELECT id, user_id, 'user', $4 FROM conversations
		WHERE id = $1 AND user_id = $2 AND claim_token = $3
		RETURNING id, conversation_id, role, content, interrupted, created_at`,
		in.ConversationID, in.UserID, token, in.Message).QueryRow(func(row pgx.Row) error {
		err := scanMessage(row, &turn.UserMessage)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		return err
	})
	// The newest messages before the one just stored, and their tool calls.
	queueHistory(b, in, &turn)
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
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

// queueHistory adds the two history queries to b. They skip the newest
// message, the user message the same batch stores.
func queueHistory(b *pgx.Batch, in tasks.TurnStart, turn *tasks.Turn) {
	b.Queue(`
		SELECT id, conversation_id, role, content, interrupted, created_at FROM (
			SELECT id, conversation_id, role, content, interrupted, created_at
			FROM messages WHERE conversation_id = $1 AND user_id = $2
			ORDER BY id DESC LIMIT $3 OFFSET 1
		) newest ORDER BY id`,
		in.ConversationID, in.UserID, in.HistoryLimit).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var m tasks.Message
			if err := scanMessage(rows, &m); err != nil {
				return err
			}
			turn.History = append(turn.History, m)
		}
		return rows.Err()
	})
	b.Queue(`
		SELECT message_id, call_id, tool, arguments, result, is_error, round, duration_ms, created_at
		FROM tool_calls
		WHERE conversation_id = $1 AND user_id = $2 AND message_id >= (
			SELECT coalesce(min(id), 0) FROM (
				SELECT id FROM messages WHERE conversation_id = $1 AND user_id = $2
				ORDER BY id DESC LIMIT $3 + 1
			) newest)
		ORDER BY message_id, seq`,
		in.ConversationID, in.UserID, in.HistoryLimit).Query(func(rows pgx.Rows) error {
		return attachToolCalls(rows, turn.History)
	})
}

// startConversation creates a conversation, claimed, with its first
// message; b holds what StartTurn queued before.
func (s *Conversations) startConversation(ctx context.Context, b *pgx.Batch, in tasks.TurnStart, token string) (tasks.Turn, error) {
	var turn tasks.Turn
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
		)
		SELECT c.id, c.user_id, c.title, c.created_at, c.updated_at,
		       m.id, m.conversation_id, m.role, m.content, m.interrupted, m.created_at
		FROM c, m`,
		in.UserID, tasks.TitleFrom(in.Message), token, in.ClaimFor, in.Message).QueryRow(func(row pgx.Row) error {
		return row.Scan(&c.ID, &c.UserID, &c.Title, &c.CreatedAt, &c.UpdatedAt,
			&m.ID, &m.ConversationID, &m.Role, &m.Content, &m.Interrupted, &m.CreatedAt)
	})
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return tasks.Turn{}, translate(err)
	}
	turn.ClaimToken = token
	return turn, nil
}

// whyNotClaimed tells a missing conversation from a busy one. It runs only
// when a claim failed.
func (s *Conversations) whyNotClaimed(ctx context.Context, userID string, id int64) error {
	var exists bool
	err := s.pool.QueryRow(ctx, `SELECT true FROM conversations WHERE id = $1 AND user_id = $2`, id, userID).Scan(&exists)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return tasks.NotFound("conversation", id)
	case err != nil:
		return translate(err)
	}
	return tasks.ErrConversationBusy
}

// FinishTurn stores the reply and one audit row per tool call, releases the
// claim and completes the idempotency key, all in one statement (so one
// transaction and one round trip). The reply is stored even if the claim
// expired meanwhile: nothing a turn did is ever dropped.
func (s *Conversations) FinishTurn(ctx context.Context, e tasks.TurnEnd) (tasks.Message, error) {
	n := len(e.ToolCalls)
	callIDs, tools := make([]string, n), make([]string, n)
	args, results := make([]string, n), make([]string, n)
	isErr, rounds, durations := make([]bool, n), make([]int32, n), make([]int32, n)
	for i, c := range e.ToolCalls {
		callIDs[i], tools[i], isErr[i] = auditName(c.CallID, "call"), auditName(c.Tool, "unnamed"), c.IsError
		args[i], results[i] = jsonOr(c.Arguments, "{}"), jsonOr(c.Result, "null")
		rounds[i], durations[i] = int32(c.Round), int32(c.Duration.Milliseconds())
	}
	var key, response *string
	if e.IdempotencyKey != "" {
		key, response = &e.IdempotencyKey, ptr(jsonOr(e.Response, "null"))
	}
	e.Reply = storableText(e.Reply)
	m := tasks.Message{ConversationID: e.ConversationID, Role: tasks.RoleAssistant, Content: e.Reply, Interrupted: e.Interrupted}
	err := s.pool.QueryRow(ctx, `
		WITH m AS (
			INSERT INTO messages (conversation_id, user_id, role, content, interrupted)
			SELECT id, user_id, 'assistant', $4, $5 FROM conversations WHERE id = $1 AND user_id = $2
			RETURNING id, created_at
		), t AS (
			INSERT INTO tool_calls (conversation_id, message_id, user_id, call_id, tool, arguments, result, is_error, round, seq, duration_ms)
			SELECT $1, m.id, $2, x.call_id, x.tool, x.arguments::jsonb, x.result::jsonb, x.is_error, x.round, x.seq - 1, x.duration_ms
			FROM m, unnest($6::text[], $7::text[], $8::text[], $9::text[], $10::bool[], $11::int[], $12::int[])
				WITH ORDINALITY AS x(call_id, tool, arguments, result, is_error, round, duration_ms, seq)
		), c AS (
			UPDATE conversations SET claim_token = NULL, claimed_until = NULL, updated_at = now()
			WHERE id = $1 AND user_id = $2 AND claim_token = $3
		), k AS (
			UPDATE idempotency_keys SET response = $13::jsonb, conversation_id = $1, locked_until = NULL
			WHERE user_id = $2 AND key = $14 AND EXISTS (SELECT 1 FROM m)
		)
		SELECT id, created_at FROM m`,
		e.ConversationID, e.UserID, e.ClaimToken, e.Reply, e.Interrupted,
		callIDs, tools, args, results, isErr, rounds, durations, response, key).Scan(&m.ID, &m.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		// The conversation was deleted while the turn ran.
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
func (s *Conversations) AbandonTurn(ctx context.Context, userID string, conversationID int64, claimToken string) error {
	_, err := s.pool.Exec(ctx, `
		UPDATE conversations SET claim_token = NULL, claimed_until = NULL
		WHERE id = $1 AND user_id = $2 AND claim_token = $3`, conversationID, userID, claimToken)
	return translate(err)
}

// ListConversations returns a page of userID's conversations, most
// recently active first. The cursor is opaque to callers.
func (s *Conversations) ListConversations(ctx context.Context, userID string, limit int, cursor string) (tasks.Page[tasks.Conversation], error) {
	after, afterID, err := decodeCursor(cursor)
	if err != nil {
		return tasks.Page[tasks.Conversation]{}, err
	}
	rows, err := s.pool.Query(ctx, `
		SELECT id, user_id, title, created_at, updated_at
		FROM conversations
		WHERE user_id = $1 AND ($2::timestamptz IS NULL OR (updated_at, id) < ($2, $3))
		ORDER BY updated_at DESC, id DESC
		LIMIT $4`, userID, after, afterID, limit+1)
	if err != nil {
		return tasks.Page[tasks.Conversation]{}, translate(err)
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (tasks.Conversation, error) {
		var c tasks.Conversation
		return c, scanConversation(r, &c)
	})
	if err != nil {
		return tasks.Page[tasks.Conversation]{}, translate(err)
	}
	page := tasks.Page[tasks.Conversation]{Items: list}
	if len(list) > limit {
		page.Items = list[:limit]
		last := page.Items[limit-1]
		page.Next = encodeCursor(last.UpdatedAt, last.ID)
	}
	return page, nil
}

// Messages returns every message of userID's conversation with its tool
// calls, oldest first.
func (s *Conversations) Messages(ctx context.Context, userID string, conversationID int64) ([]tasks.Message, error) {
	var (
		exists bool
		msgs   []tasks.Message
	)
	b := &pgx.Batch{}
	b.Queue(`SELECT true FROM conversations WHERE id = $1 AND user_id = $2`, conversationID, userID).
		QueryRow(func(row pgx.Row) error {
			err := row.Scan(&exists)
			if errors.Is(err, pgx.ErrNoRows) {
				return nil
			}
			return err
		})
	b.Queue(`
		SELECT id, conversation_id, role, content, interrupted, created_at
		FROM messages WHERE conversation_id = $1 AND user_id = $2 ORDER BY id`,
		conversationID, userID).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var m tasks.Message
			if err := scanMessage(rows, &m); err != nil {
				return err
			}
			msgs = append(msgs, m)
		}
		return rows.Err()
	})
	b.Queue(`
		SELECT message_id, call_id, tool, arguments, result, is_error, round, duration_ms, created_at
		FROM tool_calls WHERE conversation_id = $1 AND user_id = $2 ORDER BY message_id, seq`,
		conversationID, userID).Query(func(rows pgx.Rows) error { return attachToolCalls(rows, msgs) })
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return nil, translate(err)
	}
	if !exists {
		return nil, tasks.NotFound("conversation", conversationID)
	}
	return msgs, nil
}

// DeleteConversation removes userID's conversation; its messages and tool
// calls go with it (ON DELETE CASCADE).
func (s *Conversations) DeleteConversation(ctx context.Context, userID string, conversationID int64) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM conversations WHERE id = $1 AND user_id = $2`, conversationID, userID)
	if err != nil {
		return translate(err)
	}
	if tag.RowsAffected() == 0 {
		return tasks.NotFound("conversation", conversationID)
	}
	return nil
}

func scanConversation(row pgx.Row, c *tasks.Conversation) error {
	return row.Scan(&c.ID, &c.UserID, &c.Title, &c.CreatedAt, &c.UpdatedAt)
}

func scanMessage(row pgx.Row, m *tasks.Message) error {
	return row.Scan(&m.ID, &m.ConversationID, &m.Role, &m.Content, &m.Interrupted, &m.CreatedAt)
}

// attachToolCalls reads tool-call rows ordered by message id and hands each
// to its message in msgs, which is ordered by id too.
func attachToolCalls(rows pgx.Rows, msgs []tasks.Message) error {
	i := 0
	for rows.Next() {
		var (
			messageID int64
			c         tasks.ToolCall
			ms        int32
		)
		if err := rows.Scan(&messageID, &c.CallID, &c.Tool, &c.Arguments, &c.Result, &c.IsError, &c.Round, &ms, &c.CreatedAt); err != nil {
			return err
		}
		c.Duration = time.Duration(ms) * time.Millisecond
		for i < len(msgs) && msgs[i].ID < messageID {
			i++
		}
		if i < len(msgs) && msgs[i].ID == messageID {
			msgs[i].ToolCalls = append(msgs[i].ToolCalls, c)
		}
	}
	return rows.Err()
}

// What a model writes ends up in the audit, and PostgreSQL refuses some of
// it: NUL in text, \u0000 in jsonb, invalid UTF-8. A turn must never fail
// to store because of it, so these helpers make such values storable while
// keeping every visible character.

// jsonOr returns raw as text for jsonb, def when it is empty, and raw
// wrapped in a JSON string when it is not JSON, so the audit keeps even
// arguments a model got wrong. An escaped NUL becomes U+FFFD.
func jsonOr(raw json.RawMessage, def string) string {
	switch {
	case len(raw) == 0:
		return def
	case json.Valid(raw):
		return string(bytes.ReplaceAll(raw, []byte(`\u0000`), []byte(`\ufffd`)))
	}
	b, _ := json.Marshal(storableText(string(raw)))
	return string(b)
}

// storableText drops NUL characters and replaces invalid UTF-8.
func storableText(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "")
}

// auditName makes a model-given name or id fit its column: 1 to 255
// characters of storable text.
func auditName(s, missing string) string {
	s = storableText(s)
	if s == "" {
		return missing
	}
	if r := []rune(s); len(r) > 255 {
		return string(r[:254]) + "…"
	}
	return s
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

// A cursor is the (updated_at, id) of the last conversation on a page.
func encodeCursor(t time.Time, id int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(t.UnixMicro(), 10) + "." + strconv.FormatInt(id, 10)))
}

func decodeCursor(s string) (*time.Time, int64, error) {
	if s == "" {
		return nil, 0, nil
	}
	bad := tasks.Invalid("cursor", "is not a cursor this service returned")
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, 0, bad
	}
	us, id, ok := strings.Cut(string(b), ".")
	micros, err1 := strconv.ParseInt(us, 10, 64)
	n, err2 := strconv.ParseInt(id, 10, 64)
	if !ok || err1 != nil || err2 != nil {
		return nil, 0, bad
	}
	t := time.UnixMicro(micros)
	return &t, n, nil
}
