package tasks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// An approval is a tool call that waits for its person (the tools an
// operator lists in APPROVAL_TOOLS). The call does not run: its turn
// records it with an AwaitingResult, and it runs only once the person
// approves it. The decision continues the turn: the approved call runs with
// the arguments that were shown, or the declined one is told to the model,
// as the call's resolution — a new call of the same turn, with the same
// call id — and the model answers.

// The states of an approval, as the API shows them. Only pending is stored
// with an approval that is not live: an approval is superseded when its
// turn is no longer its conversation's last (a new message came), and
// expired past its ExpiresAt, without a write.
const (
	ApprovalPending    = "pending"
	ApprovalApproved   = "approved"
	ApprovalDenied     = "denied"
	ApprovalSuperseded = "superseded"
	ApprovalExpired    = "expired"
)

// ErrApprovalClosed means an approval can no longer be decided as asked: it
// was decided the other way, superseded by a new message, or expired. See
// ApprovalClosedError.
var ErrApprovalClosed = fmt.Errorf("the approval can no longer be decided: %w", ErrConflict)

// ApprovalClosedError refuses a decision of an approval in State.
type ApprovalClosedError struct {
	ID    int64
	State string
}

func (e *ApprovalClosedError) Error() string {
	return fmt.Sprintf("approval %d is %s: it can no longer be decided so", e.ID, e.State)
}

// Is makes an *ApprovalClosedError match ErrApprovalClosed and ErrConflict.
func (e *ApprovalClosedError) Is(target error) bool {
	return target == ErrApprovalClosed || target == ErrConflict
}

// Approval is one call that waits, or waited, for its person.
type Approval struct {
	ID             int64
	ConversationID int64
	TurnID         int64
	CallID         string
	Seq            int // the call's position in its turn
	Round          int // the model round that asked for it
	Tool           string
	Arguments      json.RawMessage
	Summary        string // what the call does, in plain words: "Delete task 3, Buy milk"
	// Title is the title of the task the call names, as the person was
	// shown it; "" when it names none.
	Title     string
	State     string // one of the Approval… states
	Reason    string // the person's, with a decision; may be ""
	DecidedAt time.Time
	CreatedAt time.Time
	ExpiresAt time.Time
}

// ApprovalRequest is what a turn records when its model calls a tool that
// waits: the call (Record) and what the person is shown.
type ApprovalRequest struct {
	Record  CallRecord // its chat turn's call
	UserID  string
	Summary string
	TTL     time.Duration
	// TaskID and Title name the task the call is about, when it names one
	// that exists: the model is told them with the call's placeholder.
	TaskID int64
	Title  string
}

// Decision is a person's decision on an approval.
type Decision struct {
	UserID     string
	ApprovalID int64
	Approved   bool
	Reason     string
	// TurnRate, when it limits, takes a token from the user's bucket of
	// turns (BucketTurns) for the turn the decision may continue, or
	// refuses the decision with a *RateLimitError; nothing is decided.
	TurnRate Rate
}

// Decided is how a decision went: the approval as decided, and the
// approvals of its turn that still wait. Again is set when the approval
// had already been decided so (a retry): nothing changed. Latest is the
// newest of the turn's decided approvals.
type Decided struct {
	Approval Approval
	Waiting  []Approval
	Again    bool
	Latest   int64
}

// ApprovalStore keeps approvals. Every method is scoped to the user.
type ApprovalStore interface {
	// RequestApproval records a call that waits: the approval and, as the
	// call's record, its placeholder result (AwaitingResult), while the
	// turn holds its conversation (else ErrTurnEnded).
	RequestApproval(ctx context.Context, r ApprovalRequest) (Approval, error)
	// DecideApproval decides a live approval, a compare-and-set: the first
	// decision wins. The same decision again is Decided.Again; the other
	// decision, or any decision of an approval no longer live, is an
	// *ApprovalClosedError; another user's, ErrNotFound.
	DecideApproval(ctx context.Context, d Decision) (Decided, error)
	// ListApprovals returns up to limit of the user's live approvals,
	// newest first, those with ids below before (0: from the newest).
	ListApprovals(ctx context.Context, userID string, before int64, limit int) ([]Approval, error)
	// GetApproval returns one of the user's approvals, live or not.
	GetApproval(ctx context.Context, userID string, id int64) (Approval, error)
	// TurnApprovals returns every approval of the user's turn, in order.
	TurnApprovals(ctx context.Context, userID string, turnID int64) ([]Approval, error)
	// TaskTitle returns the title of the user's task number id, for an
	// approval's summary; "" when there is none.
	TaskTitle(ctx context.Context, userID string, id int64) (string, error)
}

// AwaitingStatus is the status of the result a call that waits for
// approval gets in place of running: an AwaitingResult.
const AwaitingStatus = "awaiting_approval"

// AwaitingResult is what the model is told of a call that waits: it has
// not run, and will only once the person approves it.
type AwaitingResult struct {
	Status     string `json:"status"` // AwaitingStatus
	ApprovalID int64  `json:"approval_id"`
	Summary    string `json:"summary"`
	Message    string `json:"message"`
	// TaskID and Title name the task the call is about, when it names one.
	TaskID int64  `json:"task_id,omitempty"`
	Title  string `json:"title,omitempty"`
}

// AwaitingJSON is the placeholder result of r's call, asked as approval a.
func AwaitingJSON(a Approval, r ApprovalRequest) json.RawMessage {
	b, _ := json.Marshal(AwaitingResult{Status: AwaitingStatus, ApprovalID: a.ID, Summary: a.Summary, TaskID: r.TaskID, Title: r.Title,
		Message: "This call has not run: it waits for the person's approval. Tell them what waits; it runs once they approve it."})
	return b
}

