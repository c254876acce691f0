package http

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/taskchat/taskchat/internal/nodetest"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/agent/offline"
	"github.com/taskchat/taskchat/internal/agent/openaitest"
	"github.com/taskchat/taskchat/internal/store/storetest"
)

const uiRoute = "/api/{user_id}/chat/ui"

// uiBody is a body as DefaultChatTransport sends it: the chat id, every
// message the client holds (here an earlier exchange, with a tool part the
// server must ignore, and the new message), the trigger and messageId.
func uiBody(chatID, trigger, messageID, text string) string {
	b := map[string]any{
		"id": chatID,
		"messages": []any{
			map[string]any{"id": "u0", "role": "user", "parts": []any{map[string]any{"type": "text", "text": "earlier"}}},
			map[string]any{"id": "reply-0", "role": "assistant", "parts": []any{
				map[string]any{"type": "step-start"},
				map[string]any{"type": "dynamic-tool", "toolName": "list_tasks", "toolCallId": "c0", "state": "output-available", "input": map[string]any{}, "output": map[string]any{}},
				map[string]any{"type": "text", "text": "ignored", "state": "done"},
			}},
			map[string]any{"id": "u1", "role": "user", "parts": []any{map[string]any{"type": "text", "text": text}}},
		},
		"trigger": trigger,
	}
	if messageID != "" {
		b["messageId"] = messageID
	}
	out, _ := json.Marshal(b)
	return string(out)
}

// ui posts body to user's /chat/ui and checks the answer against the spec.
func (s *testServer) ui(tb testing.TB, user, body string, header http.Header) reply {
	tb.Helper()
	r := s.do(tb, call{method: "POST", path: "/api/" + user + "/chat/ui", token: mustToken(tb, user), body: body, header: header})
	mustMatchSpec(tb, "POST", uiRoute, r.status, r.header, r.body)
	return r
}

// uiChunks parses a UI message stream, failing unless every event is one
// data line of a JSON object (after its id, if it has one) and the last is
// [DONE].
func uiChunks(tb testing.TB, body []byte) []map[string]any {
	tb.Helper()
	text := string(body)
	if !strings.HasSuffix(text, "data: [DONE]\n\n") {
		tb.Fatalf("the stream does not end with data: [DONE]:\n%s", text)
	}
	var chunks []map[string]any
	for block := range strings.SplitSeq(strings.TrimSuffix(text, "data: [DONE]\n\n"), "\n\n") {
		if block == "" || strings.HasPrefix(block, ":") {
			continue
		}
		var c map[string]any
		if id, rest, found := strings.Cut(block, "\n"); found && strings.HasPrefix(id, "id: ") {
			block = rest // the last chunk of a turn's event carries its id
		}
		data, ok := strings.CutPrefix(block, "data: ")
		if !ok || strings.Contains(data, "\n") || json.Unmarshal([]byte(data), &c) != nil {
			tb.Fatalf("malformed event %q", block)
		}
		chunks = append(chunks, c)
	}
	return chunks
}

// chunkTypes lists the chunks' types, text-deltas counted as one.
func chunkTypes(chunks []map[string]any) string {
	var types []string
	for _, c := range chunks {
		t := c["type"].(string)
		if t == "text-delta" && types[len(types)-1] == "text-delta" {
			continue
		}
		types = append(types, t)
	}
	return strings.Join(types, " ")
}

func TestUIChatStreamsTheTurn(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New())
	user := storetest.UserID(t)
	r := s.ui(t, user, uiBody("chat-1", "submit-message", "", "Add a task to buy milk"), nil)
	if r.status != 200 || r.header.Get("X-Vercel-Ai-Ui-Message-Stream") != "v1" || r.header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, headers %v: %s", r.status, r.header, r.body)
	}
	chunks := uiChunks(t, r.body)
	want := "start start-step tool-input-available tool-output-available finish-step start-step text-start text-delta text-end finish-step finish"
	if got := chunkTypes(chunks); got != want {
		t.Fatalf("chunks = %s\nwant     %s", got, want)
	}
	convID, turnID := mustLastTurn(t, user)
	start := chunks[0]
	if start["messageId"] != fmt.Sprintf("reply-%d", turnID) || start["messageMetadata"].(map[string]any)["conversation_id"] != float64(convID) {
		t.Fatalf("start = %v, want reply-%d of conversation %d", start, turnID, convID)
	}
	input, output := chunks[2], chunks[3]
	if input["toolName"] != "add_task" || input["dynamic"] != true || input["input"].(map[string]any)["title"] != "Buy milk" ||
		output["toolCallId"] != input["toolCallId"] || output["output"].(map[string]any)["status"] != "created" {
		t.Fatalf("tool chunks = %v, %v", input, output)
	}
	var text strings.Builder
	for _, c := range chunks {
		if c["type"] == "text-delta" {
			text.WriteString(c["delta"].(string))
		}
	}
	if stored := mustReplies(t, user, convID); len(stored) != 1 || stored[0] != text.String() {
		t.Fatalf("stored replies %q, streamed %q", stored, text.String())
	}
}

