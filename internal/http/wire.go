package http

import (
	"encoding/json"
	"time"

	"github.com/taskchat/taskchat/internal/http/turnstream"
	"github.com/taskchat/taskchat/internal/tasks"
)

// The API's bodies, as api/openapi.yaml describes them. Request types stay
// beside their handlers; a chat turn's answer and its streams' events are
// turnstream's; everything else a client reads is here.

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

// conversationShowJSON is one conversation, with its summary: null until
// it was compacted.
type conversationShowJSON struct {
	conversationJSON
	Summary *summaryJSON `json:"summary"`
}

type summaryJSON struct {
	Text             string    `json:"text"`
	ThroughMessageID int64     `json:"through_message_id"`
	CreatedAt        time.Time `json:"created_at"`
}

func conversationShowOf(c tasks.Conversation) conversationShowJSON {
	out := conversationShowJSON{conversationJSON: conversationJSON{ID: c.ID, Title: c.Title, CreatedAt: c.CreatedAt.UTC(), UpdatedAt: c.UpdatedAt.UTC()}}
	if s := c.Summary; s != nil {
		out.Summary = &summaryJSON{Text: s.Text, ThroughMessageID: s.Through, CreatedAt: s.At.UTC()}
	}
	return out
}

type conversationsResponse struct {
	Conversations []conversationJSON `json:"conversations"`
	NextCursor    *string            `json:"next_cursor"`
}

type messageJSON struct {
	ID          int64                 `json:"id"`
	Role        string                `json:"role"`
	Content     string                `json:"content"`
	Interrupted bool                  `json:"interrupted"`
	ToolCalls   []turnstream.ToolCall `json:"tool_calls"`
	CreatedAt   time.Time             `json:"created_at"`
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
	Due         *string   `json:"due"`      // null: none
	Overdue     bool      `json:"overdue"`  // open and past its due date
	Priority    *string   `json:"priority"` // null: none
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

// storedToolCalls shapes the audit of a stored message's calls.
func storedToolCalls(calls []tasks.ToolCall) []turnstream.ToolCall {
	calls = tasks.Resolved(calls)
	out := make([]turnstream.ToolCall, len(calls))
	for i, c := range calls {
		result := c.Result
		if len(result) == 0 {
			result = json.RawMessage("null")
		}
		out[i] = turnstream.ToolCall{ID: c.CallID, Tool: c.Tool, Arguments: c.Arguments, Result: result, IsError: c.IsError, ApprovalID: c.Awaiting}
	}
	return out
}
