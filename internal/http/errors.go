package http

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/auth"
	"github.com/taskchat/taskchat/internal/chat"
	"github.com/taskchat/taskchat/internal/http/turnstream"
	"github.com/taskchat/taskchat/internal/tasks"
)

// The error codes of the API, the "code" member of every problem body.
const (
	codeInvalidRequest       = "invalid_request"
	codeUnauthorized         = "unauthorized"
	codeForbidden            = "forbidden"
	codeNotFound             = "not_found"
	codeMethodNotAllowed     = "method_not_allowed"
	codeMisdirected          = "misdirected_request"
	codeConversationBusy     = "conversation_busy"
	codeRequestInProgress    = "request_in_progress"
	codeNothingToRegenerate  = "nothing_to_regenerate"
	codeApprovalClosed       = "approval_closed"
	codeApprovalsWaiting     = "approvals_waiting"
	codePayloadTooLarge      = "payload_too_large"
	codeUnsupportedMediaType = "unsupported_media_type"
	codeIdempotencyMismatch  = "idempotency_key_reused"
	codeRateLimited          = "rate_limited"
	codeTokenBudget          = "token_budget_exceeded"
	codeInternal             = "internal"
	codeLLMUnavailable       = "llm_unavailable"
	codeUnavailable          = "unavailable"
)

// codeStatus is the only place a code is paired with its HTTP status, so
// handlers name what went wrong and the answer's status follows. It is the
// table at the top of api/openapi.yaml, and a test keeps the two in step.
var codeStatus = map[string]int{
	codeInvalidRequest:       http.StatusBadRequest,
	codeUnauthorized:         http.StatusUnauthorized,
	codeForbidden:            http.StatusForbidden,
	codeNotFound:             http.StatusNotFound,
	codeMethodNotAllowed:     http.StatusMethodNotAllowed,
	codeMisdirected:          http.StatusMisdirectedRequest,
	codeConversationBusy:     http.StatusConflict,
	codeRequestInProgress:    http.StatusConflict,
	codeNothingToRegenerate:  http.StatusConflict,
	codeApprovalClosed:       http.StatusConflict,
	codeApprovalsWaiting:     http.StatusConflict,
	codePayloadTooLarge:      http.StatusRequestEntityTooLarge,
	codeUnsupportedMediaType: http.StatusUnsupportedMediaType,
	codeIdempotencyMismatch:  http.StatusUnprocessableEntity,
	codeRateLimited:          http.StatusTooManyRequests,
	codeTokenBudget:          http.StatusTooManyRequests,
	codeInternal:             http.StatusInternalServerError,
	codeLLMUnavailable:       http.StatusBadGateway,
	codeUnavailable:          http.StatusServiceUnavailable,
}

// problem is an RFC 9457 problem details body with taskchat's code member.
// A chat turn that failed after it changed tasks also says which
// conversation it was in and what it changed.
type problem struct {
	Type           string                `json:"type"`
	Title          string                `json:"title"`
	Status         int                   `json:"status"`
	Code           string                `json:"code"`
	Detail         string                `json:"detail,omitempty"`
	Errors         []fieldIssue          `json:"errors,omitempty"`
	ConversationID int64                 `json:"conversation_id,omitempty"`
	ToolCalls      []turnstream.ToolCall `json:"tool_calls,omitempty"`
}

// fieldIssue names one field that broke a rule.
type fieldIssue struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// apiError is an error that already knows its code and message; its
// status is the code's, from codeStatus.
type apiError struct {
	code   string
	detail string
	fields []fieldIssue
	// For a turn that failed after it changed tasks: where, and what.
	conversationID int64
	toolCalls      []turnstream.ToolCall
	// retryAfter, when positive, is sent as Retry-After: how long until a
	// retry can succeed.
	retryAfter time.Duration
	// challenge, when not empty, is sent as WWW-Authenticate: how to
	// authenticate, which every 401 says (RFC 9110 §11.6.1).
	challenge string
}

func (e *apiError) Error() string { return e.code + ": " + e.detail }