// A chat id continues its conversation; a conversation's id names it too.
func TestUIChatContinuesAChat(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New())
	user := storetest.UserID(t)
	s.ui(t, user, uiBody("my-chat", "submit-message", "", "Add a task to buy milk"), nil)
	convID, _ := mustLastTurn(t, user)
	s.ui(t, user, uiBody("my-chat", "submit-message", "", "Mark it as complete"), nil)
	if c, _ := mustLastTurn(t, user); c != convID {
		t.Fatalf("the second message went to conversation %d, want %d", c, convID)
	}
	r := s.ui(t, user, uiBody(fmt.Sprint(convID), "submit-message", "", "Show me all my tasks"), nil)
	if c, _ := mustLastTurn(t, user); c != convID || uiChunks(t, r.body)[0]["messageMetadata"].(map[string]any)["conversation_id"] != float64(convID) {
		t.Fatalf("the conversation's own id went to conversation %d, want %d", c, convID)
	}
	if n := storetest.Count(t, `SELECT count(*) FROM conversations WHERE user_id = $1`, user); n != 1 {
		t.Fatalf("%d conversations, want 1", n)
	}
	// Another user with the same chat id has a chat of their own: their own
	// first conversation, which holds their message alone, while this
	// user's conversation — numbered 1 as well — still holds its three.
	other := storetest.UserID(t)
	s.ui(t, other, uiBody("my-chat", "submit-message", "", "Show me all my tasks"), nil)
	turns := `SELECT count(*) FROM messages WHERE role = 'user'
		AND conversation_id = (SELECT id FROM conversations WHERE user_id = $1 AND number = $2)`
	if c, _ := mustLastTurn(t, other); c != 1 || storetest.Count(t, turns, other, c) != 1 {
		t.Fatalf("another user's chat with the same id went to their conversation %d, want their own 1 of one message", c)
	}
	if n := storetest.Count(t, turns, user, convID); n != 3 {
		t.Fatalf("this user's conversation holds %d messages after another user's chat of the same id, want its 3", n)
	}
}

func TestUIChatRefusesBadRequests(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New())
	user := storetest.UserID(t)
	fileMessage := `{"id":"c","trigger":"submit-message","messages":[{"id":"u","role":"user","parts":[` +
		`{"type":"file","mediaType":"image/png","url":"data:image/png;base64,AA=="},{"type":"text","text":"What is this?"}]}]}`
	cases := []struct {
		name, body string
		status     int
		code       string
		field      string
	}{
		{"no chat id", `{"messages":[{"role":"user","parts":[{"type":"text","text":"hi"}]}]}`, 400, "invalid_request", "id"},
		{"a chat id with a slash", uiBody("a/b", "submit-message", "", "hi"), 400, "invalid_request", "id"},
		{"a chat id too long", uiBody(strings.Repeat("x", 129), "submit-message", "", "hi"), 400, "invalid_request", "id"},
		{"no messages", `{"id":"c","messages":[],"trigger":"submit-message"}`, 400, "invalid_request", "messages"},
		{"a last message that is not an object", `{"id":"c","messages":["hi"]}`, 400, "invalid_request", "messages[0]"},
		{"a last message of the assistant", `{"id":"c","messages":[{"role":"assistant","parts":[{"type":"text","text":"hi"}]}]}`, 400, "invalid_request", "messages[0].role"},
		{"a file part", fileMessage, 400, "invalid_request", "messages[0].parts[0]"},
		{"no text", uiBody("c", "submit-message", "", "   "), 400, "invalid_request", "messages[2].parts"},
		{"too much text", uiBody("c", "submit-message", "", strings.Repeat("a", 4001)), 400, "invalid_request", "messages[2].parts"},
		{"an unknown trigger", uiBody("c", "resume-stream", "", "hi"), 400, "invalid_request", "trigger"},
		{"an edit of a message", uiBody("c", "submit-message", "u1", "hi"), 400, "invalid_request", "messageId"},
		{"an unknown member", `{"id":"c","messages":[],"model":"gpt"}`, 400, "invalid_request", "model"},
		{"a body over 1 MiB", uiBody("c", "submit-message", "", strings.Repeat("a", 1<<20)), 413, "payload_too_large", ""},
		{"nothing to regenerate", uiBody("new-chat", "regenerate-message", "", "hi"), 409, "nothing_to_regenerate", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := s.ui(t, user, c.body, nil)
			p := r.json(t)
			if r.status != c.status || p["code"] != c.code {
				t.Fatalf("got %d %s, want %d %s", r.status, r.body, c.status, c.code)
			}
			if c.field != "" && !strings.Contains(string(r.body), `"field":"`+c.field+`"`) {
				t.Fatalf("the problem does not name field %s: %s", c.field, r.body)
			}
		})
	}
	// A text part with no text is told as such, not as a part of another type.
	r := s.ui(t, user, `{"id":"c","messages":[{"role":"user","parts":[{"type":"text"}]}]}`, nil)
	if detail, _ := r.json(t)["detail"].(string); r.status != 400 || detail != "messages[0].parts[0] is a text part that has no text" {
		t.Fatalf("a text part without text = %d %s, want 400 saying it has no text", r.status, r.body)
	}
	if n := storetest.Count(t, `SELECT count(*) FROM messages WHERE user_id = $1`, user); n != 0 {
		t.Fatalf("refused requests stored %d messages", n)
	}
	// Without a token, the problem comes before anything is read.
	r = s.do(t, call{method: "POST", path: "/api/" + user + "/chat/ui", body: uiBody("c", "submit-message", "", "hi")})
	mustMatchSpec(t, "POST", uiRoute, r.status, r.header, r.body)
	if r.status != 401 {
		t.Fatalf("without a token: %d", r.status)
	}
}

