package chat

import (
	"context"
	"errors"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/tasks"
)

// start starts the turn the request asks for: a new message, or, for a
// regenerated reply, the conversation's last turn again. A client's chat
// id is resolved to its conversation first; a chat id that names none
// starts a new conversation remembered under it.
func (e *Engine) start(ctx context.Context, req Request) (tasks.Turn, error) {
	s := tasks.TurnStart{
		UserID: req.UserID, ConversationID: req.ConversationID, Message: req.Message,
		HistoryLimit: e.cfg.HistoryLimit, HistoryChars: agent.HistoryChars(e.cfg.HistoryTokens), ClaimFor: e.claimFor(), IdempotencyKey: req.IdempotencyKey,
		DailyTokenBudget: e.cfg.DailyTokenBudget, MaxRunningTurns: e.cfg.MaxRunningTurns, TurnRate: e.cfg.TurnRate,
		Stream: req.Stream,
	}
	if req.ChatID != "" {
		id, err := e.turns.ChatConversation(ctx, req.UserID, req.ChatID)
		switch {
		case errors.Is(err, tasks.ErrNotFound) && req.Regenerate:
			return tasks.Turn{}, tasks.ErrNoReplyToRegenerate // nothing was said in this chat yet
		case errors.Is(err, tasks.ErrNotFound):
			s.ChatID = req.ChatID
		case err != nil:
			return tasks.Turn{}, err
		}
		s.ConversationID = id
	}
	if req.Continue != 0 {
		// Its message is the turn's own: the claim asks only that the turn
		// be the conversation's last. Its decision took its token.
		s.Message, s.TurnRate = "", tasks.Rate{}
		turn, err := e.turns.ReopenTurn(ctx, s, req.Continue)
		if errors.Is(err, tasks.ErrNoReplyToRegenerate) {
			// A new message came in between the decision and now.
			return turn, &tasks.ApprovalClosedError{State: tasks.ApprovalSuperseded}
		}
		return turn, err
	}
	if req.Regenerate {
		return e.turns.ReopenTurn(ctx, s, req.RegenerateTurn)
	}
	return e.turns.StartTurn(ctx, s)
}

// startedEvent announces a started turn; a regenerated or continued one
// brings the calls of its earlier run, which its new reply holds. A
// continued turn leaves out their placeholders, which its resolutions
// stand in for (and a decided call waits for nothing more).
func startedEvent(turn *tasks.Turn, continued bool) Event {
	ev := Event{Kind: EventStarted, ConversationID: turn.Conversation.ID, TurnID: turn.ID(), RunID: turn.RunID}
	for _, c := range turn.Earlier {
		if c.Awaiting != 0 && continued {
			continue
		}
		result := c.Result
		if len(result) == 0 {
			result = []byte("null")
		}
		ev.Earlier = append(ev.Earlier, EarlierCall{Round: c.Round,
			ToolCall: ToolCall{ID: c.CallID, Tool: c.Tool, Arguments: c.Arguments, Result: result, IsError: c.IsError, ApprovalID: c.Awaiting}})
	}
	return ev
}
