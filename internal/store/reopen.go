package store

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/taskchat/taskchat/internal/tasks"
)

// ReopenTurn starts the conversation's last turn again, to write its reply
// anew (a regenerated reply): it claims the conversation, if its last
// turn is the one asked for, starts the turn's new run, and loads the
// turn's message, the history before it and the calls the turn made, in
// one round trip after the budget check. The turn's reply, and its calls
// with it, stay as they are until the new reply is stored: FinishTurn
// replaces the old one and hands it the calls (by turn and position), and a
// run that fails with nothing to store leaves the conversation as it was.
// A new run cut short after it recorded a call is finished by whoever next
// touches the conversation (RecoverConversationUnheld), with an interrupted
// reply in the old one's place. No call record is ever deleted.
func (s *Turns) ReopenTurn(ctx context.Context, in tasks.TurnStart, turnID int64) (tasks.Turn, error) {
	token := newToken()
	b := &pgx.Batch{}
	commitLazily(b)
	queueChecks(b, in)
	var turn tasks.Turn
	var found, claimed, last bool
	queueTimeZone(b, in.UserID, &turn)
	queueReopenClaim(b, in, turnID, token, &turn, &found, &claimed, &last)
	queueReopen(b, in, token, &turn)
	queueEarlierCalls(b, in, token, &turn)
	queueHistory(b, in, &turn) // late: it turns the planner's other scans off for the rest of the batch
	queueSummary(b, in, &turn)
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		if re := refusal(err, in); re != nil {
			return tasks.Turn{}, re
		}
		return tasks.Turn{}, translate(err)
	}
	switch {
	case !found:
		return tasks.Turn{}, tasks.NotFound("conversation", in.ConversationID)
	case !last:
		return tasks.Turn{}, tasks.ErrNoReplyToRegenerate
	case !claimed:
		return tasks.Turn{}, tasks.ErrConversationBusy
	}
	turn.ClaimToken = token
	return turn, nil
}

// queueReopenClaim claims the conversation when no turn holds it and its
// last turn is the one asked for: its message is in.Message, its id
// turnID (unless 0), and at most its reply follows it. It tells whether
// the conversation exists, whether it claimed it, and whether its last
// turn is the one asked for.
func queueReopenClaim(b *pgx.Batch, in tasks.TurnStart, turnID int64, token string, turn *tasks.Turn, found, claimed, last *bool) {
	b.Queue(stmt.ReopenClaim,
		in.ConversationID, in.UserID, token, in.ClaimFor, nullable(in.Message), turnID).QueryRow(func(row pgx.Row) error {
		c := &turn.Conversation
		err := row.Scan(&c.ID, &c.UserID, &c.Title, &c.CreatedAt, &c.UpdatedAt, claimed, last)
		*found = err == nil
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		return err
	})
}

// queueReopen starts the new run of the turn the claim was taken for, and
// tells the request's idempotency key (if any) its turn, the reopened one.
func queueReopen(b *pgx.Batch, in tasks.TurnStart, token string, turn *tasks.Turn) {
	b.Queue(stmt.ReopenTurn,
		in.ConversationID, in.UserID, token, nullable(in.IdempotencyKey), in.ClaimFor).QueryRow(func(row pgx.Row) error {
		m := &turn.UserMessage
		err := row.Scan(&m.ID, &m.ConversationID, &m.Role, &m.Content, &m.Interrupted, &m.CreatedAt, &turn.RunID, &turn.Replaces)
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
