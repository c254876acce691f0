package http

import (
	"log/slog"
	"net/http"
	"strconv"

	"github.com/taskchat/taskchat/internal/chat"
	"github.com/taskchat/taskchat/internal/http/turnstream"
	"github.com/taskchat/taskchat/internal/limits"
	"github.com/taskchat/taskchat/internal/runs"
	"github.com/taskchat/taskchat/internal/tasks"
)

// Page sizes of GET /approvals.
const (
	defaultApprovalPageSize = 20
	maxApprovalPageSize     = 100
)

// maxDecisionBody is the largest decision body accepted: a reason of
// tasks.MaxReasonLength characters, escaped, and room to spare.
const maxDecisionBody = 16 << 10

type decisionRequest struct {
	Approved *bool  `json:"approved"`
	Reason   string `json:"reason"`
}

// decisionResponse answers a decision while other approvals of its turn
// still wait (202): the turn continues once the last is decided.
type decisionResponse struct {
	Approval turnstream.Approval   `json:"approval"`
	Waiting  []turnstream.Approval `json:"waiting"`
}

type approvalsResponse struct {
	Approvals  []turnstream.Approval `json:"approvals"`
	NextCursor *string               `json:"next_cursor"`
}

// handleApprovalsList answers the user's calls that wait for them, newest
// first, a page at a time.
func handleApprovalsList(log *slog.Logger, store tasks.ApprovalStore) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, err := query(r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		limit, err := pageLimit(q.Get("limit"), defaultApprovalPageSize, maxApprovalPageSize)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		var before int64
		if c := q.Get("cursor"); c != "" {
			if before, err = strconv.ParseInt(c, 10, 64); err != nil || before <= 0 {
				writeError(w, r, log, tasks.Invalid("cursor", "must be the next_cursor of a previous page"))
				return
			}
		}
		list, err := store.ListApprovals(r.Context(), userFrom(r.Context()), before, limit+1)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		resp := approvalsResponse{Approvals: turnstream.ApprovalsOf(list[:min(len(list), limit)])}
		if len(list) > limit {
			next := strconv.FormatInt(list[limit-1].ID, 10)
			resp.NextCursor = &next
		}
		writeJSON(w, http.StatusOK, resp)
	})
}

// handleApprovalShow answers one of the user's approvals, waiting or not:
// its state, and the decision if there was one.
func handleApprovalShow(log *slog.Logger, store tasks.ApprovalStore) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := approvalID(r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		a, err := store.GetApproval(r.Context(), userFrom(r.Context()), id)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		writeJSON(w, http.StatusOK, turnstream.ApprovalOf(a))
	})
}

// handleApprovalDecide decides an approval and, once none of its turn's
// approvals waits any more, continues the turn, answering as a chat turn
// does: JSON, or Server-Sent Events when asked. While others wait, it
// answers 202 with what still waits. A decision is idempotent by itself:
// sent again, it answers what the first did (see chat.Engine.Decide).
func handleApprovalDecide(log *slog.Logger, engine *chat.Engine, hub *runs.Hub, leases *limits.Leases, cfg StreamConfig) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d, err := parseDecision(w, r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		// The limits come first: a decision they refuse is not made.
		stream := wantsStream(r)
		release := func() {}
		if stream {
			var ok bool
			if release, ok = admitStream(w, r, leases, d.UserID); !ok {
				return
			}
			defer release()
		}
		decided, cont, err := engine.Decide(r.Context(), d)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		infoFrom(r.Context()).conversationID = decided.Approval.ConversationID
		if cont == nil {
			writeJSON(w, http.StatusAccepted, decisionResponse{Approval: turnstream.ApprovalOf(decided.Approval),
				Waiting: turnstream.ApprovalsOf(decided.Waiting)})
			return
		}
		newOutput := func() turnstream.Output { return &jsonOutput{w: w, r: r, log: log} }
		if stream {
			newOutput = givingBackAtTheEnd(func() turnstream.Output { return turnstream.NewSSE(w, r, log, cfg, problems{log}) }, release)
		}
		answerTurn(w, r, engine, hub, cont, newOutput, nil) // its stream's lease is taken
	})
}

// parseDecision reads and validates a decision. An Idempotency-Key is
// checked as every route checks it; the decision needs none, being
// idempotent by itself.
func parseDecision(w http.ResponseWriter, r *http.Request) (tasks.Decision, error) {
	id, err := approvalID(r)
	if err != nil {
		return tasks.Decision{}, err
	}
	var body decisionRequest
	if err := decodeJSON(w, r, maxDecisionBody, &body); err != nil {
		return tasks.Decision{}, err
	}
	if body.Approved == nil {
		return tasks.Decision{}, tasks.Invalid("approved", "is required: true to run the call, false to decline it")
	}
	reason, err := tasks.ValidateReason(body.Reason)
	if err != nil {
		return tasks.Decision{}, err
	}
	if _, err := idempotencyKey(r); err != nil {
		return tasks.Decision{}, err
	}
	return tasks.Decision{UserID: userFrom(r.Context()), ApprovalID: id, Approved: *body.Approved, Reason: reason}, nil
}

// approvalID reads {approval_id} from the path. One that is not a positive
// integer cannot exist, so it is not found.
func approvalID(r *http.Request) (int64, error) {
	s, ok := pathParam(r, "approval_id")
	id, err := strconv.ParseInt(s, 10, 64)
	if !ok || err != nil || id <= 0 {
		return 0, apiErrf(codeNotFound, "Approval %q was not found.", s)
	}
	return id, nil
}
