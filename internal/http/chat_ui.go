package http

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/taskchat/taskchat/internal/chat"
	"github.com/taskchat/taskchat/internal/http/turnstream"
	"github.com/taskchat/taskchat/internal/limits"
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
//
// A request whose last message is the assistant's, with tool parts the
// person approved or denied (addToolApprovalResponse, then the automatic
// send), decides those approvals instead, and streams the turn they
// continue (see handleApprovalDecide).
func handleChatUICreate(log *slog.Logger, engine *chat.Engine, hub *runs.Hub, leases *limits.Leases, cfg StreamConfig) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, decisions, err := parseUIChat(w, r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		newOutput := func() turnstream.Output { return turnstream.NewUI(w, r, log, cfg, problems{log}) }
		if len(decisions) == 0 {
			serveTurn(w, r, engine, hub, leases, req, true, newOutput)
			return
		}
		// The limits come first: decisions they refuse are not made.
		release, ok := admitStream(w, r, leases, userFrom(r.Context()))
		if !ok {
			return
		}
		defer release()
		newOutput = givingBackAtTheEnd(newOutput, release)
		cont, err := decideAll(r, engine, decisions)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		answerTurn(w, r, engine, hub, cont, newOutput, nil) // its stream's lease is taken
	})
}

// decideAll decides the approvals a client answered, in order, and
// returns the request that continues their turn. A client answers all of a
// step's approvals at once: if some of the turn's still wait, it is told
// which.
func decideAll(r *http.Request, engine *chat.Engine, decisions []tasks.Decision) (*chat.Request, error) {
	var decided tasks.Decided
	var cont *chat.Request
	for _, d := range decisions {
		var err error
		if decided, cont, err = engine.Decide(r.Context(), d); err != nil {
			return nil, err
		}
	}
	if cont == nil {
		ids := make([]string, len(decided.Waiting))
		for i, a := range decided.Waiting {
			ids[i] = strconv.FormatInt(a.ID, 10)
		}
		return nil, apiErrf(codeApprovalsWaiting, "Approvals %s of this turn still wait: answer them too, and the turn goes on once the last is answered.", strings.Join(ids, ", "))
	}
	return cont, nil
}

// parseUIChat reads and validates the request: the chat id, the trigger,
// and the text of the last message, which must be the user's. The earlier
// messages are the client's copy of the history, which the server keeps.
func parseUIChat(w http.ResponseWriter, r *http.Request) (chat.Request, []tasks.Decision, error) {
	var body uiChatRequest
	if err := decodeJSON(w, r, maxUIChatBody, &body); err != nil {
		return chat.Request{}, nil, err
	}
	req := chat.Request{UserID: userFrom(r.Context()), ChatID: body.ID}
	if !chatIDPattern.MatchString(body.ID) {
		return chat.Request{}, nil, tasks.Invalid("id", "must be 1 to 128 letters, digits, '_', '.', ':' or '-'")
	}
	if _, err := idempotencyKey(r); err != nil {
		return chat.Request{}, nil, err
	}
	if body.Trigger != triggerRegenerate && len(body.Messages) > 0 {
		decisions, err := approvalResponses(req.UserID, body.Messages[len(body.Messages)-1], len(body.Messages)-1)
		if decisions != nil || err != nil {
			return chat.Request{}, decisions, err
		}
	}
	switch body.Trigger {
	case "", triggerSubmit:
		if body.MessageID != "" {
			return chat.Request{}, nil, tasks.Invalid("messageId", "must be absent on submit-message: taskchat keeps the history, so a message cannot be edited and a reply cannot be continued; send a new message")
		}
	case triggerRegenerate:
		req.Regenerate, req.RegenerateTurn = true, turnstream.TurnOfReply(body.MessageID)
	default:
		return chat.Request{}, nil, tasks.Invalid("trigger", `must be "submit-message" or "regenerate-message"`)
	}
	var err error
	if req.Message, err = lastUserText(body.Messages); err != nil {
		return chat.Request{}, nil, err
	}
	if req.IdempotencyKey, err = idempotencyKey(r); err != nil {
		return chat.Request{}, nil, err
	}
	return req, nil, nil
}

// uiApprovalMessage is what is read of a last message that answers
// approvals: its role, and its tool parts' states and approvals.
type uiApprovalMessage struct {
	Role  string `json:"role"`
	Parts []struct {
		State    string `json:"state"`
		Approval *struct {
			ID       string `json:"id"`
			Approved *bool  `json:"approved"`
			Reason   string `json:"reason"`
		} `json:"approval"`
	} `json:"parts"`
}

// approvalResponses reads the approvals a client answered: the tool parts
// of its last message, the assistant's, in state approval-responded. nil
// when the message answers none (it is then read as the user's).
func approvalResponses(userID string, raw json.RawMessage, index int) ([]tasks.Decision, error) {
	var m uiApprovalMessage
	if json.Unmarshal(raw, &m) != nil || m.Role != "assistant" {
		return nil, nil
	}
	var out []tasks.Decision
	for i, p := range m.Parts {
		if p.State != "approval-responded" {
			continue
		}
		field := fmt.Sprintf("messages[%d].parts[%d].approval", index, i)
		a := p.Approval
		if a == nil || a.Approved == nil {
			return nil, tasks.Invalid(field, "must say whether the call is approved")
		}
		id, err := strconv.ParseInt(a.ID, 10, 64)
		if err != nil || id <= 0 {
			return nil, apiErrf(codeNotFound, "Approval %q was not found.", a.ID)
		}
		reason, err := tasks.ValidateReason(a.Reason)
		var fe *tasks.FieldError
		if errors.As(err, &fe) {
			return nil, tasks.Invalid(field+".reason", fe.Message)
		}
		out = append(out, tasks.Decision{UserID: userID, ApprovalID: id, Approved: *a.Approved, Reason: reason})
	}
	return out, nil
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