// Regenerating the last reply runs its turn again with its tool calls
// already made: the model sees them, and the task is not added twice.
func TestUIChatRegenerateKeepsTheToolCalls(t *testing.T) {
	t.Parallel()
	fake := newFakeOpenAI(t,
		openaitest.Step{Calls: []agent.ToolCall{{ID: "call_a", Name: "add_task", Arguments: `{"title":"Buy milk"}`}}},
		openaitest.Step{Text: "Added, I think."},
		openaitest.Step{Text: "I've added Buy milk as task 1."},
	)
	s := mustServer(t, fake.Model())
	user := storetest.UserID(t)
	s.ui(t, user, uiBody("regen", "submit-message", "", "add buy milk"), nil)
	convID, turnID := mustLastTurn(t, user)

	r := s.ui(t, user, uiBody("regen", "regenerate-message", fmt.Sprintf("reply-%d", turnID), "add buy milk"), nil)
	chunks := uiChunks(t, r.body)
	want := "start start-step tool-input-available tool-output-available finish-step start-step text-start text-delta text-end finish-step finish"
	if got := chunkTypes(chunks); got != want || chunks[0]["messageId"] != fmt.Sprintf("reply-%d", turnID) {
		t.Fatalf("regenerated chunks = %s (%v)\nwant %s", got, chunks[0], want)
	}
	if chunks[2]["toolCallId"] != "call_a" || chunks[3]["output"].(map[string]any)["status"] != "created" {
		t.Fatalf("the regenerated reply's tool part = %v %v, want the first run's call", chunks[2], chunks[3])
	}
	if fake.Requests() != 3 {
		t.Fatalf("model calls = %d, want 2 for the turn and 1 for the new reply", fake.Requests())
	}
	var roles []string
	for _, m := range fake.Request(2)["messages"].([]any) {
		roles = append(roles, m.(map[string]any)["role"].(string))
	}
	if strings.Join(roles, ",") != "system,user,assistant,tool" {
		t.Fatalf("the regenerating model saw %v, want the message and the call it had made", roles)
	}
	if replies := mustReplies(t, user, convID); len(replies) != 1 || replies[0] != "I've added Buy milk as task 1." {
		t.Fatalf("replies = %q, want the new one only", replies)
	}
	if n := storetest.Count(t, `SELECT count(*) FROM tasks WHERE user_id = $1`, user); n != 1 {
		t.Fatalf("%d tasks, want the one added once", n)
	}
	if n := storetest.Count(t, `SELECT count(*) FROM tool_calls c JOIN messages m ON m.id = c.message_id
		WHERE c.user_id = $1 AND c.turn_id = $2 AND m.content = 'I''ve added Buy milk as task 1.'`, user, turnID); n != 1 {
		t.Fatalf("the new reply holds %d calls, want the first run's one", n)
	}

	// The reply that was replaced, or a message that is not the last
	// turn's, cannot be regenerated.
	s.ui(t, user, uiBody("regen", "submit-message", "", "thanks"), nil)
	for _, body := range []string{
		uiBody("regen", "regenerate-message", fmt.Sprintf("reply-%d", turnID), "add buy milk"),
		uiBody("regen", "regenerate-message", "", "add buy milk"),
	} {
		if r := s.ui(t, user, body, nil); r.status != 409 || r.json(t)["code"] != "nothing_to_regenerate" {
			t.Fatalf("stale regenerate = %d %s, want 409 nothing_to_regenerate", r.status, r.body)
		}
	}
}

