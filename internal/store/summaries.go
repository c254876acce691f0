package store

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/taskchat/taskchat/internal/tasks"
)

// A conversation's summary (migration 000017). A turn reads it, and
// whether its history starts after messages it does not cover, in the
// batch that starts it (queueSummary), so the common turn pays nothing
// for compaction; only a turn that compacts reads the uncovered messages
// (MessagesBetween) and stores the new summary (SaveSummary).

// queueSummary reads the conversation's summary into turn, and whether
// its history window, which queueHistory set just before, starts after
// messages the summary does not cover (Turn.Compact).
func queueSummary(b *pgx.Batch, in tasks.TurnStart, turn *tasks.Turn) {
	b.Queue(stmt.HistorySummary, in.ConversationID, in.UserID).QueryRow(func(row pgx.Row) error {
		var s summaryColumns
		err := row.Scan(&s.text, &s.through, &s.at, &turn.Compact)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		turn.Conversation.Summary = s.summary()
		return err
	})
}

// summaryColumns are a conversation's summary columns, NULL when it has
// none.
type summaryColumns struct {
	text    *string
	through *int64
	at      *time.Time
}

func (s summaryColumns) summary() *tasks.Summary {
	if s.text == nil || s.through == nil || s.at == nil {
		return nil
	}
	return &tasks.Summary{Text: *s.text, Through: *s.through, At: s.at.UTC()}
}

// ClaimCompaction claims the conversation to compact it on demand, and
// loads what a turn would: the summary and the history before the last
// turn, in one round trip after the budget check. A turn of it cut short
// is finished first, under the claim, as StartTurn does.
func (s *Turns) ClaimCompaction(ctx context.Context, in tasks.TurnStart) (tasks.Turn, error) {
	token := newToken()
	b := &pgx.Batch{}
	if in.DailyTokenBudget > 0 {
		queueBudgetCheck(b, in.UserID, in.DailyTokenBudget)
	}
	var turn tasks.Turn
	claimed := false
	b.Queue(stmt.ClaimToCompact, in.ConversationID, in.UserID, token, in.ClaimFor).QueryRow(func(row pgx.Row) error {
		err := scanConversation(row, &turn.Conversation)
		claimed = err == nil
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		return err
	})
	b.Queue(stmt.RecoverConversationClaimed, in.ConversationID, in.UserID, token)
	queueHistory(b, in, &turn)
	queueSummary(b, in, &turn)
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		if be := budgetError(err, in.DailyTokenBudget); be != nil {
			return tasks.Turn{}, be
		}
		return tasks.Turn{}, translate(err)
	}
	if !claimed {
		return tasks.Turn{}, s.whyNotClaimed(ctx, in.UserID, in.ConversationID)
	}
	turn.ClaimToken = token
	return turn, nil
}

// MessagesBetween returns a chunk of the conversation's messages after
// after and before before, oldest first, with their calls, bounded as
// CompactionPageEnd says, in one round trip.
func (s *Turns) MessagesBetween(ctx context.Context, userID string, conversationID, after, before int64, limit, maxChars int) ([]tasks.Message, error) {
	var msgs []tasks.Message
	b := &pgx.Batch{}
	b.Queue(stmt.CompactionPageEnd, conversationID, userID, after, limit, maxChars, before)
	queueMessagesPage(b, conversationID, userID, after, &msgs)
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return nil, translate(err)
	}
	return msgs, nil
}

// SaveSummary stores the summary if the conversation's still covers
// through w.From, and adds what it cost to the user's day, in one
// statement.
func (s *Turns) SaveSummary(ctx context.Context, userID string, conversationID int64, w tasks.SummaryWrite) (tasks.Summary, error) {
	var at *time.Time
	var exists bool
	err := s.pool.QueryRow(ctx, stmt.SaveSummary, conversationID, userID, w.Text, w.From, w.Through,
		max(w.Usage.InputTokens, 0), max(w.Usage.OutputTokens, 0)).Scan(&at, &exists)
	switch {
	case err != nil:
		return tasks.Summary{}, translate(err)
	case !exists:
		return tasks.Summary{}, tasks.NotFound("conversation", conversationID)
	case at == nil:
		return tasks.Summary{}, tasks.ErrSummaryMoved
	}
	return tasks.Summary{Text: w.Text, Through: w.Through, At: at.UTC()}, nil
}

// Conversation returns userID's conversation with its summary.
func (s *Conversations) Conversation(ctx context.Context, userID string, conversationID int64) (tasks.Conversation, error) {
	var c tasks.Conversation
	var sum summaryColumns
	err := s.pool.QueryRow(ctx, stmt.ShowConversation, conversationID, userID).
		Scan(&c.ID, &c.UserID, &c.Title, &c.CreatedAt, &c.UpdatedAt, &sum.text, &sum.through, &sum.at)
	if errors.Is(err, pgx.ErrNoRows) {
		return tasks.Conversation{}, tasks.NotFound("conversation", conversationID)
	}
	if err != nil {
		return tasks.Conversation{}, translate(err)
	}
	c.Summary = sum.summary()
	return c, nil
}