// status is the code's HTTP status. A code missing from codeStatus is a
// bug, answered as an internal error rather than with no status at all.
func (e *apiError) status() int {
	if s, ok := codeStatus[e.code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// apiErr names an error by its code, with a sentence for the person who reads it.
func apiErr(code, detail string) *apiError {
	return &apiError{code: code, detail: detail}
}

// apiErrf is apiErr with a detail built from a format.
func apiErrf(code, format string, args ...any) *apiError {
	return apiErr(code, fmt.Sprintf(format, args...))
}

// llmUnavailableMessage is what a person reads when the model failed.
const llmUnavailableMessage = "The assistant is not available right now. Your message was saved; please try again in a moment."

// runningTurnsRetry is the Retry-After of a turn refused because its user
// runs as many as they may: most turns end within a few seconds.
const runningTurnsRetry = 2 * time.Second

// bearerChallenge is the WWW-Authenticate value of every 401 (RFC 6750 §3).
const bearerChallenge = `Bearer realm="taskchat"`

// internalError is what a client hears of a failure on our side.
var internalError = apiErr(codeInternal, "Something went wrong on our side.")

// toAPIError gives each kind of error its code; codeStatus gives the code
// its status. Anything it does not recognise is an internal error. A turn
// that failed after changing tasks answers as its cause does, and carries
// the changes, so the client does not take the failure for "nothing happened".
func toAPIError(err error) *apiError {
	var pe *chat.PartialError
	if errors.As(err, &pe) {
		return partialError(pe)
	}
	var ae *apiError
	var ee *turnstream.EventError
	var fe *tasks.FieldError
	var nf *tasks.NotFoundError
	var be *tasks.BudgetError
	var re *tasks.RunningTurnsError
	var rl *tasks.RateLimitError
	var se *tasks.StreamsError
	var ac *tasks.ApprovalClosedError
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &ee):
		// A failure a turn's run kept, told again: its code says its status.
		return &apiError{code: ee.Event.Code, detail: ee.Event.Message, toolCalls: ee.Event.ToolCalls}
	case errors.Is(err, auth.ErrNoToken):
		// RFC 6750 §3.1: a request with no credentials gets no error code.
		return &apiError{code: codeUnauthorized, detail: "The bearer token is missing.", challenge: bearerChallenge}
	case errors.Is(err, auth.ErrInvalidToken):
		// Vague on purpose: telling an expired token from a forged one
		// helps attackers more than clients. The access log says which.
		return &apiError{code: codeUnauthorized, detail: "The bearer token is invalid or expired.", challenge: bearerChallenge + `, error="invalid_token"`}
	case errors.As(err, &be):
		return budgetExceeded(be, time.Now())
	case errors.As(err, &rl):
		return rateLimited(rl, "messages")
	case errors.As(err, &re):
		ae := apiErrf(codeRateLimited, "You already have %d replies being written, the most at once; wait for one to finish, or stop one, then send again. Your message was not saved.", re.Max)
		ae.retryAfter = runningTurnsRetry
		return ae
	case errors.As(err, &se):
		ae := apiErrf(codeRateLimited, "Too many open streams: at most %d at a time. Close one (or wait for a reply to finish), then try again.", se.Max)
		ae.retryAfter = time.Second
		return ae
	case errors.As(err, &fe):
		return &apiError{code: codeInvalidRequest, detail: fe.Error(),
			fields: []fieldIssue{{Field: fe.Field, Message: fe.Message}}}
	case errors.Is(err, tasks.ErrInvalid):
		return apiErr(codeInvalidRequest, "The request is invalid.")
	case errors.As(err, &nf):
		return apiErrf(codeNotFound, "%s %d was not found.", capitalize(nf.Kind), nf.ID)
	case errors.Is(err, tasks.ErrNotFound):
		return apiErr(codeNotFound, "Not found.")
	case errors.As(err, &ac):
		return approvalClosed(ac)
	case errors.Is(err, tasks.ErrConversationBusy):
		return apiErr(codeConversationBusy, "This conversation is still answering a previous message; wait for it to finish, then send again.")
	case errors.Is(err, tasks.ErrNoReplyToRegenerate):
		return apiErr(codeNothingToRegenerate, "Only the conversation's last reply can be regenerated, and the messages sent must end with the message it answers: this chat has moved on since you loaded it, or has no reply yet. Reload the conversation.")
	case errors.Is(err, tasks.ErrRequestInProgress):
		return apiErr(codeRequestInProgress, "A request with this Idempotency-Key is still in progress; retry after it finishes.")
	case errors.Is(err, tasks.ErrKeyMismatch):
		return apiErr(codeIdempotencyMismatch, "This Idempotency-Key was already used with a different request body.")
	case errors.Is(err, tasks.ErrUnavailable):
		return apiErr(codeUnavailable, "The service is temporarily unavailable; please try again shortly.")
	case errors.Is(err, context.Canceled):
		// The server is shutting down and gave up on the turn (a client
		// that leaves no longer ends it; a stop is no failure).
		return apiErr(codeUnavailable, "The request was interrupted because the service is restarting; please try again.")
	case isModelFailure(err):
		return apiErr(codeLLMUnavailable, llmUnavailableMessage)
	}
	return apiErr(codeInternal, "Something went wrong on our side.")
}

