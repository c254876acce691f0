package chat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/tasks"
)

// Request is one message of a user to a conversation.
type Request struct {
	UserID         string // from the verified token, never from the body
	ConversationID int64  // 0 starts a new conversation
	Message        string // already validated (tasks.ValidateMessage)
	// IdempotencyKey makes a retry of the same request replay the first
	// one's outcome instead of running again; "" when the client sent none.
	IdempotencyKey string
	// ChatID, when set, names the conversation instead of ConversationID:
	// it is a client's own id for it (the AI SDK's chat id), 1 to 128
	// letters, digits and "_.:-", already validated. It names the
	// conversation first started under it, else the user's conversation
	// whose id it spells; else the turn starts a new conversation,
	// remembered under it.
	ChatID string
	// Regenerate runs the conversation's last turn again, to write its
	// reply anew, instead of adding Message: Message must be that turn's
	// message (else tasks.ErrNoReplyToRegenerate). The turn keeps its tool
	// calls: the model sees them done, with their results, and the new
	// reply holds them and any it makes. Nothing a tool did is run again.
	Regenerate bool
	// RegenerateTurn, when set with Regenerate, is the turn the client
	// means (Outcome.TurnID): refused unless it is the last.
	RegenerateTurn int64
	// Continue, when set, is the turn to continue once its approvals are
	// all decided (see Engine.Decide, which makes such a request): the
	// turn is reopened as for Regenerate, its decided calls are resolved
	// (an approved one runs, a declined one is told to the model), and the
	// model writes its reply anew. Message is not used.
	Continue int64
	// Log, when set, is the log of the turn's events its front keeps (its
	// run): its end is written with the reply, in the same transaction.
	Log RunLog
	// Stream, when set, is the lease of the stream the front answers the
	// turn on, taken as the turn starts (tasks.TurnStart.Stream): a user
	// who holds as many streams as they may is refused with a
	// *tasks.StreamsError before anything is written. The front gives the
	// lease back when its stream closes.
	Stream *tasks.StreamLease
}

// RunLog is the log of a turn's events that its front keeps, whose end
// the engine writes with the reply.
type RunLog interface {
	// Take returns the end of the turn's run: its events not yet written
	// and, last, the one that tells how the turn ended — out, or err when
	// the turn fails. nil when the turn keeps no run.
	Take(out Outcome, err error) *tasks.RunEnd
	// Written tells the log that what Take returned was written.
	Written()
}

// Outcome is how a turn ended, or, replayed, how it ended the first time.
type Outcome struct {
	ConversationID int64
	// TurnID is the turn's id, its user message's; 0 on a replay of a key
	// stored before turns were named in replays.
	TurnID    int64
	Reply     string
	ToolCalls []ToolCall
	// Interrupted is set on a replay of a keyed turn that did not complete
	// (its client left, its model failed after a tool ran, or its replica
	// stopped after its tools changed something).
	Interrupted bool
	// Replayed is set when the outcome is a keyed request's stored one.
	Replayed bool
	// Stopped is set when someone stopped the turn (its context ended with
	// tasks.ErrStopped): it is stored as interrupted, with what it had
	// written and done, and is no failure.
	Stopped bool
	// Approvals are the calls of the turn that wait for their person.
	Approvals []tasks.Approval
}

// ToolCall is one tool call of a turn as its client sees it. Arguments are
// JSON that PostgreSQL can store: the model's arguments as they were, or,
// when they were not a storable JSON object, its text as a JSON string.
type ToolCall struct {
	ID        string
	Tool      string
	Arguments json.RawMessage
	Result    json.RawMessage // JSON; null until the call has run
	IsError   bool
	// ApprovalID is the approval the call waits, or waited, for: the call
	// did not run (its result says why).
	ApprovalID int64
}

// EventKind says what an Event reports.
type EventKind int

