package tasks

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Usage is the tokens a turn's model calls consumed, as the model reported
// them (the offline model estimates its own).
type Usage struct {
	InputTokens  int64
	OutputTokens int64
}

// Total is input and output together: what a daily budget counts.
func (u Usage) Total() int64 { return u.InputTokens + u.OutputTokens }

// DailyUsage is what a user's turns consumed on one UTC day: the turns that
// ended that day, and their tokens.
type DailyUsage struct {
	Day   time.Time // midnight UTC
	Usage Usage
	Turns int64
}

// ErrTokenBudgetExceeded means the user has used up their daily token
// budget: no turn starts until the next UTC day.
var ErrTokenBudgetExceeded = errors.New("daily token budget used up")

// BudgetError is a turn refused because today's usage has reached the
// budget. It matches ErrTokenBudgetExceeded.
type BudgetError struct {
	Budget int64 // tokens a day
	Used   int64 // today's, when the turn was refused
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("daily token budget of %d used up (%d used today)", e.Budget, e.Used)
}

// Is reports that every BudgetError is an ErrTokenBudgetExceeded.
func (e *BudgetError) Is(target error) bool { return target == ErrTokenBudgetExceeded }

// UsageStore keeps each user's token usage per UTC day. It lives in the
// database, so a budget holds across replicas; FinishTurn adds a turn's
// usage in the same statement as its reply, and StartTurn checks the
// budget (TurnStart.DailyTokenBudget) in the same round trip as the rest.
type UsageStore interface {
	// RecordUsage adds the usage of a turn that stored no reply (it failed
	// after its model consumed tokens) to today's.
	RecordUsage(ctx context.Context, userID string, u Usage) error
	// DailyUsage returns the user's days from from to to (UTC dates,
	// inclusive) that have usage, oldest first.
	DailyUsage(ctx context.Context, userID string, from, to time.Time) ([]DailyUsage, error)
}
