package chat

import (
	"context"
	"errors"
	"time"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/tasks"
)

// compactChunks is how many chunks of the messages a summary does not
// cover one compaction summarises at most, each a history window's worth:
// a conversation that grew long before compaction existed catches up a few
// chunks a turn, rather than make one turn wait for a hundred model calls.
const compactChunks = 4

// compactTurn compacts the conversation of a turn whose history starts
// after messages its summary does not cover (Turn.Compact: they fell out
// of its window), under the turn's claim and within its deadline, and
// returns the summary the turn's model is given. A compaction that fails
// leaves the turn with the summary it had, and the turn goes on: a model
// that cannot summarise now may still answer, and the next turn tries
// again.
func (e *Engine) compactTurn(ctx context.Context, userID string, turn *tasks.Turn) *tasks.Summary {
	// A compaction has half the turn's time: one whose model hangs leaves
	// the turn the other half to answer in, rather than fail it.
	ctx, cancel := context.WithTimeout(ctx, e.cfg.Limits.TurnTimeout/2)
	defer cancel()
	s, err := e.compact(ctx, userID, turn)
	if err != nil {
		e.log.WarnContext(ctx, "compact conversation", "user_id", userID, "conversation_id", turn.Conversation.ID, "err", err)
	}
	return s
}

// Compact compacts the user's conversation on demand: the messages its
// summary does not cover, up to the middle of the history its next turn
// would load, are summarised as a turn would, under a claim of its own
// (ErrConversationBusy while a turn holds the conversation). It returns
// the conversation with its summary, which is as it was when there was
// nothing older to summarise. The summary's tokens count as the user's,
// and a user past the daily budget gets a *tasks.BudgetError.
func (e *Engine) Compact(ctx context.Context, userID string, conversationID int64) (tasks.Conversation, error) {
	turn, err := e.turns.ClaimCompaction(ctx, tasks.TurnStart{
		UserID: userID, ConversationID: conversationID, HistoryLimit: e.cfg.HistoryLimit,
		HistoryChars: agent.HistoryChars(e.cfg.HistoryTokens), ClaimFor: e.claimFor(), DailyTokenBudget: e.cfg.DailyTokenBudget,
	})
	if err != nil {
		return tasks.Conversation{}, err
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), persistTimeout)
		defer cancel()
		if err := e.turns.AbandonTurn(ctx, userID, conversationID, turn.ClaimToken); err != nil {
			e.log.ErrorContext(ctx, "release conversation", "user_id", userID, "conversation_id", conversationID, "err", err)
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, e.cfg.Limits.TurnTimeout)
	defer cancel()
	s, err := e.compact(ctx, userID, &turn)
	c := turn.Conversation
	c.Summary = s
	return c, err
}

// compact summarises, after the turn's summary, the messages it does not
// cover before the turn's history, then the older part of that history
// (olderHalf), and stores the new summary in place of the old one. It
// returns the summary the turn has then: the new one, or on failure the
// old one, or the part it got through, stored, when a later chunk failed.
// The tokens spent count as the user's either way.
func (e *Engine) compact(ctx context.Context, userID string, turn *tasks.Turn) (*tasks.Summary, error) {
	old := turn.Conversation.Summary
	var w tasks.SummaryWrite
	if old != nil {
		w.Text, w.From = old.Text, old.Through
	}
	w.Through = w.From
	window, end := turn.History, turn.ID()
	if len(window) > 0 {
		end = window[0].ID
	}
	last, err := e.summarizeUncovered(ctx, userID, turn.Conversation.ID, &w, end)
	switch {
	case errors.Is(err, errMoreToCompact):
		err = nil
	case err == nil:
		// The last chunk is summarised with the window's older half, in
		// one request: a turn that compacts usually makes one.
		through := w.Through
		if len(last) > 0 {
			through = max(last[len(last)-1].ID, end-1) // no message of the conversation lies between
		}
		if k := olderHalf(window); k > 0 {
			if part := after(window[:k], through); len(part) > 0 {
				last, through = append(last, part...), window[k].ID-1
			}
		}
		if len(last) > 0 {
			err = e.summarize(ctx, &w, last, through)
		}
	}
	// What was spent is stored even when the compaction ran out of time
	// or its client left: the tokens count as the user's either way.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), persistTimeout)
	defer cancel()
	if w.Through == w.From {
		if w.Usage.Total() > 0 {
			// Nothing to store but what it cost (SaveSummary stores no
			// summary that covers no more).
			_, serr := e.turns.SaveSummary(ctx, userID, turn.Conversation.ID, w)
			if !errors.Is(serr, tasks.ErrSummaryMoved) {
				err = errors.Join(err, serr)
			}
		}
		return old, err
	}
	s, serr := e.turns.SaveSummary(ctx, userID, turn.Conversation.ID, w)
	if serr != nil {
		return old, errors.Join(err, serr)
	}
	e.log.InfoContext(ctx, "compacted conversation", "user_id", userID, "conversation_id", turn.Conversation.ID, "through_message_id", s.Through,
		"input_tokens", w.Usage.InputTokens, "output_tokens", w.Usage.OutputTokens)
	return &s, err
}

