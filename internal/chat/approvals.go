package chat

import (
	"context"
	"fmt"
	"slices"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/tasks"
)

// Approvals is the store of the approvals the engine's turns ask for.
func (e *Engine) Approvals() tasks.ApprovalStore { return e.turns }

// Decide decides an approval (a compare-and-set: the first decision wins;
// see tasks.ApprovalStore.DecideApproval). While other approvals of its
// turn still wait, it returns what it decided and nothing to run. Once
// none waits, it also returns the request that continues the turn, to run
// as any turn is (Run): the approved calls run, the declined ones are told
// to the model, and the model answers. The same decision sent again makes
// the same request, whose key makes it run once (a retry replays what it
// did, or follows it while it runs).
func (e *Engine) Decide(ctx context.Context, d tasks.Decision) (tasks.Decided, *Request, error) {
	// Once sent, a decision's outcome must be known: a client that leaves
	// does not leave it half-known.
	writeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), persistTimeout)
	defer cancel()
	d.TurnRate = e.cfg.TurnRate // the continuation's token, taken before anything is decided
	decided, err := e.turns.DecideApproval(writeCtx, d)
	if err != nil || len(decided.Waiting) > 0 {
		return decided, nil, err
	}
	a := decided.Approval
	e.log.InfoContext(ctx, "approval decided", "user_id", d.UserID, "approval_id", a.ID, "state", a.State, "again", decided.Again,
		"conversation_id", a.ConversationID)
	return decided, &Request{UserID: d.UserID, ConversationID: a.ConversationID, Continue: a.TurnID,
		IdempotencyKey: continuationKey(decided.Latest)}, nil
}

// continuationKey is the idempotency key of the request that continues a
// turn once its approvals are decided, named by the newest of them: every
// decision that finds none waiting makes the same request, and a turn
// that asks again (its continuation calls another tool that waits) makes
// a new one once those are decided. A client's key is 1 to 255 visible
// characters: one with spaces is none of theirs.
func continuationKey(latest int64) string {
	return fmt.Sprintf("taskchat continue after approval %d", latest)
}

// earlierApprovals reads the approvals of a reopened turn's earlier calls:
// those still waiting, which its outcome lists again, and, for a
// continuation, the decisions to resolve — each approval of the turn
// decided one way or the other whose placeholder has no resolution (a
// later call with its id; a turn's call ids are unique, see agent) among
// the turn's calls. A continuation cut short after it resolved a call does
// not resolve it again. An approved call whose task changed since it was
// shown is not run: it is resolved as one to ask about again.
func (e *Engine) earlierApprovals(ctx context.Context, req Request, turn *tasks.Turn) (decisions []agent.Decision, waiting []tasks.Approval, err error) {
	if !slices.ContainsFunc(turn.Earlier, func(c tasks.ToolCall) bool { return c.Awaiting != 0 }) {
		return nil, nil, nil
	}
	approvals, err := e.turns.TurnApprovals(ctx, req.UserID, turn.ID())
	if err != nil {
		return nil, nil, err
	}
	for _, a := range approvals {
		if a.State == tasks.ApprovalPending {
			waiting = append(waiting, a)
			continue
		}
		if req.Continue == 0 || (a.State != tasks.ApprovalApproved && a.State != tasks.ApprovalDenied) {
			continue
		}
		placeholder, resolved := -1, false
		for i, c := range turn.Earlier {
			switch {
			case c.Seq == a.Seq:
				placeholder = i
			case c.CallID == a.CallID && c.Seq > a.Seq:
				resolved = true
			}
		}
		if placeholder < 0 || resolved {
			continue
		}
		d := agent.Decision{Call: turn.Earlier[placeholder], ApprovalID: a.ID, Approved: a.State == tasks.ApprovalApproved, Reason: a.Reason}
		if d.Approved {
			if d.Changed, err = e.changedSince(ctx, req.UserID, a); err != nil {
				return nil, nil, err
			}
		}
		decisions = append(decisions, d)
	}
	return decisions, waiting, nil
}

// changedSince says how the task an approved call names changed since the
// person was shown it: "" when it did not (or the call names none).
func (e *Engine) changedSince(ctx context.Context, userID string, a tasks.Approval) (string, error) {
	id := taskNumber(a.Arguments)
	if id <= 0 || a.Title == "" {
		return "", nil
	}
	now, err := e.turns.TaskTitle(ctx, userID, id)
	if err != nil || now == a.Title {
		return "", err
	}
	if now == "" {
		return fmt.Sprintf("task %d (%s) no longer exists", id, a.Title), nil
	}
	return fmt.Sprintf("task %d was %q when it was approved and is %q now", id, a.Title, now), nil
}
