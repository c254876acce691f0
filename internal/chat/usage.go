package chat

import (
	"context"
	"time"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/tasks"
)

// DailyTokenBudget is the tokens a user's turns may use in a UTC day; 0
// when there is no budget.
func (e *Engine) DailyTokenBudget() int64 { return e.cfg.DailyTokenBudget }

// Usage returns what the user's turns consumed on each UTC day from from to
// to, inclusive and oldest first, days without any included (as zeros).
// The caller bounds the range.
func (e *Engine) Usage(ctx context.Context, userID string, from, to time.Time) ([]tasks.DailyUsage, error) {
	from, to = utcDay(from), utcDay(to)
	stored, err := e.turns.DailyUsage(ctx, userID, from, to)
	if err != nil {
		return nil, err
	}
	var days []tasks.DailyUsage
	for d := from; !d.After(to); d = d.AddDate(0, 0, 1) {
		day := tasks.DailyUsage{Day: d}
		if len(stored) > 0 && stored[0].Day.Equal(d) {
			day, stored = stored[0], stored[1:]
		}
		days = append(days, day)
	}
	return days, nil
}

// utcDay is midnight UTC of t's UTC date.
func utcDay(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// usageOf is a turn's usage as the store counts it. A model that reported
// negative counts reported nothing meaningful: they count as zero.
func usageOf(u agent.Usage) tasks.Usage {
	return tasks.Usage{InputTokens: int64(max(u.PromptTokens, 0)), OutputTokens: int64(max(u.CompletionTokens, 0))}
}

// recordUsage counts the usage of a turn that stored no reply, when its
// model used any tokens: a failed turn is not free. It costs a round trip,
// only on that path; a stored reply carries its usage in the same statement.
func (e *Engine) recordUsage(ctx context.Context, userID string, u tasks.Usage) {
	if u.Total() == 0 {
		return
	}
	if err := e.turns.RecordUsage(ctx, userID, u); err != nil {
		e.log.ErrorContext(ctx, "record token usage", "err", err, "input_tokens", u.InputTokens, "output_tokens", u.OutputTokens)
	}
}