// partialError tells the client of a turn that failed after it changed
// tasks what failed and what was changed, so that it does not take the
// failure for "nothing happened" and send the same message again.
func partialError(pe *chat.PartialError) *apiError {
	ae := toAPIError(pe.Err)
	why := map[string]string{
		codeLLMUnavailable: "The assistant stopped before it could reply: the model is not available right now.",
		codeUnavailable:    "The reply could not be saved: the service is temporarily unavailable.",
		codeNotFound:       "The conversation was deleted while this message was being answered.",
	}[ae.code]
	switch {
	case errors.Is(pe.Err, context.Canceled):
		// The turn was stored, cut short: the server is shutting down.
		why = "The reply was interrupted because the service is restarting; what it had done is saved."
	case why == "":
		why = "The reply could not be finished."
	}
	return &apiError{code: ae.code, conversationID: pe.ConversationID, toolCalls: turnstream.ToolCallsOf(pe.Done),
		detail: why + " Before that, these changes were made and saved: " + pe.Summary() +
			" Check your tasks before sending the message again; a retry with the same Idempotency-Key is always safe."}
}

// budgetExceeded tells a user over their daily token budget when it
// renews: at the next midnight UTC, which Retry-After counts down to.
func budgetExceeded(be *tasks.BudgetError, now time.Time) *apiError {
	y, m, d := now.UTC().Date()
	wait := time.Date(y, m, d+1, 0, 0, 0, 0, time.UTC).Sub(now)
	mins := int(wait.Minutes())
	ae := apiErrf(codeTokenBudget, "You have used your daily budget of %d tokens (%d today). It renews at midnight UTC, in %d h %02d min; your message was not saved.",
		be.Budget, be.Used, mins/60, mins%60)
	ae.retryAfter = wait
	return ae
}

// isModelFailure reports whether err is one of the agent's model errors.
func isModelFailure(err error) bool {
	var me *agent.ModelError
	return errors.As(err, &me)
}

// writeError answers err as problem JSON. Internal errors are logged with
// their cause, which the client never sees.
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	ae := toAPIError(err)
	if status := ae.status(); status >= 500 && r.Context().Err() == nil {
		// (A client that left hears nothing; the access log has the request.)
		log.ErrorContext(r.Context(), "request failed", "status", status, "code", ae.code, "err", err)
	}
	writeProblem(w, ae)
}

// writeProblem writes ae as an application/problem+json body.
func writeProblem(w http.ResponseWriter, ae *apiError) {
	status := ae.status()
	p := problem{
		Type:   "https://taskchat.dev/problems/" + strings.ReplaceAll(ae.code, "_", "-"),
		Title:  http.StatusText(status),
		Status: status,
		Code:   ae.code,
		Detail: ae.detail,
		Errors: ae.fields,

		ConversationID: ae.conversationID,
		ToolCalls:      ae.toolCalls,
	}
	body, _ := json.Marshal(p)
	h := w.Header()
	h.Set("Content-Type", "application/problem+json")
	h.Set("Cache-Control", "no-store")
	if ae.retryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(seconds(ae.retryAfter)))
	}
	if ae.challenge != "" {
		h.Set("WWW-Authenticate", ae.challenge)
	}
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

// problems is the error table as a turn's stream tells a failure
// (turnstream.Problems): as problem JSON before the stream's first frame,
// as an error event after.
type problems struct{ log *slog.Logger }

func (p problems) Write(w http.ResponseWriter, r *http.Request, err error) {
	writeError(w, r, p.log, err)
}

func (problems) Event(err error) (turnstream.ErrorEvent, int) {
	ae := toAPIError(err)
	return errorEventOf(ae), ae.status()
}

// errorEventOf is the error event that tells ae.
func errorEventOf(ae *apiError) turnstream.ErrorEvent {
	return turnstream.ErrorEvent{Code: ae.code, Message: ae.detail, ToolCalls: ae.toolCalls}
}

// approvalClosed tells why an approval can no longer be decided as asked.
func approvalClosed(ac *tasks.ApprovalClosedError) *apiError {
	why := map[string]string{
		tasks.ApprovalApproved:   "it was approved already",
		tasks.ApprovalDenied:     "it was denied already",
		tasks.ApprovalSuperseded: "a newer message in its conversation superseded it",
		tasks.ApprovalExpired:    "it expired",
	}[ac.State]
	if why == "" {
		why = "it is " + ac.State
	}
	if ac.ID == 0 {
		return apiErrf(codeApprovalClosed, "The approval can no longer be decided: %s.", why)
	}
	return apiErrf(codeApprovalClosed, "Approval %d can no longer be decided so: %s.", ac.ID, why)
}