func TestUIChatIdempotencyKey(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New())
	user := storetest.UserID(t)
	keyed := http.Header{"Idempotency-Key": {"ui-1"}}
	first := s.ui(t, user, uiBody("keyed", "submit-message", "", "Add a task to buy milk"), keyed)
	again := s.ui(t, user, uiBody("keyed", "submit-message", "", "Add a task to buy milk"), keyed)
	if again.status != 200 || again.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("retry = %d %v", again.status, again.header)
	}
	a, b := uiChunks(t, first.body), uiChunks(t, again.body)
	if chunkTypes(a) != chunkTypes(b) || a[0]["messageId"] != b[0]["messageId"] || a[2]["toolCallId"] != b[2]["toolCallId"] {
		t.Fatalf("the replay differs:\n%s\n%s", first.body, again.body)
	}
	if n := storetest.Count(t, `SELECT count(*) FROM tasks WHERE user_id = $1`, user); n != 1 {
		t.Fatalf("%d tasks after a retry, want 1", n)
	}
	if r := s.ui(t, user, uiBody("keyed", "submit-message", "", "Add a task to buy eggs"), keyed); r.status != 422 {
		t.Fatalf("the key with another message = %d, want 422", r.status)
	}
}

// A failure once the stream started ends it with an error chunk, which
// useChat surfaces; the conversation is known from the start chunk.
func TestUIChatModelFailureMidStream(t *testing.T) {
	t.Parallel()
	s := mustServer(t, specFailingModel{})
	user := storetest.UserID(t)
	r := s.ui(t, user, uiBody("broken", "submit-message", "", "Add a task to buy milk"), nil)
	chunks := uiChunks(t, r.body)
	if r.status != 200 || chunkTypes(chunks) != "start start-step error" || chunks[2]["errorText"] != llmUnavailableMessage {
		t.Fatalf("got %d %s, want a stream ending with the model's error", r.status, r.body)
	}
}

// useChat's Retry after a model failure is regenerate(): the failed
// turn's message was saved, so it runs again, and the chat has one reply.
func TestUIChatRetryAfterAModelFailure(t *testing.T) {
	t.Parallel()
	fake := newFakeOpenAI(t, openaitest.Step{Status: 500}, openaitest.Step{Status: 500}, openaitest.Step{Text: "Back again."})
	s := mustServer(t, fake.Model())
	user := storetest.UserID(t)
	failed := uiChunks(t, s.ui(t, user, uiBody("retry", "submit-message", "", "hello"), nil).body)
	if chunkTypes(failed) != "start start-step error" {
		t.Fatalf("the failed turn streamed %s", chunkTypes(failed))
	}
	r := s.ui(t, user, uiBody("retry", "regenerate-message", failed[0]["messageId"].(string), "hello"), nil)
	chunks := uiChunks(t, r.body)
	if chunks[0]["messageId"] != failed[0]["messageId"] || chunks[len(chunks)-1]["type"] != "finish" {
		t.Fatalf("the retry streamed %s", r.body)
	}
	convID, _ := mustLastTurn(t, user)
	if replies := mustReplies(t, user, convID); len(replies) != 1 || replies[0] != "Back again." ||
		storetest.Count(t, `SELECT count(*) FROM messages WHERE user_id = $1 AND role = 'user'`, user) != 1 {
		t.Fatalf("replies = %q, want one message answered once", replies)
	}
}

