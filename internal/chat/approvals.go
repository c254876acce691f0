package chat

import (
	"context"
	"fmt"

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
	decided, err := e.turns.DecideApproval(ctx, d)
	if err != nil || len(decided.Waiting) > 0 {
		return decided, nil, err
	}
	a := decided.Approval
	e.log.InfoContext(ctx, "approval decided", "approval_id", a.ID, "state", a.State, "again", decided.Again,
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

// decisions are the calls of a continued turn that were decided and not
// yet resolved: each approval of the turn decided one way or the other
// whose placeholder has no resolution (a later call with its id) among the
// turn's calls. A continuation cut short after it resolved a call does not
// resolve it again.
func (e *Engine) decisions(ctx context.Context, userID string, turn *tasks.Turn) ([]agent.Decision, error) {
	approvals, err := e.turns.TurnApprovals(ctx, userID, turn.ID())
	if err != nil {
		return nil, err
	}
	var out []agent.Decision
	for _, a := range approvals {
		if a.State != tasks.ApprovalApproved && a.State != tasks.ApprovalDenied {
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
		out = append(out, agent.Decision{Call: turn.Earlier[placeholder], ApprovalID: a.ID,
			Approved: a.State == tasks.ApprovalApproved, Reason: a.Reason})
	}
	return out, nil
}
