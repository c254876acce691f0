package http

// These tests hold the API to the letter of its rules for what a request
// may say: a query string that does not parse, member names in another
// case, quotes around an Idempotency-Key, escaped lone surrogates, a
// refused media range, a body of the wrong type and an escaped path.

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/taskchat/taskchat/internal/agent/offline"
	"github.com/taskchat/taskchat/internal/store/storetest"
)

// A query string that net/url cannot parse is refused, not read without
// its broken pairs: "?status=completed;" once listed every task.
func TestMalformedQueryStringIsInvalid(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New())
	user := storetest.UserID(t)
	tok := mustToken(t, user)
	convID := int64(s.chat(t, user, 0, "Add a task to buy milk").json(t)["conversation_id"].(float64))
	for _, c := range []struct{ route, path string }{
		{"/api/{user_id}/tasks", "/tasks?status=completed;"},
		{"/api/{user_id}/tasks", "/tasks?status=%zz"},
		{"/api/{user_id}/conversations", "/conversations?limit=2&cursor=%zz"},
		{"/api/{user_id}/conversations/{conversation_id}/messages", fmt.Sprintf("/conversations/%d/messages?limit=1;cursor=x", convID)},
		{"/api/{user_id}/usage", "/usage?from=2026-01-01;to=2026-01-02"},
	} {
		t.Run(c.path, func(t *testing.T) {
			t.Parallel()
			r := s.do(t, call{method: "GET", path: "/api/" + user + c.path, token: tok})
			mustProblem(t, r, 400, "invalid_request")
			mustMatchSpec(t, "GET", c.route, r.status, r.header, r.body)
			if p := r.json(t); !strings.Contains(p["detail"].(string), "query string") || p["errors"] != nil {
				t.Fatalf("problem = %s, want one that names the query string and no field", r.body)
			}
		})
	}
}

// Member names are matched exactly, as the contract spells them: one that
// differs only by case is an unknown member, on every route with a body.
func TestMemberNamesMatchExactly(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New(), withDevLogin)
	user := storetest.UserID(t)
	tok := mustToken(t, user)
	convID := int64(s.chat(t, user, 0, "Add a task to buy milk").json(t)["conversation_id"].(float64))
	ui := strings.Replace(uiBody("c1", "submit-message", "", "hello"), `"trigger":`, `"Trigger":`, 1)
	for _, c := range []struct {
		route, path, token, body, field string
	}{
		{"/api/{user_id}/chat", "/api/" + user + "/chat", tok, fmt.Sprintf(`{"Conversation_ID":%d,"MESSAGE":"hello"}`, convID), "Conversation_ID"},
		{"/api/{user_id}/chat", "/api/" + user + "/chat", tok, `{"message":"hello","Message":"hello again"}`, "Message"},
		{"/api/{user_id}/chat/ui", "/api/" + user + "/chat/ui", tok, ui, "Trigger"},
		{"/auth/dev/token", "/auth/dev/token", "", `{"USER_ID":"` + user + `"}`, "USER_ID"},
	} {
		t.Run(c.body, func(t *testing.T) {
			r := s.do(t, call{method: "POST", path: c.path, token: c.token, body: c.body})
			mustProblem(t, r, 400, "invalid_request")
			mustMatchSpec(t, "POST", c.route, r.status, r.header, r.body)
			var p problem
			if err := json.Unmarshal(r.body, &p); err != nil || len(p.Errors) != 1 || p.Errors[0].Field != c.field ||
				p.Detail != fmt.Sprintf("Unknown field %q.", c.field) {
				t.Fatalf("problem = %s, want %q named as an unknown field", r.body, c.field)
			}
		})
	}
	if n := storetest.Count(t, `SELECT count(*) FROM messages WHERE user_id = $1`, user); n != 2 {
		t.Fatalf("the user has %d messages, want the first turn's 2 only", n)
	}
}