// errMoreToCompact ends a compaction that summarised its compactChunks:
// what it got through is stored, and a later turn goes on from there.
var errMoreToCompact = errors.New("more messages to compact")

// summarizeUncovered summarises, a chunk at a time, the conversation's
// messages after w's end and before the message end, but for the last
// chunk, which it returns: the caller summarises it with what follows.
// After compactChunks chunks it summarises the last too, and returns
// errMoreToCompact.
func (e *Engine) summarizeUncovered(ctx context.Context, userID string, conversationID int64, w *tasks.SummaryWrite, end int64) ([]tasks.Message, error) {
	var pending []tasks.Message
	after := w.Through
	for range compactChunks {
		msgs, err := e.turns.MessagesBetween(ctx, userID, conversationID, after, end,
			e.cfg.HistoryLimit, agent.HistoryChars(e.cfg.HistoryTokens))
		if err != nil || len(msgs) == 0 {
			return pending, err
		}
		if len(pending) > 0 {
			if err := e.summarize(ctx, w, pending, pending[len(pending)-1].ID); err != nil {
				return nil, err
			}
		}
		pending, after = msgs, msgs[len(msgs)-1].ID
	}
	if err := e.summarize(ctx, w, pending, after); err != nil {
		return nil, err // not errMoreToCompact: the caller must hear it failed
	}
	return nil, errMoreToCompact
}

// summarize carries w's summary on over msgs, which end the span it then
// covers at through.
func (e *Engine) summarize(ctx context.Context, w *tasks.SummaryWrite, msgs []tasks.Message, through int64) error {
	text, used, err := agent.Summarize(ctx, e.cfg.Model, w.Text, msgs)
	u := usageOf(used)
	w.Usage.InputTokens += u.InputTokens
	w.Usage.OutputTokens += u.OutputTokens
	if err != nil {
		return err
	}
	w.Text, w.Through = text, through
	return nil
}

// olderHalf is how many of the window's first messages a compaction
// summarises with the rest (those of them the summary does not cover
// already): those before the first user message of its second half.
// Summarising half a window at a time, rather than only what
// fell out of it, is what keeps a conversation from being compacted on
// every turn: the next compaction comes half a window of messages later.
// The window's second half stays whole, starting at a user message, so a
// call is never parted from its result. 0: nothing to summarise.
func olderHalf(window []tasks.Message) int {
	for i := max(len(window)/2, 1); i < len(window); i++ {
		if window[i].Role == tasks.RoleUser {
			return i
		}
	}
	return 0
}

// after is the part of the history after the message through: what a
// summary through it does not cover.
func after(history []tasks.Message, through int64) []tasks.Message {
	for i, m := range history {
		if m.ID > through {
			return history[i:]
		}
	}
	return nil
}

// summaryThrough is the last message the summary covers, 0 for none.
func summaryThrough(s *tasks.Summary) int64 {
	if s == nil {
		return 0
	}
	return s.Through
}

// summaryText is the summary's text, "" for none.
func summaryText(s *tasks.Summary) string {
	if s == nil {
		return ""
	}
	return s.Text
}

// turnDeadline is when a turn that compacts must end: a compaction is
// part of its turn, and the claim outlasts the turn's timeout only by a
// margin.
func (e *Engine) turnDeadline() time.Time { return time.Now().Add(e.cfg.Limits.TurnTimeout) }
