package http

import (
	"encoding/json"
	"time"

	"github.com/taskchat/taskchat/internal/chat"
	"github.com/taskchat/taskchat/internal/tasks"
)

// The API's bodies and stream events, as api/openapi.yaml describes them.
// Request types stay beside their handlers; everything a client reads is here.

// chatResponse is the answer to a chat turn, and the data of its stream's
// done event.
type chatResponse struct {
	ConversationID int64          `json:"conversation_id"`
	Response       string         `json:"response"`
	ToolCalls      []toolCallJSON `json:"tool_calls"`
	// Interrupted is set when the turn did not complete: someone stopped
	// it, or, on a replay of a keyed turn, its model failed after a tool
	// ran or its replica stopped after its tools changed something.
	Interrupted bool `json:"interrupted,omitempty"`
	// Stopped is set when someone stopped the turn (POST …/stop).
	Stopped bool `json:"stopped,omitempty"`
}

type toolCallJSON struct {
	ID        string          `json:"id"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Result    json.RawMessage `json:"result"`
	IsError   bool            `json:"is_error"`
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
	errorEvent struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		// ToolCalls are the changes a turn made before it failed.
		ToolCalls []toolCallJSON `json:"tool_calls,omitempty"`
	}
)

// stopResponse answers a stop that found a turn running.
type stopResponse struct {
	ConversationID int64 `json:"conversation_id"`
	TurnID         int64 `json:"turn_id"`
	// Ended says the turn had ended when the answer was sent; false when it
	// took longer than the wait (it ends all the same).
	Ended bool `json:"ended"`
}

type conversationJSON struct {
	ID        int64     `json:"id"`
	Title     string    `json:"title"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

type conversationsResponse struct {
	Conversations []conversationJSON `json:"conversations"`
	NextCursor    *string            `json:"next_cursor"`
}

type messageJSON struct {
	ID          int64          `json:"id"`
	Role        string         `json:"role"`
	Content     string         `json:"content"`
	Interrupted bool           `json:"interrupted"`
	ToolCalls   []toolCallJSON `json:"tool_calls"`
	CreatedAt   time.Time      `json:"created_at"`
}

type messagesResponse struct {
	ConversationID int64         `json:"conversation_id"`
	Messages       []messageJSON `json:"messages"`
	NextCursor     *string       `json:"next_cursor"` // null on the last page
}

type taskJSON struct {
	ID          int64     `json:"id"`
	Title       string    `json:"title"`
	Description string    `json:"description"`
	Completed   bool      `json:"completed"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

type tasksResponse struct {
	Tasks      []taskJSON `json:"tasks"`
	NextCursor *string    `json:"next_cursor"`
}

// usageResponse is a user's token usage per UTC day, every day of the range.
type usageResponse struct {
	From             string         `json:"from"`
	To               string         `json:"to"`
	DailyTokenBudget *int64         `json:"daily_token_budget"` // null: no budget
	Days             []usageDayJSON `json:"days"`
	Total            usageJSON      `json:"total"`
}

type usageDayJSON struct {
	Date string `json:"date"`
	usageJSON
}

type usageJSON struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	TotalTokens  int64 `json:"total_tokens"`
	Turns        int64 `json:"turns"`
}

func chatResponseOf(o chat.Outcome) chatResponse {
	return chatResponse{ConversationID: o.ConversationID, Response: o.Reply, ToolCalls: toolCallsOf(o.ToolCalls),
		Interrupted: o.Interrupted, Stopped: o.Stopped}
}

func toolCallsOf(calls []chat.ToolCall) []toolCallJSON {
	out := make([]toolCallJSON, len(calls))
	for i, c := range calls {
		out[i] = toolCallJSON(c)
	}
	return out
}

// storedToolCalls shapes the audit of a stored message's calls.
func storedToolCalls(calls []tasks.ToolCall) []toolCallJSON {
	out := make([]toolCallJSON, len(calls))
	for i, c := range calls {
		result := c.Result
		if len(result) == 0 {
			result = json.RawMessage("null")
		}
		out[i] = toolCallJSON{ID: c.CallID, Tool: c.Tool, Arguments: c.Arguments, Result: result, IsError: c.IsError}
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
