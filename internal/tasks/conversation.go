package tasks

import (
	"context"
	"encoding/json"
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

// Conversation is one chat thread of a user.
type Conversation struct {
	ID        int64
	UserID    string
	Title     string
	CreatedAt time.Time
	UpdatedAt time.Time
	// Summary is its compacted past, nil until it has one. It is read
	// where a turn or a client needs it (StartTurn, Conversation), not in
	// listings.
	Summary *Summary
}

// Summary is what a conversation's older messages said, written once its
// history passed the window a turn loads (compaction): the model is given
// it ahead of the messages after Through, which it covers with every
// message before.
type Summary struct {
	Text    string
	Through int64 // the last message it covers
	At      time.Time
}

// SummaryWrite is a summary to store in place of the one that covered
// through From (0: none): it is stored only if the conversation's summary
// still covers through From, and Through is past it (ErrSummaryMoved
// otherwise), so that two compactions of one span never both write. Usage
// is what writing it cost, added to the user's day whether it is stored
// or not: a write whose Through is not past From stores only that (and
// fails with ErrSummaryMoved), for a compaction that failed.
type SummaryWrite struct {
	Text    string
	From    int64
	Through int64
	Usage   Usage
}

// ErrSummaryMoved means a summary was not stored because the
// conversation's summary moved on meanwhile: another compaction wrote its
// own first.
var ErrSummaryMoved = fmt.Errorf("the conversation's summary moved on: %w", ErrConflict)

// MaxSummaryRunes bounds a summary's text: it is sent with every later
// turn, so it stays a small part of the history's budget.
const MaxSummaryRunes = 6000

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
	Seq       int // its position among the turn's calls, from 0
	Duration  time.Duration
	CreatedAt time.Time
	// Awaiting is the approval this call waits, or waited, for: the call
	// is its placeholder (see Approval). A placeholder is followed, once
	// its approval is decided, by its resolution: a later call of the
	// turn with the same CallID, which stands in for it (Resolved).
	Awaiting int64
}

// Page is a cursor-paginated listing: Next is empty on the last page.
type Page[T any] struct {
	Items []T
	Next  string
}

// ConversationStore is what the conversation endpoints need from storage.
// Every method is scoped to the user: another user's conversation is not
// found.
type ConversationStore interface {
	ListConversations(ctx context.Context, userID string, limit int, cursor string) (Page[Conversation], error)
	// Messages returns a page of the conversation's messages, oldest first,
	// each reply with its tool calls, after cursor (the Next of the previous
	// page; "" for the first): at most limit of them, and at most maxBytes
	// of their text and tool calls' JSON, but always one at least, so that
	// a message larger than maxBytes is a page of its own. A turn cut short
	// by a crash is finished first (see TurnStore), so the thread shows
	// what it did.
	Messages(ctx context.Context, userID string, conversationID int64, limit, maxBytes int, cursor string) (Page[Message], error)
	// Conversation returns the conversation with its summary, if any.
	Conversation(ctx context.Context, userID string, conversationID int64) (Conversation, error)
	DeleteConversation(ctx context.Context, userID string, conversationID int64) error
}

// ValidateMessage trims a chat message and checks it is 1 to 4000
// characters of text as a task's description is (see validText): it may
// run over several lines, and holds no other control characters.
func ValidateMessage(s string) (string, error) {
	return validText("message", s, true, MaxMessageLen)
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
