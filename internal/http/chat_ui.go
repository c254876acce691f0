package http

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strings"

	"github.com/taskchat/taskchat/internal/chat"
	"github.com/taskchat/taskchat/internal/http/turnstream"
	"github.com/taskchat/taskchat/internal/runs"
	"github.com/taskchat/taskchat/internal/tasks"
)

// maxUIChatBody is the largest body POST /chat/ui accepts. useChat sends
// every message the client holds, tool parts included, with each new one,
// though only the last is read: the limit leaves room for long chats (a
// client can send only the last message; docs/clients.md shows how).
const maxUIChatBody = 1 << 20

// The triggers of the AI SDK's chat transport that taskchat answers.
const (
	triggerSubmit     = "submit-message"
	triggerRegenerate = "regenerate-message"
)

// chatIDPattern is what a client's chat id may be: ids that useChat and
// nanoid make, UUIDs and decimal conversation ids all fit. The database
// checks the same.
var chatIDPattern = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,128}$`)

// uiChatRequest is the body the AI SDK's DefaultChatTransport POSTs.
type uiChatRequest struct {
	ID        string            `json:"id"`
	Messages  []json.RawMessage `json:"messages"`
	Trigger   string            `json:"trigger"`
	MessageID string            `json:"messageId"`
}

// uiUserMessage is what is read of the last UIMessage: its role and text.
// Its other members (id, metadata, a part's state…) are the client's.
type uiUserMessage struct {
	Role  string `json:"role"`
	Parts []struct {
		Type string  `json:"type"`
		Text *string `json:"text"`
	} `json:"parts"`
}

// handleChatUICreate runs one chat turn for the AI SDK's useChat: the body
// its transport sends in, the UI message stream out. The turn is the same
// as POST /chat's, with the same limits, idempotency and storage.
func handleChatUICreate(log *slog.Logger, engine *chat.Engine, hub *runs.Hub, limits *userLimits, cfg StreamConfig) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, err := parseUIChat(w, r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		serveTurn(w, r, engine, hub, limits, req, true, func() turnstream.Output { return turnstream.NewUI(w, r, log, cfg, problems{log}) })
	})
}

// parseUIChat reads and validates the request: the chat id, the trigger,
// and the text of the last message, which must be the user's. The earlier
// messages are the client's copy of the history, which the server keeps.
func parseUIChat(w http.ResponseWriter, r *http.Request) (chat.Request, error) {
	var body uiChatRequest
	if err := decodeJSON(w, r, maxUIChatBody, &body); err != nil {
		return chat.Request{}, err
	}
	req := chat.Request{UserID: userFrom(r.Context()), ChatID: body.ID}
	if !chatIDPattern.MatchString(body.ID) {
		return chat.Request{}, tasks.Invalid("id", "must be 1 to 128 letters, digits, '_', '.', ':' or '-'")
	}
	switch body.Trigger {
	case "", triggerSubmit:
		if body.MessageID != "" {
			return chat.Request{}, tasks.Invalid("messageId", "must be absent on submit-message: taskchat keeps the history, so a message cannot be edited and a reply cannot be continued; send a new message")
		}
	case triggerRegenerate:
		req.Regenerate, req.RegenerateTurn = true, turnstream.TurnOfReply(body.MessageID)
	default:
		return chat.Request{}, tasks.Invalid("trigger", `must be "submit-message" or "regenerate-message"`)
	}
	var err error
	if req.Message, err = lastUserText(body.Messages); err != nil {
		return chat.Request{}, err
	}
	if req.IdempotencyKey, err = idempotencyKey(r); err != nil {
		return chat.Request{}, err
	}
	return req, nil
}

// lastUserText returns the text of the last message, its text parts
// joined by newlines, validated as any chat message is. Parts of other
// types (files, data) are refused rather than dropped unseen.
func lastUserText(messages []json.RawMessage) (string, error) {
	if len(messages) == 0 {
		return "", tasks.Invalid("messages", "must hold at least the user's new message")
	}
	field := fmt.Sprintf("messages[%d]", len(messages)-1)
	var m uiUserMessage
	if err := json.Unmarshal(messages[len(messages)-1], &m); err != nil {
		return "", tasks.Invalid(field, "must be a UI message: an object with role and parts")
	}
	if m.Role != "user" {
		return "", tasks.Invalid(field+".role", `must be "user": the last message is the one to answer`)
	}
	if len(m.Parts) == 0 {
		return "", tasks.Invalid(field+".parts", "must hold the message's text")
	}
	texts := make([]string, len(m.Parts))
	for i, p := range m.Parts {
		part := fmt.Sprintf("%s.parts[%d]", field, i)
		switch {
		case p.Type != "text":
			return "", tasks.Invalid(part, fmt.Sprintf("is a %q part: taskchat reads text parts only", p.Type))
		case p.Text == nil:
			return "", tasks.Invalid(part, "is a text part that has no text")
		}
		texts[i] = *p.Text
	}
	text, err := tasks.ValidateMessage(strings.Join(texts, "\n"))
	var fe *tasks.FieldError
	if errors.As(err, &fe) {
		return "", tasks.Invalid(field+".parts", "text "+fe.Message)
	}
	return text, err
}
