package chat

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/tasks"
)

// finish stores what the turn did and returns how it ended, and counts the
// turn by its outcome.
func (e *Engine) finish(ctx context.Context, req Request, turn *tasks.Turn, res agent.Result, asked []tasks.Approval, runErr error) (Outcome, error) {
	out, err := e.store(ctx, req, turn, res, asked, runErr)
	e.cfg.Telemetry.CountTurn(ended(res.Stop, out.Stopped, err))
	return out, err
}

// store stores what the turn did. A turn that produced anything — text or
// tool calls — is stored, marked interrupted when it did not complete; one
// that produced nothing only releases its claim. A regenerated reply that
// did not complete and changed nothing new is not stored either: the old
// one stays in place, rather than a fragment of its replacement. Either way the tokens its
// model used count towards the user's day. A failure after tools changed
// tasks is a *PartialError, so the client hears what was done. The client
// is shown a placeholder's resolution in its place (shownCalls); the
// record keeps both.
func (e *Engine) store(ctx context.Context, req Request, turn *tasks.Turn, res agent.Result, asked []tasks.Approval, runErr error) (Outcome, error) {
	stopped := runErr != nil && errors.Is(context.Cause(ctx), tasks.ErrStopped)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), persistTimeout)
	defer cancel()
	convID := turn.Conversation.ID
	out := Outcome{ConversationID: convID, TurnID: turn.ID(), Reply: res.Reply, Interrupted: runErr != nil, Stopped: stopped,
		Approvals: asked}
	calls := make([]ToolCall, len(res.Calls))
	for i := range res.Calls {
		calls[i] = toolCallOf(&res.Calls[i])
	}
	out.ToolCalls = shownCalls(calls)
	used := usageOf(res.Usage)
	keepOld := req.Regenerate && len(res.Calls) == len(turn.Earlier)
	if runErr != nil && (res.Reply == "" && len(res.Calls) == 0 || keepOld) {
		if stopped {
			return out, e.abandonStopped(ctx, req, turn, used, out)
		}
		return out, e.abandon(ctx, req, turn, used, runErr)
	}
	end := tasks.TurnEnd{
		UserID: req.UserID, ConversationID: convID, TurnID: turn.ID(), ClaimToken: turn.ClaimToken,
		Reply: res.Reply, Interrupted: runErr != nil, ToolCalls: auditOf(calls, res.Calls),
		Usage: used, Replaces: turn.Replaces,
	}
	// A keyed request keeps its key, with what the turn did to replay, when
	// the turn completed, ran a tool or was stopped: a retry must not run
	// the tools again, nor a turn someone stopped. A turn cut short before
	// any tool ran frees the key, so a retry gets a whole answer rather
	// than a replay of a partial one.
	keep := req.IdempotencyKey != "" && (runErr == nil || stopped || len(res.Calls) > 0)
	if keep {
		end.IdempotencyKey, end.Response = req.IdempotencyKey, encodeOutcome(out)
	}
	// A regenerated turn's earlier calls are not this run's changes.
	done := e.changes(calls[min(len(turn.Earlier), len(calls)):])
	var failed error // how the turn ends once stored
	if runErr != nil && !stopped {
		failed = partial(runErr, convID, done)
	}
	if req.Log != nil {
		end.Run = req.Log.Take(out, failed)
	}
	if _, err := e.turns.FinishTurn(ctx, end); err != nil {
		return out, e.storeFailed(ctx, req, turn, out, done, used, err)
	}
	if end.Run != nil {
		req.Log.Written()
	}
	if !keep {
		e.forgetKey(ctx, req)
	}
	if failed != nil {
		e.logTurnError(ctx, req.UserID, convID, runErr)
	}
	return out, failed
}

// abandon ends a turn that produced nothing. AbandonTurn is also the
// durable commit that StartTurn's lazy one waits for: until it succeeds
// the message may not be on disk, and the client must not hear that it was
// saved.
func (e *Engine) abandon(ctx context.Context, req Request, turn *tasks.Turn, used tasks.Usage, runErr error) error {
	e.forgetKey(ctx, req)
	if err := e.turns.AbandonTurn(ctx, req.UserID, turn.Conversation.ID, turn.ClaimToken); err != nil {
		e.log.ErrorContext(ctx, "release conversation", "user_id", req.UserID, "conversation_id", turn.Conversation.ID, "err", err)
		return storeFailure(err)
	}
	e.recordUsage(ctx, req.UserID, used)
	e.logTurnError(ctx, req.UserID, turn.Conversation.ID, runErr)
	return runErr
}

// abandonStopped ends a turn stopped before it said or did anything: it
// stores no reply, as abandon, but it is no failure, and a keyed request
// keeps its key with the stopped outcome, as a stopped turn that said
// something does (store).
func (e *Engine) abandonStopped(ctx context.Context, req Request, turn *tasks.Turn, used tasks.Usage, out Outcome) error {
	if err := e.turns.AbandonTurn(ctx, req.UserID, turn.Conversation.ID, turn.ClaimToken); err != nil {
		e.log.ErrorContext(ctx, "release conversation", "user_id", req.UserID, "conversation_id", turn.Conversation.ID, "err", err)
		e.forgetKey(ctx, req)
		return storeFailure(err)
	}
	e.recordUsage(ctx, req.UserID, used)
	if req.IdempotencyKey != "" {
		e.completeKey(ctx, req, out)
	}
	return nil
}