// A turn's events, in order: EventStarted once, then text and tool calls
// as they happen. How the turn ended is Run's return value, not an event.
const (
	EventStarted    EventKind = iota + 1 // ConversationID, TurnID, RunID and, for a regenerated reply, Earlier are set
	EventDelta                           // Text holds the new text
	EventToolCall                        // Call holds the call, without result
	EventToolResult                      // Call holds the call with its result
	EventApproval                        // Approval holds the approval a call asked for, after the call's result
)

// Event is one thing that happened in a turn.
type Event struct {
	Kind           EventKind
	ConversationID int64
	TurnID         int64
	// RunID is the turn's run (tasks.Run), the log its events are kept in.
	RunID int64
	Text  string
	Call  *ToolCall
	// Round is a tool call's model round in the turn, from 0: the calls
	// of one round follow the round's text.
	Round int
	// Earlier are the calls a regenerated turn made before, which its new
	// reply holds too, each with its Round.
	Earlier []EarlierCall
	// Approval is an EventApproval's.
	Approval *tasks.Approval
}

// EarlierCall is a call of a regenerated turn's earlier run.
type EarlierCall struct {
	ToolCall
	Round int
}

// Observer receives a turn's events, synchronously and in order. It must
// not block for long: the turn waits.
type Observer func(Event)

// PartialError is a turn that failed after its tools had changed tasks.
// Err is why it failed (a model failure, the database, a deleted
// conversation, cancellation: match it with errors.Is); Done is what was
// changed, each change saved with its record. A client must be told both,
// so that it does not take the failure for "nothing happened".
type PartialError struct {
	Err            error
	ConversationID int64
	Done           []ToolCall
}

func (e *PartialError) Error() string {
	return fmt.Sprintf("%v (after %d tool calls that changed tasks)", e.Err, len(e.Done))
}

// Unwrap returns why the turn failed.
func (e *PartialError) Unwrap() error { return e.Err }

// Summary says in one sentence what the turn changed before it failed,
// from the calls' results: "Added task 4 (Buy milk); completed task 2 (Pay bills)."
func (e *PartialError) Summary() string {
	parts := make([]string, len(e.Done))
	for i, c := range e.Done {
		parts[i] = describe(c)
	}
	s := strings.Join(parts, "; ") + "."
	return strings.ToUpper(s[:1]) + s[1:]
}

// describe names what one successful call changed, from its result's
// task_id, status and title when it has them.
func describe(c ToolCall) string {
	var r struct {
		TaskID int64  `json:"task_id"`
		Status string `json:"status"`
		Title  string `json:"title"`
	}
	if json.Unmarshal(c.Result, &r) != nil || r.TaskID == 0 {
		return "ran " + c.Tool
	}
	verb := map[string]string{tasks.StatusCreated: "added", tasks.StatusDone: "completed",
		tasks.StatusDeleted: "deleted", tasks.StatusUpdated: "updated"}[r.Status]
	if verb == "" {
		verb = c.Tool + " on"
	}
	return fmt.Sprintf("%s task %d (%s)", verb, r.TaskID, r.Title)
}

// storedOutcome is an Outcome as a keyed request keeps it for replay. Its
// members are those the API has always answered, so keys stored by earlier
// versions replay too.
type storedOutcome struct {
	ConversationID int64            `json:"conversation_id"`
	TurnID         int64            `json:"turn_id,omitempty"`
	Response       string           `json:"response"`
	ToolCalls      []storedToolCall `json:"tool_calls"`
	Interrupted    bool             `json:"interrupted,omitempty"`
	Stopped        bool             `json:"stopped,omitempty"`
	Approvals      []storedApproval `json:"approvals,omitempty"`
}

type storedToolCall struct {
	ID         string          `json:"id"`
	Tool       string          `json:"tool"`
	Arguments  json.RawMessage `json:"arguments"`
	Result     json.RawMessage `json:"result"`
	IsError    bool            `json:"is_error"`
	ApprovalID int64           `json:"approval_id,omitempty"`
}

