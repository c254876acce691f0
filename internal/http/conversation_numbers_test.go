package http

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/taskchat/taskchat/internal/agent/offline"
	"github.com/taskchat/taskchat/internal/store/storetest"
)

// A conversation is known by its number among its user's conversations,
// as a task is: 1, 2, 3… for each user, never reused. Over real HTTP, two
// users whose conversations were started in turn each have their own 1
// and 2 — in the chat answer, the list, the conversation and its messages
// — and a number names the asking user's conversation alone: another
// user's number that the asker lacks is not found, in the documented
// problem shape and without a word of its owner's; continuing, deleting or
// chatting by /chat/ui with chat id "1" acts on the asker's own
// conversation 1; and a deleted newest conversation's number is not
// handed out again.
func TestConversationNumbersArePerUser(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New())
	alice, bob := storetest.UserID(t), storetest.UserID(t)

	// Started in turn, so that one global counter would have given neither
	// user 1, 2 (3).
	said := map[string][]string{} // each user's first messages, by conversation number - 1
	start := func(user, message string, want int64) {
		t.Helper()
		r := s.chat(t, user, 0, message)
		if r.status != 200 {
			t.Fatalf("%s's new conversation: %d %s", user, r.status, r.body)
		}
		if got := r.json(t)["conversation_id"]; got != float64(want) {
			t.Fatalf("%s's new conversation (%q) is %v, want %d", user, message, got, want)
		}
		said[user] = append(said[user], message)
	}
	start(alice, "Add a task to buy milk", 1)
	start(bob, "Add a task to call mom", 1)
	start(alice, "Add a task to water the plants", 2)
	start(bob, "Add a task to fix the bike", 2)
	start(alice, "Add a task to pay rent", 3)

	// messages reads one of user's conversations' messages, checked
	// against the spec.
	messages := func(user string, n int64) (reply, messagesResponse) {
		t.Helper()
		r := s.do(t, call{method: "GET", path: fmt.Sprintf("/api/%s/conversations/%d/messages", user, n), token: mustToken(t, user)})
		mustMatchSpec(t, "GET", "/api/{user_id}/conversations/{conversation_id}/messages", r.status, r.header, r.body)
		var page messagesResponse
		if r.status == 200 {
			if err := json.Unmarshal(r.body, &page); err != nil {
				t.Fatal(err)
			}
		}
		return r, page
	}
	// userTexts is what the user said in the conversation, in order.
	userTexts := func(page messagesResponse) []string {
		var out []string
		for _, m := range page.Messages {
			if m.Role == "user" {
				out = append(out, m.Content)
			}
		}
		return out
	}
	// mustBeOwn checks that user's conversation n is the one they started
	// with their n-th message and holds exactly the messages then.
	mustBeOwn := func(user string, n int64, then ...string) {
		t.Helper()
		r := s.conversation(t, user, n)
		if r.status != 200 {
			t.Fatalf("%s's conversation %d = %d %s", user, n, r.status, r.body)
		}
		if c := r.json(t); c["id"] != float64(n) || c["title"] != said[user][n-1] {
			t.Fatalf("%s's conversation %d = %s, want %d titled %q", user, n, r.body, n, said[user][n-1])
		}
		r, page := messages(user, n)
		if r.status != 200 || page.ConversationID != n || !slices.Equal(userTexts(page), then) {
			t.Fatalf("%s's conversation %d holds %d %s, want conversation %d of %q", user, n, r.status, r.body, n, then)
		}
	}
	// mustList checks user's list of conversations, newest first.
	mustList := func(user string, want ...int64) {
		t.Helper()
		r := s.do(t, call{method: "GET", path: "/api/" + user + "/conversations", token: mustToken(t, user)})
		mustMatchSpec(t, "GET", "/api/{user_id}/conversations", r.status, r.header, r.body)
		var list conversationsResponse
		if err := json.Unmarshal(r.body, &list); err != nil || r.status != 200 {
			t.Fatalf("%s's conversations = %d %s", user, r.status, r.body)
		}
		var got []int64
		for _, c := range list.Conversations {
			got = append(got, c.ID)
			if c.ID < 1 || c.ID > int64(len(said[user])) || c.Title != said[user][c.ID-1] {
				t.Fatalf("%s's conversations = %s: %d is not one of theirs", user, r.body, c.ID)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s's conversations = %v, want %v", user, got, want)
		}
	}
	mustList(alice, 3, 2, 1)
	mustList(bob, 2, 1)
	for n := int64(1); n <= 3; n++ {
		mustBeOwn(alice, n, said[alice][n-1])
	}
	for n := int64(1); n <= 2; n++ {
		mustBeOwn(bob, n, said[bob][n-1])
	}

	// Alice's conversation 3 is not Bob's: every route answers him 404 in
	// the problem shape, with nothing of hers, and changes nothing.
	tok := mustToken(t, bob)
	api := "/api/" + bob + "/conversations/3"
	for _, c := range []struct {
		route string
		call  call
	}{
		{"/api/{user_id}/conversations/{conversation_id}", call{method: "GET", path: api}},
		{"/api/{user_id}/conversations/{conversation_id}/messages", call{method: "GET", path: api + "/messages"}},
		{"/api/{user_id}/conversations/{conversation_id}/stream", call{method: "GET", path: api + "/stream"}},
		{"/api/{user_id}/conversations/{conversation_id}/stop", call{method: "POST", path: api + "/stop"}},
		{"/api/{user_id}/conversations/{conversation_id}/compact", call{method: "POST", path: api + "/compact"}},
		{"/api/{user_id}/conversations/{conversation_id}", call{method: "DELETE", path: api}},
		{"/api/{user_id}/chat", call{method: "POST", path: "/api/" + bob + "/chat", body: chatBody(3, "Show me all my tasks")}},
	} {
		c.call.token = tok
		r := s.do(t, c.call)
		mustMatchSpec(t, c.call.method, c.route, r.status, r.header, r.body)
		mustProblem(t, r, 404, "not_found")
		if p := r.json(t); p["type"] != "https://taskchat.dev/problems/not-found" || p["detail"] != "Conversation 3 was not found." {
			t.Fatalf("%s %s = %s, want the not-found problem of conversation 3", c.call.method, c.call.path, r.body)
		}
		for _, text := range said[alice] {
			if strings.Contains(strings.ToLower(string(r.body)), strings.ToLower(strings.TrimPrefix(text, "Add a task to "))) {
				t.Fatalf("%s %s = %s: it tells of alice's %q", c.call.method, c.call.path, r.body, text)
			}
		}
	}
	mustBeOwn(alice, 3, said[alice][2])
	mustList(bob, 2, 1)

	// Bob's conversation 1 is his: continuing it continues his, and Alice's
	// 1 is as it was.
	r := s.chat(t, bob, 1, "Show me all my tasks")
	if r.status != 200 || r.json(t)["conversation_id"] != 1.0 || !strings.Contains(r.json(t)["response"].(string), "Call mom") ||
		strings.Contains(r.json(t)["response"].(string), "Buy milk") {
		t.Fatalf("bob's turn in his conversation 1 = %d %s, want it answered in his 1, from his tasks", r.status, r.body)
	}
	mustBeOwn(bob, 1, said[bob][0], "Show me all my tasks")
	mustBeOwn(alice, 1, said[alice][0])

	// So does /chat/ui, the AI SDK's route, with chat id "1": it names the
	// asker's own conversation 1.
	for _, c := range []struct {
		user, message string
		before        []string
	}{
		{alice, "What is still pending?", []string{said[alice][0]}},
		{bob, "What have I done?", []string{said[bob][0], "Show me all my tasks"}},
	} {
		r := s.ui(t, c.user, uiBody("1", "submit-message", "", c.message), nil)
		chunks := uiChunks(t, r.body)
		if r.status != 200 || chunks[0]["messageMetadata"].(map[string]any)["conversation_id"] != 1.0 || chunks[len(chunks)-1]["type"] != "finish" {
			t.Fatalf("%s's chat %q = %d %s, want a turn of conversation 1", c.user, "1", r.status, r.body)
		}
		mustBeOwn(c.user, 1, append(c.before, c.message)...)
	}
	mustList(alice, 1, 3, 2)
	mustList(bob, 1, 2)

	// Deleting Bob's 1 leaves Alice's.
	if r := s.do(t, call{method: "DELETE", path: "/api/" + bob + "/conversations/1", token: tok}); r.status != 204 {
		t.Fatalf("bob's delete of his 1 = %d %s", r.status, r.body)
	}
	r, _ = messages(bob, 1)
	mustProblem(t, r, 404, "not_found")
	mustBeOwn(alice, 1, said[alice][0], "What is still pending?")
	mustList(bob, 2)

	// Once Bob's newest, 2, is deleted, his next conversation is 3: no
	// number is handed out twice, though he has no conversation left. And
	// Alice's next is her 4, whatever Bob has.
	if r := s.do(t, call{method: "DELETE", path: "/api/" + bob + "/conversations/2", token: tok}); r.status != 204 {
		t.Fatalf("bob's delete of his 2 = %d %s", r.status, r.body)
	}
	mustList(bob)
	said[bob] = append(said[bob], "Add a task to mow the lawn")
	if r := s.chat(t, bob, 0, said[bob][2]); r.status != 200 || r.json(t)["conversation_id"] != 3.0 {
		t.Fatalf("bob's conversation after deleting his newest = %d %s, want his 3", r.status, r.body)
	}
	mustList(bob, 3)
	mustBeOwn(bob, 3, said[bob][2])
	for _, n := range []int64{1, 2} {
		r, _ := messages(bob, n)
		mustProblem(t, r, 404, "not_found")
	}
	start(alice, "Add a task to book the dentist", 4)
	mustList(alice, 4, 1, 3, 2)
}