// A regenerated reply replaces the old one only once it is stored: a
// regeneration whose model fails leaves the conversation as it was, the old
// reply with its tool call, and a later one still replaces it.
func TestUIChatFailedRegenerateKeepsTheReply(t *testing.T) {
	t.Parallel()
	fake := newFakeOpenAI(t,
		openaitest.Step{Calls: []agent.ToolCall{{ID: "call_a", Name: "add_task", Arguments: `{"title":"Buy milk"}`}}},
		openaitest.Step{Text: "Added Buy milk."},
		openaitest.Step{Status: 500}, openaitest.Step{Status: 500},
		openaitest.Step{Text: "I've added Buy milk as task 1."},
	)
	s := mustServer(t, fake.Model())
	user := storetest.UserID(t)
	s.ui(t, user, uiBody("keep", "submit-message", "", "add buy milk"), nil)
	convID, turnID := mustLastTurn(t, user)
	regenerate := uiBody("keep", "regenerate-message", fmt.Sprintf("reply-%d", turnID), "add buy milk")

	failed := uiChunks(t, s.ui(t, user, regenerate, nil).body)
	if got := chunkTypes(failed); !strings.HasSuffix(got, "error") {
		t.Fatalf("the failed regeneration streamed %s, want an error at its end", got)
	}
	if replies := mustReplies(t, user, convID); len(replies) != 1 || replies[0] != "Added Buy milk." {
		t.Fatalf("replies after a failed regeneration = %q, want the old one", replies)
	}
	held := `SELECT count(*) FROM tool_calls c JOIN messages m ON m.id = c.message_id
		WHERE c.user_id = $1 AND c.turn_id = $2 AND m.content = $3`
	if n := storetest.Count(t, held, user, turnID, "Added Buy milk."); n != 1 {
		t.Fatalf("the old reply holds %d calls, want its add_task", n)
	}
	page := s.do(t, call{method: "GET", path: fmt.Sprintf("/api/%s/conversations/%d/messages", user, convID), token: mustToken(t, user)})
	if page.status != 200 || !strings.Contains(string(page.body), "Added Buy milk.") {
		t.Fatalf("the conversation after a failed regeneration = %d %s", page.status, page.body)
	}

	s.ui(t, user, regenerate, nil)
	if replies := mustReplies(t, user, convID); len(replies) != 1 || replies[0] != "I've added Buy milk as task 1." {
		t.Fatalf("replies = %q, want the new one in the old one's place", replies)
	}
	if n := storetest.Count(t, held, user, turnID, "I've added Buy milk as task 1."); n != 1 {
		t.Fatalf("the new reply holds %d calls, want the add_task", n)
	}
	if n := storetest.Count(t, `SELECT count(*) FROM tasks WHERE user_id = $1`, user); n != 1 {
		t.Fatalf("%d tasks, want the one added once", n)
	}
}

// mustLastTurn returns the conversation (its number, as the API names it)
// and id of user's newest message.
func mustLastTurn(tb testing.TB, user string) (convID, turnID int64) {
	tb.Helper()
	err := storetest.Pool(tb).QueryRow(context.Background(), `
		SELECT c.number, m.id FROM messages m JOIN conversations c ON c.id = m.conversation_id
		WHERE m.user_id = $1 AND m.role = 'user' ORDER BY m.id DESC LIMIT 1`, user).Scan(&convID, &turnID)
	if err != nil {
		tb.Fatal(err)
	}
	return convID, turnID
}

// mustReplies returns the texts of the replies in user's conversation
// number convID, in order.
func mustReplies(tb testing.TB, user string, convID int64) []string {
	tb.Helper()
	return storetest.Strings(tb, `
		SELECT content FROM messages
		WHERE user_id = $1 AND conversation_id = (SELECT id FROM conversations WHERE user_id = $1 AND number = $2) AND role = 'assistant'
		ORDER BY id`, user, convID)
}

// mustAISDK returns node and the path of clients/<script>, which imports
// the `ai` package.
func mustAISDK(tb testing.TB, script string) (node, path string) {
	tb.Helper()
	return nodetest.MustScript(tb, "ai", "the AI SDK", script)
}

// uiMessage is a UIMessage as the AI SDK assembles it.
type uiMessage struct {
	ID       string
	Role     string
	Metadata struct {
		ConversationID int64 `json:"conversation_id"`
	}
	Parts []struct {
		Type, Text, State string
		ToolName          string
		ToolCallID        string
		Input, Output     map[string]any
		ErrorText         string
	}
}

