package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Limits on chat messages and conversation titles.
const (
	MaxMessageLen = 4000
	MaxTitleRunes = 60
)

// The conflicts a chat turn can run into. Each matches ErrConflict too,
// except ErrKeyMismatch, which is a misuse of the key rather than a race.
var (
	// ErrConversationBusy means another turn of the conversation is running.
	ErrConversationBusy = fmt.Errorf("conversation is busy with another turn: %w", ErrConflict)
	// ErrRequestInProgress means a request with the same idempotency key is
	// still running.
	ErrRequestInProgress = fmt.Errorf("a request with this idempotency key is in progress: %w", ErrConflict)
	// ErrKeyMismatch means an idempotency key was reused with another body.
	ErrKeyMismatch = errors.New("idempotency key was used with a different request")
)

// Conversation is one chat thread of a user.
type Conversation struct {
	ID        int64
	UserID    string
	Title     string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Message is one stored chat message. An assistant message carries the tool
// calls made while producing it.
type Message struct {
	ID             int64
	ConversationID int64
	Role           string // "user" or "assistant"
	Content        string
	Interrupted    bool
	ToolCalls      []ToolCall
	CreatedAt      time.Time
}

// The roles a stored message can have.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// ToolCall is the audit record of one tool call: what the model asked for
// and what the tool answered, both as JSON.
type ToolCall struct {
	CallID    string
	Tool      string
	Arguments json.RawMessage
	Result    json.RawMessage
	IsError   bool
	Round     int // the model call that asked for it, from 0
	Duration  time.Duration
	CreatedAt time.Time
}

// TurnStart is what a chat turn stores before the model runs.
type TurnStart struct {
	UserID         string
	ConversationID int64 // 0 starts a new conversation
	Message        string
	HistoryLimit   int           // newest messages to load, before the new one
	ClaimFor       time.Duration // how long the conversation is held for this turn
}

// Turn is a started turn: the conversation (held by ClaimToken until the
// turn finishes or the claim expires), the stored user message, and the
// history before it, oldest first.
type Turn struct {
	Conversation Conversation
	ClaimToken   string
	UserMessage  Message
	History      []Message
}

// TurnEnd is what a chat turn stores when it ends: the reply and every tool
// call, and for an idempotent request the response to replay.
type TurnEnd struct {
	UserID         string
	ConversationID int64
	ClaimToken     string
	Reply          string
	Interrupted    bool
	ToolCalls      []ToolCall
	IdempotencyKey string
	Response       json.RawMessage // stored for replay when IdempotencyKey is set
}

// Page is a cursor-paginated listing: Next is empty on the last page.
type Page[T any] struct {
	Items []T
	Next  string
}

// IdempotentRequest identifies a keyed request: the key and a hash of what
// was asked, so a reuse with another body can be told apart from a retry.
type IdempotentRequest struct {
	UserID  string
	Key     string
	Hash    []byte
	LockFor time.Duration
	KeepFor time.Duration
}

// ConversationStore is what the chat service needs from storage. Every
// method is scoped to the user: another user's conversation is not found.
type ConversationStore interface {
	// StartTurn loads or creates the conversation, claims it, stores the
	// user message and returns the history, in one round trip. Its writes
	// are committed, but may reach the disk only with the next durable
	// write: a tool's, FinishTurn's or AbandonTurn's, one of which ends
	// every turn before its client hears the outcome.
	StartTurn(ctx context.Context, s TurnStart) (Turn, error)
	// FinishTurn stores the reply and its tool calls in one transaction and
	// releases the claim.
	FinishTurn(ctx context.Context, e TurnEnd) (Message, error)
	// AbandonTurn releases the claim of a turn that stored no reply.
	AbandonTurn(ctx context.Context, userID string, conversationID int64, claimToken string) error

	// BeginIdempotent records a keyed request as running. It returns the
	// stored response when the request already completed, ErrKeyMismatch
	// when the key came with another body, ErrRequestInProgress while the
	// first request still runs.
	BeginIdempotent(ctx context.Context, r IdempotentRequest) (json.RawMessage, error)
	// ForgetIdempotent drops a running key whose request failed, so that a
	// retry runs again.
	ForgetIdempotent(ctx context.Context, userID, key string) error

	ListConversations(ctx context.Context, userID string, limit int, cursor string) (Page[Conversation], error)
	Messages(ctx context.Context, userID string, conversationID int64) ([]Message, error)
	DeleteConversation(ctx context.Context, userID string, conversationID int64) error
}

// ValidateMessage trims a chat message and checks it is 1 to 4000
// characters of valid UTF-8 without NUL bytes.
func ValidateMessage(s string) (string, error) {
	return validString("message", s, true, MaxMessageLen)
}

// TitleFrom makes a conversation title from its first message: the first
// line, cut at a word boundary to at most MaxTitleRunes characters.
func TitleFrom(message string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(message), "\n")
	line = strings.Join(strings.Fields(line), " ")
	if utf8.RuneCountInString(line) <= MaxTitleRunes {
		return line
	}
	r := []rune(line)[:MaxTitleRunes-1]
	if i := strings.LastIndexByte(string(r), ' '); i > MaxTitleRunes/2 {
		return string(r)[:i] + "…"
	}
	return string(r) + "…"
}
