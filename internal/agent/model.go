package agent

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Role is who wrote a message in the model's conversation.
type Role string

// The roles of the chat-completions message list.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one entry of the model's input. An assistant message may carry
// tool calls; a tool message answers exactly one of them by ToolCallID.
type Message struct {
	Role       Role
	Content    string
	ToolCalls  []ToolCall // assistant only
	ToolCallID string     // tool only
}

// ToolCall is one complete call the model asked for. Arguments is the raw
// JSON text the model produced, which may be malformed: the loop parses it.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string
}

// ToolDef describes a tool to the model: its parameters are a JSON Schema.
type ToolDef struct {
	Name        string
	Description string
	Parameters  json.RawMessage
	ReadOnly    bool // the tool only reads: a call changes nothing
}

// Request is everything a model needs for one call.
type Request struct {
	System   string
	Messages []Message
	Tools    []ToolDef
	// Now is the time of the turn in the user's time zone: the date and
	// time "today", "tomorrow" and "at 5" are read from. A remote model
	// reads it in the system prompt; the offline model reads it here.
	Now time.Time
}

// Usage counts the tokens a model call consumed.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// Add returns the sum of two usages.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		PromptTokens:     u.PromptTokens + v.PromptTokens,
		CompletionTokens: u.CompletionTokens + v.CompletionTokens,
		TotalTokens:      u.TotalTokens + v.TotalTokens,
	}
}

// Response is what one model call produced once its stream ended: the whole
// text (already delivered piecewise through the onText callback), the
// complete tool calls, and the usage the server reported.
type Response struct {
	Text      string
	ToolCalls []ToolCall
	Usage     Usage
}

// Model is a language model behind the agent. Stream sends text to onText
// as it arrives and returns once the model's answer is complete. onText is
// called from the goroutine that called Stream. Implementations must stop
// promptly when ctx is done, and return errors that match the Err* kinds in
// this package so the caller can tell a bad key from an outage.
type Model interface {
	Name() string
	Stream(ctx context.Context, req Request, onText func(string)) (Response, error)
}

// The kinds of model failure. A ModelError matches exactly one of them.
var (
	ErrModelAuth        = errors.New("model: authentication failed")
	ErrModelRateLimited = errors.New("model: rate limited")
	ErrModelQuota       = errors.New("model: quota exhausted")
	ErrModelServer      = errors.New("model: server error")
	ErrModelTimeout     = errors.New("model: timeout")
	ErrModelStream      = errors.New("model: malformed stream")
	ErrModelRequest     = errors.New("model: request refused")
)

// ModelError is a failed model call: its Kind is one of the Err* values
// above, Status the HTTP status when there was one, Err the cause.
type ModelError struct {
	Kind   error
	Status int
	Err    error
}

func (e *ModelError) Error() string {
	if e.Err == nil {
		return e.Kind.Error()
	}
	return e.Kind.Error() + ": " + e.Err.Error()
}

// Is matches the error's kind.
func (e *ModelError) Is(target error) bool { return target == e.Kind }

// Unwrap returns the cause.
func (e *ModelError) Unwrap() error { return e.Err }
