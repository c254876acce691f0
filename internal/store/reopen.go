package store

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/taskchat/taskchat/internal/tasks"
)

// ReopenTurn starts the conversation's last turn again, to write its reply
// anew (a regenerated reply): it claims the conversation, if its last
// turn is the one asked for, deletes that turn's reply, and loads the turn's
// message, the history before it and the calls the turn made, in one round
// trip after the budget check. Deleting the reply leaves its tool calls
// without one (message_id NULL), as a turn cut short leaves them: the new
// reply takes them when it is stored (FinishTurn attaches a turn's calls
// by turn and position), and if the new run is cut short in turn, whoever
// next touches the conversation finishes it (RecoverConversationUnheld).
// No call record is ever deleted. Its commit does not wait for the disk, as
// StartTurn's does not: if it were lost, the old reply would be back.
func (s *Turns) ReopenTurn(ctx context.Context, in tasks.TurnStart, turnID int64) (tasks.Turn, error) {
	token := newToken()
	b := &pgx.Batch{}
	commitLazily(b)
	queueChecks(b, in)
	var turn tasks.Turn
	claimed := false
	queueReopenClaim(b, in, turnID, token, &turn, &claimed)
	queueReopen(b, in, token, &turn)
	queueEarlierCalls(b, in, token, &turn)
	queueHistory(b, in, &turn) // last: it turns the planner's other scans off for the rest of the batch
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		if re := refusal(err, in); re != nil {
			return tasks.Turn{}, re
		}
		return tasks.Turn{}, translate(err)
	}
	if !claimed {
		return tasks.Turn{}, s.whyNotReopened(ctx, in.UserID, in.ConversationID)
	}
	turn.ClaimToken = token
	return turn, nil
}

// queueReopenClaim claims the conversation when no turn holds it and its
// last turn is the one asked for: its message is in.Message, its id
// turnID (unless 0), and at most its reply follows it.
func queueReopenClaim(b *pgx.Batch, in tasks.TurnStart, turnID int64, token string, turn *tasks.Turn, claimed *bool) {
	b.Queue(stmt.ReopenClaim,
		in.ConversationID, in.UserID, token, in.ClaimFor, nullable(in.Message), turnID).QueryRow(func(row pgx.Row) error {
		err := scanConversation(row, &turn.Conversation)
		*claimed = err == nil
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		return err
	})
}

// queueReopen deletes the reply of the turn the claim was taken for, and
// tells the request's idempotency key (if any) its turn, the reopened one.
func queueReopen(b *pgx.Batch, in tasks.TurnStart, token string, turn *tasks.Turn) {
	b.Queue(stmt.ReopenTurn,
		in.ConversationID, in.UserID, token, nullable(in.IdempotencyKey), in.ClaimFor).QueryRow(func(row pgx.Row) error {
		m := &turn.UserMessage
		err := row.Scan(&m.ID, &m.ConversationID, &m.Role, &m.Content, &m.Interrupted, &m.CreatedAt, &turn.RunID)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		return err
	})
}

// queueEarlierCalls loads every call the reopened turn made, in order.
func queueEarlierCalls(b *pgx.Batch, in tasks.TurnStart, token string, turn *tasks.Turn) {
	b.Queue(stmt.EarlierCalls, in.ConversationID, in.UserID, token).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var c tasks.ToolCall
			if err := scanToolCall(rows, &c); err != nil {
				return err
			}
			turn.Earlier = append(turn.Earlier, c)
		}
		return rows.Err()
	})
}

// whyNotReopened tells a missing conversation from a busy one and from one
// whose last turn is not the one asked for. It runs only when a claim failed.
func (s *Turns) whyNotReopened(ctx context.Context, userID string, id int64) error {
	var held bool
	err := s.pool.QueryRow(ctx, stmt.ConversationHeld, id, userID).Scan(&held)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return tasks.NotFound("conversation", id)
	case err != nil:
		return translate(err)
	case held:
		return tasks.ErrConversationBusy
	}
	return tasks.ErrNoReplyToRegenerate
}
