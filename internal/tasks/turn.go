package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
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
	// ErrTurnEnded means a tool call came for a turn that no longer holds
	// its conversation: the conversation was deleted, or the turn outlived
	// its claim. Nothing was changed.
	ErrTurnEnded = errors.New("the turn no longer holds its conversation")
	// ErrNoReplyToRegenerate means a regeneration named a reply that is not
	// the conversation's last one, or a message that is not the one its
	// last reply answers: the client's view of the conversation is stale.
	ErrNoReplyToRegenerate = fmt.Errorf("no such last reply to regenerate: %w", ErrConflict)
)

// TurnStart is what a chat turn stores before the model runs.
type TurnStart struct {
	UserID         string
	ConversationID int64 // 0 starts a new conversation
	Message        string
	HistoryLimit   int           // newest messages to load, before the new one
	ClaimFor       time.Duration // how long the conversation is held for this turn
	// HistoryChars, when positive, loads of those newest messages only the
	// newest whose characters — text, and tool calls' arguments and
	// results — add up to at most this (see agent.HistoryChars).
	HistoryChars int
	// IdempotencyKey, when set, is a key BeginIdempotent accepted: the key
	// is told which turn it started, so that a retry can find the turn.
	IdempotencyKey string
	// DailyTokenBudget, when positive, refuses the turn with a *BudgetError
	// if the user's usage today (UTC) has reached it; nothing is written.
	DailyTokenBudget int64
	// ChatID, when set with ConversationID 0, is the client's own id for
	// the new conversation (see TurnStore.ChatConversation), remembered with
	// it. A conversation already remembered under it for the user fails the
	// start with ErrConversationBusy: another first message of that chat
	// won the race, and its turn holds the conversation.
	ChatID string
	// MaxRunningTurns, when positive, refuses the turn with a
	// *RunningTurnsError if the user runs that many already, on any
	// replica; nothing is written.
	MaxRunningTurns int
	// TurnRate, when it limits, takes a token from the user's bucket of
	// turns (BucketTurns), shared by every replica, or refuses the turn
	// with a *RateLimitError; nothing is written.
	TurnRate Rate
	// Stream, when set, is the lease of the stream the turn is answered
	// on, taken as the turn starts (see StreamLeases), or the turn is
	// refused with a *StreamsError; nothing is written.
	Stream *StreamLease
}

// Turn is a started turn: the conversation (held by ClaimToken until the
// turn finishes or the claim expires), the stored user message, and the
// history before it, oldest first. The user message's id is the turn's id.
type Turn struct {
	Conversation Conversation
	ClaimToken   string
	UserMessage  Message
	History      []Message
	// Earlier are the calls a reopened turn made in its earlier run (see
	// TurnStore.ReopenTurn), in order; nil for a new turn.
	Earlier []ToolCall
	// RunID is the turn's run, the log of its events (see RunStore),
	// started with it; its lease ends with the claim.
	RunID int64
	// Replaces is a reopened turn's reply, which its new one replaces
	// (TurnEnd.Replaces); 0 for a new turn.
	Replaces int64
	// Compact says that History starts after messages the conversation's
	// summary (Conversation.Summary) does not cover: they fell out of the
	// window, and are to be summarised before the model is called.
	Compact bool
	// TimeZone is the user's time zone setting, "" for none (UTC): the
	// zone of the date and time the model is told and reads dates in.
	TimeZone string
}

// ID identifies the turn: it is its user message's id.
func (t Turn) ID() int64 { return t.UserMessage.ID }

