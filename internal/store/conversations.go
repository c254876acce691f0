package store

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/taskchat/taskchat/internal/tasks"
)

// Conversations reads and deletes a user's conversations and their
// messages. It implements tasks.ConversationStore; Turns writes them.
type Conversations struct {
	pool *pgxpool.Pool
}

// NewConversations returns the conversation tables on pool.
func NewConversations(pool *pgxpool.Pool) *Conversations {
	return &Conversations{pool: pool}
}

var _ tasks.ConversationStore = (*Conversations)(nil)

// ListConversations returns a page of userID's conversations, most
// recently active first. The cursor is opaque to callers.
func (s *Conversations) ListConversations(ctx context.Context, userID string, limit int, cursor string) (tasks.Page[tasks.Conversation], error) {
	after, afterID, err := decodeCursor(cursor)
	if err != nil {
		return tasks.Page[tasks.Conversation]{}, err
	}
	var rows pgx.Rows
	if after == nil {
		rows, err = s.pool.Query(ctx, stmt.ListConversations, userID, limit+1)
	} else {
		rows, err = s.pool.Query(ctx, stmt.ListConversationsAfter, userID, limit+1, *after, afterID)
	}
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

// Messages returns a page of userID's conversation: the messages after
// cursor, oldest first, each with its tool calls, at most limit of them and
// at most maxBytes of text and tool-call JSON together, but always one at
// least (MessagesPageEnd). A turn of it cut short by a crash is finished
// first (see queueRecovery), in the same round trip, so the thread shows
// what the turn did.
func (s *Conversations) Messages(ctx context.Context, userID string, conversationID int64, limit, maxBytes int, cursor string) (tasks.Page[tasks.Message], error) {
	afterID, err := decodeMessageCursor(cursor)
	if err != nil {
		return tasks.Page[tasks.Message]{}, err
	}
	var (
		exists, more bool
		lastID       int64
		msgs         []tasks.Message
	)
	b := &pgx.Batch{}
	queueRecovery(b, conversationID, userID)
	b.Queue(stmt.ConversationExists, conversationID, userID).
		QueryRow(func(row pgx.Row) error {
			err := row.Scan(&exists)
			if errors.Is(err, pgx.ErrNoRows) {
				return nil
			}
			return err
		})
	b.Queue(stmt.MessagesPageEnd, conversationID, userID, afterID, limit, maxBytes).
		QueryRow(func(row pgx.Row) error { return row.Scan(&lastID, &more) })
	queueMessagesPage(b, conversationID, userID, afterID, &msgs)
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return tasks.Page[tasks.Message]{}, translate(err)
	}
	if !exists {
		return tasks.Page[tasks.Message]{}, tasks.NotFound("conversation", conversationID)
	}
	page := tasks.Page[tasks.Message]{Items: msgs}
	if more {
		page.Next = encodeMessageCursor(lastID)
	}
	return page, nil
}

// DeleteConversation removes userID's conversation and its messages. Its
// tool calls stay, detached: they are the record of changes to tasks that
// outlive the chat (see migration 000005).
func (s *Conversations) DeleteConversation(ctx context.Context, userID string, conversationID int64) error {
	tag, err := s.pool.Exec(ctx, stmt.DeleteConversation, conversationID, userID)
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

// queueMessagesPage queues the reads of a page of the conversation's
// messages after afterID, with their calls, into msgs, as the statement
// before them in b (MessagesPageEnd, CompactionPageEnd) bounds it.
func queueMessagesPage(b *pgx.Batch, conversationID int64, userID string, afterID int64, msgs *[]tasks.Message) {
	b.Queue(stmt.MessagesPage, conversationID, userID, afterID).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var m tasks.Message
			if err := scanMessage(rows, &m); err != nil {
				return err
			}
			*msgs = append(*msgs, m)
		}
		return rows.Err()
	})
	b.Queue(stmt.MessagesPageToolCalls, conversationID, userID, afterID).Query(func(rows pgx.Rows) error { return attachToolCalls(rows, *msgs) })
}