// text is the message's text parts, joined.
func (m uiMessage) text() string {
	var b strings.Builder
	for _, p := range m.Parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// tools lists the message's tool parts as "name:state".
func (m uiMessage) tools() string {
	var out []string
	for _, p := range m.Parts {
		if p.Type == "dynamic-tool" {
			out = append(out, p.ToolName+":"+p.State)
		}
	}
	return strings.Join(out, " ")
}

// The AI SDK's own client — AbstractChat, which useChat wraps, over
// DefaultChatTransport — holds a chat of two turns and regenerates the
// second reply, sending what sendMessage() and regenerate() send.
func TestUIChatWithTheAISDK(t *testing.T) {
	t.Parallel()
	node, script := mustAISDK(t, "ui-chat.mjs")
	s := mustServer(t, offline.New())
	user := storetest.UserID(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, node, script, s.URL+"/api/"+user+"/chat/ui", mustToken(t, user), "Xq7Vd0cLr1bH2tUe").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("%s: %v\n%s", script, err, ee.Stderr)
		}
		t.Fatal(err)
	}
	type request struct {
		Message uiMessage
		Errors  []string
	}
	var run struct {
		First, Second, Regenerated request
		Messages                   []uiMessage
		Refused                    *string
	}
	if err := json.Unmarshal(out, &run); err != nil {
		t.Fatalf("%s printed %q: %v", script, out, err)
	}
	for name, r := range map[string]request{"first": run.First, "second": run.Second, "regenerated": run.Regenerated} {
		if len(r.Errors) > 0 {
			t.Fatalf("the %s request streamed errors: %v", name, r.Errors)
		}
	}

	// The database: one conversation, remembered under the chat id, of two
	// turns; the second's reply replaced, its call made once.
	convID, turnID := mustLastTurn(t, user)
	if n := storetest.Count(t, `SELECT count(*) FROM chat_ids WHERE user_id = $1 AND chat_id = 'Xq7Vd0cLr1bH2tUe'
		AND conversation_id = (SELECT id FROM conversations WHERE user_id = $1 AND number = $2)`, user, convID); n != 1 {
		t.Fatal("the chat id is not remembered with its conversation")
	}
	replies := mustReplies(t, user, convID)
	if len(replies) != 2 || storetest.Count(t, `SELECT count(*) FROM messages
		WHERE conversation_id = (SELECT id FROM conversations WHERE user_id = $1 AND number = $2)`, user, convID) != 4 {
		t.Fatalf("the conversation holds replies %q, want two turns", replies)
	}
	if n := storetest.Count(t, `SELECT count(*) FROM tool_calls WHERE user_id = $1 AND turn_id = $2 AND tool = 'complete_task'`, user, turnID); n != 1 {
		t.Fatalf("the second turn recorded %d complete_task calls, want 1", n)
	}
	if n := storetest.Count(t, `SELECT count(*) FROM tasks WHERE user_id = $1 AND completed`, user); n != 1 || storetest.Count(t, `SELECT count(*) FROM tasks WHERE user_id = $1`, user) != 1 {
		t.Fatal("want one task, completed")
	}

	// What the client assembled: the server's ids, the conversation in the
	// metadata, the tool parts, and the stored texts.
	first, second, regen := run.First.Message, run.Second.Message, run.Regenerated.Message
	for _, m := range []uiMessage{first, second, regen} {
		if m.Role != "assistant" || m.Metadata.ConversationID != convID {
			t.Fatalf("message %+v, want an assistant message of conversation %d", m, convID)
		}
	}
	if first.tools() != "add_task:output-available" || first.Parts[1].Input["title"] != "Buy milk" ||
		first.Parts[1].Output["status"] != "created" || first.text() != replies[0] {
		t.Fatalf("first reply = %+v, want add_task and the stored text %q", first, replies[0])
	}
	if second.ID != fmt.Sprintf("reply-%d", turnID) || second.tools() != "complete_task:output-available" ||
		second.Parts[1].Output["status"] != "completed" {
		t.Fatalf("second reply = %+v, want complete_task on the first message's task", second)
	}
	if regen.ID != second.ID || regen.tools() != second.tools() || regen.Parts[1].ToolCallID != second.Parts[1].ToolCallID || regen.text() != replies[1] {
		t.Fatalf("regenerated reply = %+v, want the second turn's call and the stored text %q", regen, replies[1])
	}
	if len(run.Messages) != 4 || run.Messages[3].ID != regen.ID || run.Messages[2].Role != "user" {
		t.Fatalf("the client holds %d messages, want user, reply, user, the regenerated reply", len(run.Messages))
	}
	if run.Refused == nil || !strings.Contains(*run.Refused, `"code":"forbidden"`) {
		t.Fatalf("another user's path: %v, want the transport to throw the forbidden problem", run.Refused)
	}
}
