package chat

import (
	"context"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/tasks"
	"github.com/taskchat/taskchat/internal/telemetry"
)

// How a turn ended, as taskchat_turns_total counts it.
const (
	outcomeCompleted = "completed"            // the model answered
	outcomeLimited   = "limited"              // a count or token limit stopped it, with a reply that says so
	outcomeReplayed  = "replayed"             // a keyed retry got the first run's outcome
	outcomeCanceled  = "interrupted"          // the server shut down; what it did is stored
	outcomeStopped   = "stopped"              // someone stopped it (POST …/stop); what it did is stored
	outcomeModel     = "model_error"          // the model failed or timed out
	outcomeDeleted   = "conversation_deleted" // its conversation was deleted while it ran
	outcomeStore     = "store_error"          // the database failed it
	outcomeBudget    = "budget_exceeded"      // refused: the user's daily token budget is used up
	outcomeRefused   = "refused"              // refused: busy conversation, key in use or reused, no such conversation
)

// outcomes lists them all, so that each is counted from zero.
var outcomes = []string{outcomeCompleted, outcomeLimited, outcomeReplayed, outcomeCanceled, outcomeStopped, outcomeModel,
	outcomeDeleted, outcomeStore, outcomeBudget, outcomeRefused}

// unstarted names the outcome of a turn that did not run: a replay (err is
// nil), or a refusal.
func unstarted(err error) string {
	switch {
	case err == nil:
		return outcomeReplayed
	case errors.Is(err, tasks.ErrTokenBudgetExceeded):
		return outcomeBudget
	case errors.Is(err, tasks.ErrUnavailable):
		return outcomeStore
	case errors.Is(err, tasks.ErrNotFound), errors.Is(err, tasks.ErrConflict), errors.Is(err, tasks.ErrKeyMismatch),
		errors.Is(err, tasks.ErrTooManyRunningTurns), errors.Is(err, tasks.ErrTooManyStreams), errors.Is(err, tasks.ErrRateLimited):
		return outcomeRefused
	case errors.Is(err, context.Canceled):
		return outcomeCanceled
	}
	return outcomeStore
}

// ended names the outcome of a turn that ran.
func ended(stop agent.StopReason, stopped bool, err error) string {
	var me *agent.ModelError
	switch {
	case stopped:
		return outcomeStopped
	case err == nil && stop == agent.StopCompleted:
		return outcomeCompleted
	case err == nil:
		return outcomeLimited
	case errors.Is(err, context.Canceled):
		return outcomeCanceled
	case errors.As(err, &me):
		return outcomeModel
	case errors.Is(err, tasks.ErrNotFound):
		return outcomeDeleted
	}
	return outcomeStore
}

// toolErrorType names how a tool execution failed, "" when it did not.
func toolErrorType(res *mcp.CallToolResult, err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return telemetry.ToolTimeout
	case err != nil:
		return telemetry.ToolOther
	case res.IsError:
		return telemetry.ToolError
	}
	return ""
}