// DeclinedStatus is the status of the result of a call its person
// declined: a DeclinedResult.
const DeclinedStatus = "declined"

// DeclinedResult is the result of a call its person declined, an
// ErrorResult with a status and their reason: the call did not run.
type DeclinedResult struct {
	Error  string `json:"error"`
	Status string `json:"status"` // DeclinedStatus
	Reason string `json:"reason,omitempty"`
}

// DeclinedJSON is the result of a call its person declined, for reason.
func DeclinedJSON(reason string) json.RawMessage {
	msg := "The person declined this call; it did not run."
	if reason = strings.TrimSpace(reason); reason != "" {
		msg += " Their reason: " + reason
	}
	b, _ := json.Marshal(DeclinedResult{Error: msg, Status: DeclinedStatus, Reason: reason})
	return b
}

// StaleJSON is the result of an approved call that did not run because
// what it acts on changed since the person approved it (why says how).
func StaleJSON(why string) json.RawMessage {
	b, _ := json.Marshal(DeclinedResult{Error: "This call did not run: " + why + ". Ask the person again.", Status: StaleStatus})
	return b
}

// StaleStatus is the status of StaleJSON's result.
const StaleStatus = "stale"

// NotApprovedMessage is what the model reads, in the history, of a call
// that waited and never ran: a new message came before it was decided, or
// before its turn went on with it, or it expired.
const NotApprovedMessage = "This call did not run: it waited for the person's approval, and the conversation went on before it ran."

// MaxReasonLength bounds a decision's reason, in characters.
const MaxReasonLength = 1000

// ValidateReason checks a decision's reason, which may be empty.
func ValidateReason(reason string) (string, error) {
	return validText("reason", reason, false, MaxReasonLength)
}

// Summarize says in plain words what a call of tool with args does, for
// the person who approves it: "Delete task 3, Buy milk". title is the task
// the call names, as it is now ("" when unknown).
func Summarize(tool string, args json.RawMessage, title string) string {
	var a struct {
		TaskID      json.Number `json:"task_id"`
		Title       *string     `json:"title"`
		Description *string     `json:"description"`
		Status      string      `json:"status"`
		Completed   *bool       `json:"completed"`
	}
	_ = json.Unmarshal(args, &a)
	var given map[string]json.RawMessage // due and priority: present, even as null
	_ = json.Unmarshal(args, &given)
	task := "task " + a.TaskID.String()
	if title != "" {
		task += ", " + title
	}
	switch tool {
	case ToolAddTask:
		if a.Title != nil {
			return fmt.Sprintf("Add a task, %s", *a.Title)
		}
		return "Add a task"
	case ToolDeleteTask:
		return "Delete " + task
	case ToolCompleteTask:
		return "Complete " + task
	case ToolUpdateTask:
		var changes []string
		if a.Title != nil {
			changes = append(changes, fmt.Sprintf("rename it to %q", *a.Title))
		}
		if a.Description != nil {
			changes = append(changes, "set its description")
		}
		if v, ok := given["due"]; ok {
			changes = append(changes, setOrRemove("due date", v))
		}
		if v, ok := given["priority"]; ok {
			changes = append(changes, setOrRemove("priority", v))
		}
		switch {
		case a.Completed != nil && *a.Completed:
			changes = append(changes, "mark it completed")
		case a.Completed != nil:
			changes = append(changes, "reopen it")
		}
		if len(changes) == 0 {
			return "Update " + task
		}
		return "Update " + task + ": " + strings.Join(changes, " and ")
	case ToolListTasks:
		return "List your tasks"
	}
	return fmt.Sprintf("Run %s with %s", tool, args)
}

// setOrRemove says what an update does to field: "remove its due date" for
// null or "", "set its due date to 2026-12-04" otherwise.
func setOrRemove(field string, v json.RawMessage) string {
	var text string
	if string(v) == "null" || json.Unmarshal(v, &text) == nil && strings.TrimSpace(text) == "" {
		return "remove its " + field
	}
	if text == "" {
		text = string(v)
	}
	return fmt.Sprintf("set its %s to %s", field, text)
}

// Resolved returns calls without the placeholders that their resolution
// stands in for: a call that awaited an approval and has a later call with
// the same id. What a model or a client is shown of a turn is this; the
// record keeps both.
func Resolved(calls []ToolCall) []ToolCall {
	return ResolvedBy(calls, func(c ToolCall) (string, bool) { return c.CallID, c.Awaiting != 0 })
}

// ResolvedBy is Resolved over any list of calls: it drops each that key
// says is a placeholder and whose id comes again later. It returns calls
// itself when none is dropped.
func ResolvedBy[T any](calls []T, key func(T) (id string, placeholder bool)) []T {
	var out []T
	for i, c := range calls {
		id, placeholder := key(c)
		drop := false
		if placeholder {
			for _, later := range calls[i+1:] {
				if laterID, _ := key(later); laterID == id {
					drop = true
					break
				}
			}
		}
		if drop && out == nil {
			out = append(make([]T, 0, len(calls)-1), calls[:i]...)
		}
		if !drop && out != nil {
			out = append(out, c)
		}
	}
	if out == nil {
		return calls
	}
	return out
}

// AwaitingID returns the approval a call's result says the call waits for
// (an AwaitingResult); 0 for any other result.
func AwaitingID(result json.RawMessage) int64 {
	if !bytes.Contains(result, []byte(AwaitingStatus)) {
		return 0
	}
	var r AwaitingResult
	if json.Unmarshal(result, &r) != nil || r.Status != AwaitingStatus {
		return 0
	}
	return r.ApprovalID
}