// Only one pair of surrounding quotes is removed from an Idempotency-Key:
// `q123""` and `"q123` are two keys, not both q123.
func TestIdempotencyKeyLosesOnePairOfQuotes(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New())
	user := storetest.UserID(t)
	tok := mustToken(t, user)
	send := func(key, message string) reply {
		t.Helper()
		r := s.do(t, call{method: "POST", path: "/api/" + user + "/chat", token: tok, body: chatBody(0, message), header: keyed(key)})
		mustMatchSpec(t, "POST", "/api/{user_id}/chat", r.status, r.header, r.body)
		return r
	}
	if r := send(`q123""`, "Add a task to buy milk"); r.status != 200 {
		t.Fatalf(`key q123"" = %d %s`, r.status, r.body)
	}
	if r := send(`"q123`, "Add a task to pay rent"); r.status != 200 || r.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf(`key "q123, another message = %d %s, want a turn of its own`, r.status, r.body)
	}
	// The draft's quoted form is still the same key as the bare one.
	first := send(`"r1"`, "Add a task to call mom")
	if again := send(`r1`, "Add a task to call mom"); again.status != 200 || again.header.Get("Idempotent-Replayed") != "true" || !jsonSame(t, again.body, first.body) {
		t.Fatalf(`key r1 after "r1" = %d %v %s, want the first turn replayed`, again.status, again.header, again.body)
	}
	mustProblem(t, send(`""`, "Add a task to water the plants"), 400, "invalid_request")
}

// An escaped lone surrogate is not a character: encoding/json would store
// it as U+FFFD. It is refused, as invalid UTF-8 bytes are; a pair is one
// character and is taken.
func TestEscapedLoneSurrogateIsRefused(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New())
	user := storetest.UserID(t)
	tok := mustToken(t, user)
	for _, c := range []struct{ route, body string }{
		{"/api/{user_id}/chat", `{"message":"Add a task to buy milk \ud800"}`},
		{"/api/{user_id}/chat", `{"message":"Add a task to buy milk \udc00\ud83d"}`},
		{"/api/{user_id}/chat/ui", strings.Replace(uiBody("c1", "submit-message", "", "Add a task to buy milk"), "buy milk", `buy milk \ud800`, 1)},
	} {
		t.Run(c.body, func(t *testing.T) {
			r := s.do(t, call{method: "POST", path: strings.Replace(c.route, "{user_id}", user, 1), token: tok, body: c.body})
			mustProblem(t, r, 400, "invalid_request")
			mustMatchSpec(t, "POST", c.route, r.status, r.header, r.body)
		})
	}
	if n := storetest.Count(t, `SELECT count(*) FROM conversations WHERE user_id = $1`, user); n != 0 {
		t.Fatalf("refused turns left %d conversations behind", n)
	}
	r := s.chat(t, user, 0, "Add a task to buy milk \U0001F600")
	if r.status != 200 {
		t.Fatalf("a surrogate pair = %d %s", r.status, r.body)
	}
	r = s.do(t, call{method: "POST", path: "/api/" + user + "/chat", token: tok, body: `{"message":"Add a task to buy bread \ud83d\ude00"}`})
	if r.status != 200 {
		t.Fatalf("an escaped surrogate pair = %d %s", r.status, r.body)
	}
}

// A media range with q=0 is one the client does not accept (RFC 9110): a
// turn streams only when text/event-stream is accepted.
func TestStreamOnlyWhenEventStreamIsAccepted(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New())
	user := storetest.UserID(t)
	tok := mustToken(t, user)
	for _, c := range []struct {
		accept, contentType string
	}{
		{"text/event-stream;q=0, application/json", "application/json"},
		{"application/json, text/event-stream; Q=0.000", "application/json"},
		{"text/event-stream;q=0.5, application/json", "text/event-stream"},
		{"text/event-stream; charset=utf-8", "text/event-stream"},
	} {
		t.Run(c.accept, func(t *testing.T) {
			t.Parallel()
			r := s.do(t, call{method: "POST", path: "/api/" + user + "/chat", token: tok, body: chatBody(0, "Show me all my tasks"),
				header: http.Header{"Accept": {c.accept}}})
			mustMatchSpec(t, "POST", "/api/{user_id}/chat", r.status, r.header, r.body)
			if ct := r.header.Get("Content-Type"); r.status != 200 || !strings.HasPrefix(ct, c.contentType) {
				t.Fatalf("Accept %q = %d %s, want %s", c.accept, r.status, ct, c.contentType)
			}
		})
	}
}

