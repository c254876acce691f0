package http

import (
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"
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