// TurnEnd is what a chat turn stores when it ends: the reply and every tool
// call, and for an idempotent request the response to replay.
type TurnEnd struct {
	UserID         string
	ConversationID int64
	TurnID         int64
	ClaimToken     string
	Reply          string
	Interrupted    bool
	ToolCalls      []ToolCall // every call, in order; Seq is the index
	IdempotencyKey string
	Response       json.RawMessage // stored for replay when IdempotencyKey is set
	Usage          Usage           // added to the user's usage of the day
	// Run, when set, is the end of the turn's run, written with the reply:
	// a follower sees the run end exactly when the reply is stored.
	Run *RunEnd
	// Replaces, when set, is the reply the turn had before it was reopened
	// (Turn.Replaces): the new reply takes its place and its calls, while
	// the turn still holds its conversation.
	Replaces int64
}

// RunEnd is what is left of a turn's run to write when its reply is
// stored: its events not yet written, numbered from First, the last of
// them the run's last (see RunStore).
type RunEnd struct {
	RunID  int64
	First  int
	Events [][]byte
}

// CallRecord says which turn a tool call belongs to. A task change made
// with one is recorded as that call, in the same transaction as the change,
// and only while the turn holds its conversation: a change never exists
// without its record, and a turn that lost its conversation changes nothing.
//
// A call of an outside MCP client (Source SourceMCP) belongs to no turn:
// ConversationID, TurnID, ClaimToken, Round and Seq are zero, and its
// change is made as any other, recorded in the same transaction.
type CallRecord struct {
	Source         CallSource // "" is SourceChat
	ConversationID int64
	TurnID         int64
	ClaimToken     string
	CallID         string          // the model's id for the call
	Tool           string          // the tool's name
	Arguments      json.RawMessage // as StorableJSON makes them
	Round          int
	Seq            int       // the call's position in the turn, from 0
	Started        time.Time // when the call began, for its duration
}

// CallSource says who made a tool call.
type CallSource string

// The sources of tool calls.
const (
	// SourceChat is a chat turn's model: the call is one of its turn's.
	SourceChat CallSource = "chat"
	// SourceMCP is an outside MCP client at /mcp, acting for the user of
	// its bearer token: the call belongs to no turn and no conversation.
	SourceMCP CallSource = "mcp"
)

// IdempotentRequest identifies a keyed request: the key and a hash of what
// was asked, so a reuse with another body can be told apart from a retry.
type IdempotentRequest struct {
	UserID  string
	Key     string
	Hash    []byte
	LockFor time.Duration
	KeepFor time.Duration
}

// KeyState is what a keyed request found. At most one field is set; with
// none, the request is the key's to run.
type KeyState struct {
	// Replay is the stored response of a request that completed.
	Replay json.RawMessage
	// CutShort is the turn of a request whose run ended without a reply
	// (its replica crashed, or its last write failed) after its tools
	// changed something. It must not run again: the caller finishes the
	// turn with RecoverTurn and answers what it did.
	CutShort *TurnRef
}

// InProgressError is ErrRequestInProgress for a request whose turn has
// started: Turn names it, so that the retry can follow it to its end.
type InProgressError struct {
	Turn TurnRef
}

func (e *InProgressError) Error() string { return ErrRequestInProgress.Error() }

// Is makes an *InProgressError match ErrRequestInProgress and ErrConflict.
func (e *InProgressError) Is(target error) bool {
	return target == ErrRequestInProgress || target == ErrConflict
}

// TurnRef names a turn of a user's conversation.
type TurnRef struct {
	ConversationID int64
	TurnID         int64
}