// A type error names the type as the contract does (integer, not number),
// and a body that is not an object is said to be one, with no field.
func TestTypeErrorsSayWhatIsExpected(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New())
	user := storetest.UserID(t)
	tok := mustToken(t, user)
	for _, c := range []struct {
		body, detail string
		errors       []fieldIssue
	}{
		{`{"conversation_id":1.5,"message":"hi"}`, `Field "conversation_id" must be of type integer.`,
			[]fieldIssue{{Field: "conversation_id", Message: "must be of type integer"}}},
		{`{"message":42}`, `Field "message" must be of type string.`, []fieldIssue{{Field: "message", Message: "must be of type string"}}},
		{`[]`, "The body must be a JSON object.", nil},
		{`"x"`, "The body must be a JSON object.", nil},
		{`7`, "The body must be a JSON object.", nil},
	} {
		t.Run(c.body, func(t *testing.T) {
			t.Parallel()
			r := s.do(t, call{method: "POST", path: "/api/" + user + "/chat", token: tok, body: c.body})
			mustProblem(t, r, 400, "invalid_request")
			mustMatchSpec(t, "POST", "/api/{user_id}/chat", r.status, r.header, r.body)
			var p problem
			if err := json.Unmarshal(r.body, &p); err != nil || p.Detail != c.detail || fmt.Sprint(p.Errors) != fmt.Sprint(c.errors) {
				t.Fatalf("problem = %s, want detail %q and errors %v", r.body, c.detail, c.errors)
			}
		})
	}
}

// {conversation_id} is compared decoded, as {user_id} is: "%31" is 1.
func TestConversationIDIsDecoded(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New())
	user := storetest.UserID(t)
	tok := mustToken(t, user)
	convID := int64(s.chat(t, user, 0, "Add a task to buy milk").json(t)["conversation_id"].(float64))
	var escaped strings.Builder
	for _, d := range fmt.Sprint(convID) {
		fmt.Fprintf(&escaped, "%%%X", d)
	}
	r := s.do(t, call{method: "GET", path: "/api/" + user + "/conversations/" + escaped.String() + "/messages", token: tok})
	mustMatchSpec(t, "GET", "/api/{user_id}/conversations/{conversation_id}/messages", r.status, r.header, r.body)
	if r.status != 200 || r.json(t)["conversation_id"] != float64(convID) {
		t.Fatalf("GET conversation %s = %d %s, want conversation %d", escaped.String(), r.status, r.body, convID)
	}
	r = s.do(t, call{method: "DELETE", path: "/api/" + user + "/conversations/" + escaped.String(), token: tok})
	if r.status != 204 {
		t.Fatalf("DELETE conversation %s = %d %s", escaped.String(), r.status, r.body)
	}
	r = s.do(t, call{method: "GET", path: "/api/" + user + "/conversations/" + escaped.String() + "/messages", token: tok})
	mustProblem(t, r, 404, "not_found")
}

// exactMembers checks the names of nested objects that become structs,
// in slices and through pointers and embedded structs, and skips what
// decodes itself.
func TestExactMembersWalksNestedStructs(t *testing.T) {
	t.Parallel()
	type part struct {
		Text string `json:"text"`
	}
	type Embedded struct {
		Kind string `json:"kind"`
	}
	type body struct {
		Embedded
		Parts []*part         `json:"parts"`
		First part            `json:"first"`
		Raw   json.RawMessage `json:"raw"`
		Skip  string          `json:"-"`
		Plain map[string]any  `json:"plain"`
		More  [][]part        `json:"more"`
	}
	for raw, want := range map[string]string{
		`{"kind":"k","parts":[{"text":"a"},null],"first":{"text":"b"},"raw":{"TEXT":1},"plain":{"TEXT":1},"more":[[{"text":"c"}]]}`: "",
		`{"parts":null,"first":null,"more":null}`: "",
		`{"KIND":"k"}`:                          "KIND",
		`{"parts":[{"text":"a"},{"Text":"b"}]}`: "Text",
		`{"first":{"TEXT":"b"}}`:                "TEXT",
		`{"more":[[],[{"tExt":"c"}]]}`:          "tExt",
		`{"Skip":"x"}`:                          "Skip",
	} {
		var dst body
		if err := json.Unmarshal([]byte(raw), &dst); err != nil {
			t.Fatalf("%s does not decode: %v", raw, err)
		}
		err := exactMembers(json.NewDecoder(strings.NewReader(raw)), reflect.TypeOf(&dst))
		var ae *apiError
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v, want no error", raw, err)
		case want != "" && (!errors.As(err, &ae) || len(ae.fields) != 1 || ae.fields[0].Field != want):
			t.Errorf("%s: %v, want %q refused", raw, err, want)
		}
	}
}