// storedApproval is an approval a replayed turn asked for, as it was then.
type storedApproval struct {
	ID             int64           `json:"id"`
	ConversationID int64           `json:"conversation_id"`
	TurnID         int64           `json:"turn_id"`
	CallID         string          `json:"call_id"`
	Seq            int             `json:"seq"`
	Round          int             `json:"round"`
	Tool           string          `json:"tool"`
	Arguments      json.RawMessage `json:"arguments"`
	Summary        string          `json:"summary"`
	CreatedAt      time.Time       `json:"created_at"`
	ExpiresAt      time.Time       `json:"expires_at"`
}

func encodeOutcome(o Outcome) json.RawMessage {
	s := storedOutcome{ConversationID: o.ConversationID, TurnID: o.TurnID, Response: o.Reply, Interrupted: o.Interrupted, Stopped: o.Stopped,
		ToolCalls: make([]storedToolCall, len(o.ToolCalls))}
	for i, c := range o.ToolCalls {
		s.ToolCalls[i] = storedToolCall(c)
	}
	for _, a := range o.Approvals {
		s.Approvals = append(s.Approvals, storedApproval{ID: a.ID, ConversationID: a.ConversationID, TurnID: a.TurnID, CallID: a.CallID,
			Seq: a.Seq, Round: a.Round, Tool: a.Tool, Arguments: a.Arguments, Summary: a.Summary, CreatedAt: a.CreatedAt, ExpiresAt: a.ExpiresAt})
	}
	b, _ := json.Marshal(s)
	return b
}

func decodeOutcome(raw json.RawMessage) (Outcome, error) {
	var s storedOutcome
	if err := json.Unmarshal(raw, &s); err != nil {
		return Outcome{}, fmt.Errorf("stored outcome: %w", err)
	}
	o := Outcome{ConversationID: s.ConversationID, TurnID: s.TurnID, Reply: s.Response, Interrupted: s.Interrupted, Stopped: s.Stopped, Replayed: true,
		ToolCalls: make([]ToolCall, len(s.ToolCalls))}
	for i, c := range s.ToolCalls {
		o.ToolCalls[i] = ToolCall(c)
	}
	for _, a := range s.Approvals {
		o.Approvals = append(o.Approvals, tasks.Approval{ID: a.ID, ConversationID: a.ConversationID, TurnID: a.TurnID, CallID: a.CallID,
			Seq: a.Seq, Round: a.Round, Tool: a.Tool, Arguments: a.Arguments, Summary: a.Summary, State: tasks.ApprovalPending,
			CreatedAt: a.CreatedAt, ExpiresAt: a.ExpiresAt})
	}
	return o, nil
}

// toolCallOf shapes an agent's call for clients and storage.
func toolCallOf(c *agent.Call) ToolCall {
	result := c.Result
	if len(result) == 0 {
		result = json.RawMessage("null")
	}
	return ToolCall{ID: c.ID, Tool: c.Tool, Arguments: argumentsOf(c.Arguments), Result: result, IsError: c.IsError, ApprovalID: c.Awaiting}
}

// shownCalls are a turn's calls as its client sees them: a placeholder's
// resolution stands in for it (tasks.Resolved).
func shownCalls(calls []ToolCall) []ToolCall {
	return tasks.ResolvedBy(calls, func(c ToolCall) (string, bool) { return c.ID, c.ApprovalID != 0 })
}

// argumentsOf is the model's arguments as storable JSON: the object it
// wrote, or its text as a JSON string when that was not a storable object.
func argumentsOf(raw json.RawMessage) json.RawMessage {
	if b, ok := tasks.StorableJSON(raw); ok && isJSONObject(b) {
		return b
	}
	b, _ := json.Marshal(tasks.StorableText(string(raw)))
	return b
}

// isJSONObject reports whether raw, valid JSON, is an object.
func isJSONObject(raw json.RawMessage) bool {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	return len(raw) > 0 && raw[0] == '{'
}