// TurnStore is what the chat engine needs from storage: a turn's writes and
// the recovery of turns cut short. Every method is scoped to the user.
type TurnStore interface {
	// StartTurn loads or creates the conversation, claims it, stores the
	// user message and returns the history, in one round trip. A turn of
	// the conversation that was cut short is finished first (see
	// RecoverTurn). Its writes are committed, but may reach the disk only
	// with the next durable write: a tool's, FinishTurn's or AbandonTurn's,
	// one of which ends every turn before its client hears the outcome.
	// A user over s.DailyTokenBudget gets a *BudgetError, one past
	// s.TurnRate a *RateLimitError, and nothing is written.
	StartTurn(ctx context.Context, s TurnStart) (Turn, error)
	// ReopenTurn starts the conversation's last turn again, to write its
	// reply anew: it claims the conversation and returns the turn with the
	// history before it and its calls (Earlier). The turn's reply stays
	// until FinishTurn stores the new one in its place; a run abandoned
	// (AbandonTurn) leaves it, and its calls, as they were. s.Message
	// must be the turn's message, and turnID, when not 0, the turn's id;
	// otherwise ErrNoReplyToRegenerate. ChatID is not used. A turn reopened
	// and then cut short is finished like any other (see RecoverTurn).
	ReopenTurn(ctx context.Context, s TurnStart, turnID int64) (Turn, error)
	// ChatConversation returns the conversation a client's chat id names
	// for the user: the one started under it (TurnStart.ChatID), else the
	// user's conversation whose id it spells in decimal. It fails with
	// ErrNotFound when there is neither.
	ChatConversation(ctx context.Context, userID, chatID string) (int64, error)
	// FinishTurn stores the reply, attaches every tool call to it (the
	// calls that changed a task are already recorded), releases the claim,
	// completes the idempotency key and adds the turn's usage to the day's,
	// in one transaction.
	FinishTurn(ctx context.Context, e TurnEnd) (Message, error)
	// AbandonTurn releases the claim of a turn that stored no reply.
	AbandonTurn(ctx context.Context, userID string, conversationID int64, claimToken string) error
	// ClaimCompaction claims the conversation to compact it on demand, as
	// a turn would (ErrConversationBusy while one holds it), after the
	// budget check of s.DailyTokenBudget; the other limits of s are not
	// checked. It returns, as ReopenTurn would, the conversation with its
	// summary and the history before its last turn; AbandonTurn releases
	// the claim. It stores nothing of its own (a turn cut short is finished, as
	// StartTurn does), and leaves the conversation's updated_at alone.
	ClaimCompaction(ctx context.Context, s TurnStart) (Turn, error)
	// MessagesBetween returns the conversation's messages after the
	// message after and before before, oldest first, each with its calls:
	// at most limit of them and at most maxChars of their text and calls'
	// JSON, but one at least. Compaction reads the part of a conversation
	// its summary does not cover with it, a chunk at a time.
	MessagesBetween(ctx context.Context, userID string, conversationID, after, before int64, limit, maxChars int) ([]Message, error)
	// SaveSummary stores the conversation's summary in place of the one
	// w.From names (see SummaryWrite) and adds w.Usage to the user's day,
	// in one statement. It fails with ErrSummaryMoved when another was
	// stored first, ErrNotFound when the conversation is gone.
	SaveSummary(ctx context.Context, userID string, conversationID int64, w SummaryWrite) (Summary, error)
	// RecoverTurn finishes a turn cut short, if its conversation is no
	// longer held: its recorded calls go to an interrupted reply with no
	// text. It returns every recorded call of the turn, in order, also
	// when the conversation has been deleted since.
	RecoverTurn(ctx context.Context, userID string, turn TurnRef) ([]ToolCall, error)

	// BeginIdempotent records a keyed request as running, or says what the
	// key already holds (see KeyState). It fails with ErrKeyMismatch when
	// the key came with another body, ErrRequestInProgress (an
	// *InProgressError once its turn has started) while the first
	// request still runs.
	BeginIdempotent(ctx context.Context, r IdempotentRequest) (KeyState, error)
	// CompleteIdempotent stores the response to replay for a running key.
	CompleteIdempotent(ctx context.Context, userID, key string, response json.RawMessage) error
	// ForgetIdempotent ends a running key's failed request: the key is
	// dropped, so that a retry runs again, unless its turn recorded a tool
	// call; then its lock is released, so that a retry finishes that turn.
	ForgetIdempotent(ctx context.Context, userID, key string) error

	UsageStore
	ApprovalStore
}
