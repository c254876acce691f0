package turnstream

// A turn's answer and its streams' events, as api/openapi.yaml describes
// them: the JSON body of POST /chat and its stream's done event, the data
// of taskchat's other events, and the AI SDK's chunks.

import (
	"encoding/json"
	"time"

	"github.com/taskchat/taskchat/internal/chat"
	"github.com/taskchat/taskchat/internal/tasks"
)

// ChatResponse is the answer to a chat turn, and the data of its stream's
// done event.
type ChatResponse struct {
	ConversationID int64      `json:"conversation_id"`
	Response       string     `json:"response"`
	ToolCalls      []ToolCall `json:"tool_calls"`
	// Interrupted is set when the turn did not complete: someone stopped
	// it, or, on a replay of a keyed turn, its model failed after a tool
	// ran or its replica stopped after its tools changed something.
	Interrupted bool `json:"interrupted,omitempty"`
	// Stopped is set when someone stopped the turn (POST …/stop).
	Stopped bool `json:"stopped,omitempty"`
	// Approvals are the calls of the turn that wait for their person.
	Approvals []Approval `json:"approvals,omitempty"`
}

// Approval is a call that waits, or waited, for its person, as the API
// shows it: in a turn's answer, its stream's approval_required event, and
// the approvals routes.
type Approval struct {
	ID             int64           `json:"id"`
	ConversationID int64           `json:"conversation_id"`
	TurnID         int64           `json:"turn_id"`
	CallID         string          `json:"call_id"`
	Tool           string          `json:"tool"`
	Arguments      json.RawMessage `json:"arguments"`
	Summary        string          `json:"summary"`
	State          string          `json:"state"`
	Reason         string          `json:"reason,omitempty"`
	DecidedAt      *time.Time      `json:"decided_at,omitempty"`
	CreatedAt      time.Time       `json:"created_at"`
	ExpiresAt      time.Time       `json:"expires_at"`
}

// ApprovalOf is a as the API shows it.
func ApprovalOf(a tasks.Approval) Approval {
	out := Approval{ID: a.ID, ConversationID: a.ConversationID, TurnID: a.TurnID, CallID: a.CallID, Tool: a.Tool,
		Arguments: a.Arguments, Summary: a.Summary, State: a.State, Reason: a.Reason, CreatedAt: a.CreatedAt, ExpiresAt: a.ExpiresAt}
	if !a.DecidedAt.IsZero() {
		out.DecidedAt = &a.DecidedAt
	}
	return out
}

// domain is the approval a shows.
func (a Approval) domain() tasks.Approval {
	out := tasks.Approval{ID: a.ID, ConversationID: a.ConversationID, TurnID: a.TurnID, CallID: a.CallID, Tool: a.Tool,
		Arguments: a.Arguments, Summary: a.Summary, State: a.State, Reason: a.Reason, CreatedAt: a.CreatedAt, ExpiresAt: a.ExpiresAt}
	if a.DecidedAt != nil {
		out.DecidedAt = *a.DecidedAt
	}
	return out
}

// ApprovalsOf is list as the API shows it: never null.
func ApprovalsOf(list []tasks.Approval) []Approval {
	out := make([]Approval, len(list))
	for i, a := range list {
		out[i] = ApprovalOf(a)
	}
	return out
}