// storeFailed handles a final write that failed. The tools' changes are
// already saved with their records; the turn is finished later, by the
// next turn of the conversation or a retry of a keyed request (its key
// stays locked until its lock lapses: a quick retry must not run the tools
// again). A conversation deleted while the turn ran ends it as not found
// (FinishTurn counted its usage); otherwise the usage is counted apart.
func (e *Engine) storeFailed(ctx context.Context, req Request, turn *tasks.Turn, out Outcome, done []ToolCall, used tasks.Usage, err error) error {
	convID := turn.Conversation.ID
	if errors.Is(err, tasks.ErrNotFound) {
		e.log.InfoContext(ctx, "conversation deleted while its turn ran", "user_id", req.UserID, "conversation_id", convID, "changes", len(done))
		if req.IdempotencyKey != "" && len(done) > 0 {
			out.Interrupted = true // its reply was never stored
			e.completeKey(ctx, req, out)
		} else {
			e.forgetKey(ctx, req)
		}
		return partial(err, convID, done)
	}
	e.log.ErrorContext(ctx, "store turn", "user_id", req.UserID, "conversation_id", convID, "err", err)
	// Free the conversation now if the database allows, rather than when
	// the claim lapses; the key is kept if the turn recorded a call.
	_ = e.turns.AbandonTurn(ctx, req.UserID, convID, turn.ClaimToken)
	e.forgetKey(ctx, req)
	e.recordUsage(ctx, req.UserID, used)
	return partial(storeFailure(err), convID, done)
}

// completeKey keeps what a turn did (its conversation deleted meanwhile,
// or stopped before it said anything), for a retry to replay instead of
// running it again.
func (e *Engine) completeKey(ctx context.Context, req Request, out Outcome) {
	if err := e.turns.CompleteIdempotent(ctx, req.UserID, req.IdempotencyKey, encodeOutcome(out)); err != nil {
		e.log.ErrorContext(ctx, "complete idempotency key", "err", err)
	}
}

// changes returns the calls that changed tasks: those that succeeded on a
// tool that is not read-only, and ran (a call that waits did not).
func (e *Engine) changes(calls []ToolCall) []ToolCall {
	var done []ToolCall
	for _, c := range calls {
		if !c.IsError && c.ApprovalID == 0 && !e.defs.isReadOnly(c.Tool) {
			done = append(done, c)
		}
	}
	return done
}

// partial wraps err in a *PartialError when tasks were changed.
func partial(err error, convID int64, done []ToolCall) error {
	if len(done) == 0 {
		return err
	}
	return &PartialError{Err: err, ConversationID: convID, Done: done}
}

func (e *Engine) logTurnError(ctx context.Context, userID string, convID int64, err error) {
	if errors.Is(err, context.Canceled) {
		e.log.InfoContext(ctx, "turn interrupted: stopped, or the server is shutting down", "user_id", userID, "conversation_id", convID)
		return
	}
	e.log.WarnContext(ctx, "turn failed", "user_id", userID, "conversation_id", convID, "err", err)
}

// forgetKey lets a retry of a failed keyed request run again. The store
// keeps a key whose turn recorded a tool call, whatever we ask.
func (e *Engine) forgetKey(ctx context.Context, req Request) {
	if req.IdempotencyKey == "" {
		return
	}
	if err := e.turns.ForgetIdempotent(context.WithoutCancel(ctx), req.UserID, req.IdempotencyKey); err != nil {
		e.log.ErrorContext(ctx, "forget idempotency key", "err", err)
	}
}

// storeFailure is what the client hears when the turn could not be stored:
// the database being down is ErrUnavailable, anything else is our fault,
// never the client's, whatever the database said about the model's output.
func storeFailure(err error) error {
	if errors.Is(err, tasks.ErrUnavailable) {
		return err
	}
	return fmt.Errorf("store turn: %v", err) // %v: not the domain's kinds
}

// fingerprint identifies what a keyed request asked for, so a retry can be
// told from a reuse of the key with another body.
func fingerprint(req Request) []byte {
	h := sha256.New()
	_ = binary.Write(h, binary.BigEndian, req.ConversationID)
	h.Write([]byte(req.Message))
	// Added only when set, so that keys stored before they existed match.
	if req.ChatID != "" {
		h.Write([]byte("\x00chat\x00" + req.ChatID))
	}
	if req.Regenerate {
		_ = binary.Write(h, binary.BigEndian, req.RegenerateTurn)
		h.Write([]byte("\x00regenerate"))
	}
	if req.Continue != 0 {
		_ = binary.Write(h, binary.BigEndian, req.Continue)
		h.Write([]byte("\x00continue"))
	}
	return h.Sum(nil)
}

// auditOf is the audit of a turn's calls: what the client saw, with the
// round, position and duration of each.
func auditOf(calls []ToolCall, ran []agent.Call) []tasks.ToolCall {
	out := make([]tasks.ToolCall, len(calls))
	for i, c := range calls {
		out[i] = tasks.ToolCall{CallID: c.ID, Tool: c.Tool, Arguments: c.Arguments, Result: c.Result,
			IsError: c.IsError, Round: ran[i].Round, Seq: ran[i].Seq, Duration: ran[i].Duration}
	}
	return out
}
