package http

import (
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/taskchat/taskchat/internal/tasks"
)

// FuzzChatRequest feeds arbitrary bodies and content types to the chat
// request's decoding and validation: each is either accepted, with a
// message that obeys the rules, or refused with a 4xx. Never a panic or 5xx.
func FuzzChatRequest(f *testing.F) {
	for _, seed := range []struct{ body, contentType string }{
		{`{"message":"Add a task to buy groceries"}`, "application/json"},
		{`{"conversation_id":7,"message":"Show me all my tasks"}`, "application/json; charset=utf-8"},
		{`{"conversation_id":-1,"message":"x"}`, "application/json"},
		{`{"conversation_id":1e400,"message":"x"}`, "application/json"},
		{`{"message":"\u0000"}`, "application/json"},
		{`{"message":"hi","extra":true}`, "application/json"},
		{`[]`, "application/json"},
		{``, ""},
		{"{\"message\":\"\xff\"}", "application/json"},
		{`message=hi`, "application/x-www-form-urlencoded"},
		{`{"message":"a"} {"message":"b"}`, "text/plain"},
	} {
		f.Add(seed.body, seed.contentType)
	}
	f.Fuzz(func(t *testing.T, body, contentType string) {
		r := httptest.NewRequest("POST", "/api/u/chat", strings.NewReader(body))
		if contentType != "" {
			r.Header.Set("Content-Type", contentType)
		}
		r = r.WithContext(withUser(r.Context(), "u"))
		turn, _, err := parseChat(httptest.NewRecorder(), r)
		if err != nil {
			if ae := toAPIError(err); ae.status() < 400 || ae.status() >= 500 {
				t.Fatalf("refused with %d (%v)", ae.status(), err)
			}
			return
		}
		n := utf8.RuneCountInString(turn.Message)
		if n == 0 || n > 4000 || strings.TrimSpace(turn.Message) != turn.Message || strings.ContainsRune(turn.Message, 0) || turn.ConversationID < 0 || turn.UserID != "u" {
			t.Fatalf("accepted an invalid turn: %+v", turn)
		}
	})
}

// FuzzUIChatRequest does the same for the AI SDK's body (POST /chat/ui):
// whatever a client sends as its chat id, messages and parts, the request
// is refused with a 4xx or taken with a valid chat id and message.
func FuzzUIChatRequest(f *testing.F) {
	for _, body := range []string{
		`{"id":"Xq7Vd0cLr1bH2tUe","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"Add a task"}]}],"trigger":"submit-message"}`,
		`{"id":"42","messages":[{"role":"user","parts":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}],"trigger":"regenerate-message","messageId":"reply-7"}`,
		`{"id":"c","messages":[{"role":"user","parts":[{"type":"file","url":"data:,x"}]}]}`,
		`{"id":"c","messages":[{"role":"assistant","parts":[]}]}`,
		`{"id":"c","messages":[null]}`,
		`{"id":"c","messages":[{"role":"user","parts":[{"type":"text","text":"\u0000"}]}]}`,
		`{"id":"../x","messages":[]}`,
		`{"id":"c","messages":[{"role":"user","parts":[{"type":"text"}]}],"trigger":"resume-stream"}`,
		`{"id":"c","messages":[{"role":"assistant","parts":[{"type":"dynamic-tool","state":"approval-responded","approval":{"id":"7","approved":true}}]}],"trigger":"submit-message","messageId":"reply-3"}`,
	} {
		f.Add(body)
	}
	f.Fuzz(func(t *testing.T, body string) {
		r := httptest.NewRequest("POST", "/api/u/chat/ui", strings.NewReader(body))
		r = r.WithContext(withUser(r.Context(), "u"))
		turn, decisions, err := parseUIChat(httptest.NewRecorder(), r)
		if err != nil {
			if ae := toAPIError(err); ae.status() < 400 || ae.status() >= 500 {
				t.Fatalf("refused with %d (%v)", ae.status(), err)
			}
			return
		}
		if decisions != nil {
			for _, d := range decisions {
				if d.ApprovalID <= 0 || d.UserID != "u" || utf8.RuneCountInString(d.Reason) > tasks.MaxReasonLength {
					t.Fatalf("accepted an invalid decision: %+v", d)
				}
			}
			return
		}
		n := utf8.RuneCountInString(turn.Message)
		if n == 0 || n > 4000 || strings.TrimSpace(turn.Message) != turn.Message || strings.ContainsRune(turn.Message, 0) ||
			!chatIDPattern.MatchString(turn.ChatID) || turn.ConversationID != 0 || turn.UserID != "u" {
			t.Fatalf("accepted an invalid turn: %+v", turn)
		}
	})
}