// ToolCall is one tool call of a turn, its arguments and its result, as
// every body and event that tells a turn's changes shows it.
type ToolCall struct {
	ID        string          `json:"id"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Result    json.RawMessage `json:"result"`
	IsError   bool            `json:"is_error"`
	// ApprovalID is the approval the call waits, or waited, for: it did
	// not run.
	ApprovalID int64 `json:"approval_id,omitempty"`
}

// The data of the stream's events other than done.
type (
	startEvent struct {
		ConversationID int64 `json:"conversation_id"`
		TurnID         int64 `json:"turn_id,omitempty"`
	}
	deltaEvent struct {
		Text string `json:"text"`
	}
	toolCallEvent struct {
		ID        string          `json:"id"`
		Tool      string          `json:"tool"`
		Arguments json.RawMessage `json:"arguments"`
	}
	toolResultEvent struct {
		ID      string          `json:"id"`
		Tool    string          `json:"tool"`
		Result  json.RawMessage `json:"result"`
		IsError bool            `json:"is_error"`
	}
	// ErrorEvent is the data of the stream's error event; the http
	// package's error table makes it from an error (Problems.Event).
	ErrorEvent struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		// ToolCalls are the changes a turn made before it failed.
		ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	}
)

// ChatResponseOf is the answer to a turn that ended with o.
func ChatResponseOf(o chat.Outcome) ChatResponse {
	r := ChatResponse{ConversationID: o.ConversationID, Response: o.Reply, ToolCalls: ToolCallsOf(o.ToolCalls),
		Interrupted: o.Interrupted, Stopped: o.Stopped}
	if len(o.Approvals) > 0 {
		r.Approvals = ApprovalsOf(o.Approvals)
	}
	return r
}

// ToolCallsOf is calls as a body or an event shows them.
func ToolCallsOf(calls []chat.ToolCall) []ToolCall {
	out := make([]ToolCall, len(calls))
	for i, c := range calls {
		out[i] = ToolCall(c)
	}
	return out
}

// The chunks of the AI SDK's UI message stream (POST /chat/ui), as the
// `ai` package's uiMessageChunkSchema defines them; each is the JSON of
// one `data:` line. Tools are dynamic tool parts: their names and schemas
// come from the MCP server, not from the client's code.
type (
	uiChunk struct {
		Type string `json:"type"` // start-step, finish-step
	}
	uiStartChunk struct {
		Type            string     `json:"type"`                // start
		MessageID       string     `json:"messageId,omitempty"` // reply-{turn id}
		MessageMetadata uiMetadata `json:"messageMetadata"`
	}
	uiFinishChunk struct {
		Type            string      `json:"type"`         // finish
		FinishReason    string      `json:"finishReason"` // stop
		MessageMetadata *uiMetadata `json:"messageMetadata,omitempty"`
	}
	// uiMetadata is the assistant message's metadata: its conversation, and
	// on a replayed turn that did not complete, that it did not.
	uiMetadata struct {
		ConversationID int64 `json:"conversation_id,omitempty"`
		Interrupted    bool  `json:"interrupted,omitempty"`
		Stopped        bool  `json:"stopped,omitempty"`
	}
	uiTextChunk struct {
		Type string `json:"type"` // text-start, text-end
		ID   string `json:"id"`
	}
	uiTextDeltaChunk struct {
		Type  string `json:"type"` // text-delta
		ID    string `json:"id"`
		Delta string `json:"delta"`
	}
	uiToolInputChunk struct {
		Type       string          `json:"type"` // tool-input-available
		ToolCallID string          `json:"toolCallId"`
		ToolName   string          `json:"toolName"`
		Input      json.RawMessage `json:"input"`
		Dynamic    bool            `json:"dynamic"`
	}
	uiToolOutputChunk struct {
		Type       string          `json:"type"` // tool-output-available
		ToolCallID string          `json:"toolCallId"`
		Output     json.RawMessage `json:"output"`
		Dynamic    bool            `json:"dynamic"`
	}
	uiApprovalChunk struct {
		Type       string `json:"type"` // tool-approval-request
		ApprovalID string `json:"approvalId"`
		ToolCallID string `json:"toolCallId"`
	}
	uiDataChunk struct {
		Type      string   `json:"type"` // data-approval
		ID        string   `json:"id"`
		Data      Approval `json:"data"`
		Transient bool     `json:"transient"`
	}
	uiToolErrorChunk struct {
		Type       string `json:"type"` // tool-output-error
		ToolCallID string `json:"toolCallId"`
		ErrorText  string `json:"errorText"`
		Dynamic    bool   `json:"dynamic"`
	}
	uiErrorChunk struct {
		Type      string `json:"type"` // error
		ErrorText string `json:"errorText"`
	}
)
