package http

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/agent/offline"
	"github.com/taskchat/taskchat/internal/agent/openaitest"
	"github.com/taskchat/taskchat/internal/http/turnstream"
	"github.com/taskchat/taskchat/internal/logtest"
	"github.com/taskchat/taskchat/internal/store/storetest"
)

// The AI SDK's useChat({ resume: true }) against taskchat, driven with the
// `ai` package's own AbstractChat and DefaultChatTransport
// (clients/ui-chat.mjs): resumeStream() calls GET
// /api/{user_id}/chat/ui/{chat_id}/stream, and Stop calls POST
// …/conversations/{conversation_id}/stop. Two test servers over one
// database are two replicas: each has its own runs hub and listening
// connection, as two processes would.

// sdkRun is clients/ui-chat.mjs running in one of its stepped modes,
// which print a JSON line per step as it happens.
type sdkRun struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  *bufio.Scanner
	stderr *logtest.Buffer
	script string
}

// startSDK runs clients/ui-chat.mjs for user's chat chatID on api (a
// replica's URL) in mode, with other as the other replica's URL.
func startSDK(t *testing.T, user, chatID, mode string, api string, other ...string) *sdkRun {
	t.Helper()
	node, script := mustAISDK(t, "ui-chat.mjs")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	args := []string{script, api + "/api/" + user + "/chat/ui", mustToken(t, user), chatID, mode}
	for _, o := range other {
		args = append(args, o+"/api/"+user+"/chat/ui")
	}
	r := &sdkRun{cmd: exec.CommandContext(ctx, node, args...), stderr: &logtest.Buffer{}, script: script}
	r.cmd.Stderr = r.stderr
	stdin, err := r.cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	r.stdin = stdin
	out, err := r.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	r.lines = bufio.NewScanner(out)
	r.lines.Buffer(make([]byte, 0, 64<<10), 4<<20)
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = r.cmd.Wait() })
	return r
}

// next reads the run's next step, which must be step, into v.
func (r *sdkRun) next(t *testing.T, step string, v any) {
	t.Helper()
	if !r.lines.Scan() {
		err := r.cmd.Wait()
		t.Fatalf("%s ended before step %q: %v, %v\n%s", r.script, step, r.lines.Err(), err, r.stderr)
	}
	var s struct{ Step string }
	if err := json.Unmarshal(r.lines.Bytes(), &s); err != nil || s.Step != step {
		t.Fatalf("%s printed %q, want step %q (%v)\n%s", r.script, r.lines.Bytes(), step, err, r.stderr)
	}
	if err := json.Unmarshal(r.lines.Bytes(), v); err != nil {
		t.Fatalf("step %s: %v: %s", step, err, r.lines.Bytes())
	}
}

// proceed lets a run that waits after a step (the stop mode, after
// "following") go on, once the test has looked at what the step left.
func (r *sdkRun) proceed(t *testing.T) {
	t.Helper()
	if _, err := io.WriteString(r.stdin, "go\n"); err != nil {
		t.Fatalf("%s: %v\n%s", r.script, err, r.stderr)
	}
}

// wait waits for the run to end, which it must do without an error.
func (r *sdkRun) wait(t *testing.T) {
	t.Helper()
	if r.lines.Scan() {
		t.Fatalf("%s printed more than expected: %s", r.script, r.lines.Bytes())
	}
	if err := r.cmd.Wait(); err != nil {
		t.Fatalf("%s: %v\n%s", r.script, err, r.stderr)
	}
}

// sdkMessage is a UIMessage as the AI SDK assembles it, with all the
// metadata taskchat sends.
type sdkMessage struct {
	uiMessage
	Metadata struct {
		ConversationID int64 `json:"conversation_id"`
		Interrupted    bool  `json:"interrupted"`
		Stopped        bool  `json:"stopped"`
	}
}

// sdkRequest is a request the chat's transport made.
type sdkRequest struct {
	Method, URL string
	Status      int
}

// sdkChat is what a chat object ends with.
type sdkChat struct {
	Message  *sdkMessage
	Messages []sdkMessage
	Status   string
	Errors   []string
	Requests []sdkRequest
}

// uiHeldReply is a model that writes, asks for add_task, and then, in the
// middle of the reply, waits until release is called before it writes the
// rest. It answers the turns after at once. A test defers release: a
// replica's shutdown waits for its turns, which wait for the model.
func uiHeldReply(t *testing.T) (fake *openaitest.Server, release func()) {
	wait := make(chan struct{})
	fake = newFakeOpenAI(t,
		openaitest.Step{Text: "Let me add that.", Calls: []agent.ToolCall{{ID: "call_milk", Name: "add_task", Arguments: `{"title":"Buy milk"}`}}},
		openaitest.Step{Text: "I've added Buy milk as task 1.", Wait: wait},
		openaitest.Step{Text: "You're welcome."},
	)
	var once sync.Once
	return fake, func() { once.Do(func() { close(wait) }) }
}

// uiStoredTurn returns the user's newest conversation's messages, as GET
// …/messages answers them.
func uiStoredTurn(t *testing.T, s *testServer, user string) (convID, turnID int64, msgs []messageJSON) {
	t.Helper()
	convID, turnID = mustLastTurn(t, user)
	r := s.do(t, call{method: "GET", path: fmt.Sprintf("/api/%s/conversations/%d/messages", user, convID), token: mustToken(t, user)})
	mustMatchSpec(t, "GET", "/api/{user_id}/conversations/{conversation_id}/messages", r.status, r.header, r.body)
	var page messagesResponse
	if err := json.Unmarshal(r.body, &page); err != nil || r.status != 200 {
		t.Fatalf("messages: %d %s", r.status, r.body)
	}
	return convID, turnID, page.Messages
}

// mustBeTheStoredReply fails unless m is the reply as stored: its id, its
// conversation, its text, and its tool parts, call for call.
func mustBeTheStoredReply(t *testing.T, what string, m sdkMessage, convID, turnID int64, stored messageJSON) {
	t.Helper()
	if m.ID != turnstream.ReplyID(turnID) || m.Role != "assistant" || m.Metadata.ConversationID != convID {
		t.Fatalf("%s: message %s (%s) of conversation %d, want %s of %d", what, m.ID, m.Role, m.Metadata.ConversationID, turnstream.ReplyID(turnID), convID)
	}
	if m.text() != stored.Content {
		t.Fatalf("%s: text %q, stored %q", what, m.text(), stored.Content)
	}
	var tools []int
	for i, p := range m.Parts {
		if p.Type == "dynamic-tool" {
			tools = append(tools, i)
		}
	}
	if len(tools) != len(stored.ToolCalls) {
		t.Fatalf("%s: %d tool parts (%s), stored %d calls", what, len(tools), m.tools(), len(stored.ToolCalls))
	}
	for i, c := range stored.ToolCalls {
		p := m.Parts[tools[i]]
		var args, result map[string]any
		if json.Unmarshal(c.Arguments, &args) != nil || json.Unmarshal(c.Result, &result) != nil {
			t.Fatalf("stored call %s: arguments %s, result %s", c.ID, c.Arguments, c.Result)
		}
		if p.ToolCallID != c.ID || p.ToolName != c.Tool || p.State != "output-available" || c.IsError ||
			!reflect.DeepEqual(p.Input, args) || !reflect.DeepEqual(p.Output, result) {
			t.Fatalf("%s: tool part %d = %+v, stored %s(%s) = %s", what, i, p, c.Tool, c.Arguments, c.Result)
		}
	}
}

// A page reloaded in the middle of a reply (useChat({ resume: true })
// calls resumeStream() as it mounts) gets the whole reply, though its
// first connection went to the other replica and has left: the turn went
// on, and the resumed message is the stored reply, tool parts included.
// The chat whose connection dropped resumes too, on the replica that runs
// the turn: the replay rewrites the reply it held, in place.
func TestUIChatResumesOnTheOtherReplica(t *testing.T) {
	t.Parallel()
	fake, release := uiHeldReply(t)
	defer release()
	a, b := mustServer(t, fake.Model()), mustServer(t, fake.Model())
	user := storetest.UserID(t)
	// A chat id with a ':', which the transport escapes in the URL.
	run := startSDK(t, user, "page:reload", "resume", a.URL, b.URL)

	var left struct{ Message sdkMessage }
	run.next(t, "left", &left)
	if left.Message.tools() != "add_task:output-available" || left.Message.text() != "Let me add that." {
		t.Fatalf("the first client left with %+v, want the first round", left.Message)
	}
	// Both followers have the replay up to the tool; the model still holds
	// the rest of the reply.
	var following struct{ Message, Sender sdkMessage }
	run.next(t, "following", &following)
	if n := storetest.Count(t, `SELECT count(*) FROM messages WHERE user_id = $1 AND role = 'assistant'`, user); n != 0 {
		t.Fatalf("the turn is over (%d replies) before the resumed clients follow it", n)
	}
	for _, m := range []sdkMessage{following.Message, following.Sender} {
		if m.ID != left.Message.ID || m.text() != "Let me add that." || m.tools() != "add_task:output-available" {
			t.Fatalf("a resumed client shows %+v, want the reply the first one left", m)
		}
	}
	release() // the model writes the rest, live to the followers
	var resumed struct {
		sdkChat
		Sender sdkChat
	}
	run.next(t, "resumed", &resumed)
	run.wait(t)

	convID, turnID, msgs := uiStoredTurn(t, a, user)
	if len(msgs) != 2 || msgs[1].Interrupted || msgs[1].Content != "Let me add that.\n\nI've added Buy milk as task 1." {
		t.Fatalf("stored %+v, want the whole reply", msgs)
	}
	stream := "/api/" + user + "/chat/ui/page%3Areload/stream"
	for _, c := range []struct {
		name     string
		chat     sdkChat
		messages int
		requests []sdkRequest
	}{
		// A new chat object: one GET, on B, at the URL DefaultChatTransport
		// builds from its api.
		{"the reloaded page's chat", resumed.sdkChat, 1, []sdkRequest{{"GET", b.URL + stream, 200}}},
		// The first chat: its message, the reply it held, then rewritten.
		{"the first chat", resumed.Sender, 2, []sdkRequest{{"POST", a.URL + "/api/" + user + "/chat/ui", 200}, {"GET", a.URL + stream, 200}}},
	} {
		if c.chat.Status != "ready" || len(c.chat.Errors) > 0 || len(c.chat.Messages) != c.messages || c.chat.Message == nil {
			t.Fatalf("%s ended %s with errors %v and %d messages, want %d", c.name, c.chat.Status, c.chat.Errors, len(c.chat.Messages), c.messages)
		}
		mustBeTheStoredReply(t, c.name, *c.chat.Message, convID, turnID, msgs[1])
		if m := c.chat.Message.Metadata; m.Interrupted || m.Stopped {
			t.Fatalf("%s: the reply's metadata = %+v, want a complete turn", c.name, m)
		}
		if !reflect.DeepEqual(c.chat.Requests, c.requests) {
			t.Fatalf("%s: requests = %+v, want %+v", c.name, c.chat.Requests, c.requests)
		}
	}
	// The turn ran once: two model calls, one task.
	if fake.Requests() != 2 || storetest.Count(t, `SELECT count(*) FROM tasks WHERE user_id = $1`, user) != 1 {
		t.Fatalf("%d model calls, want the turn's two, and one task", fake.Requests())
	}
}

// resumeStream() when nothing runs adds no message: the route answers 204
// and the chat stays ready, for a chat id never used, a chat whose turn is
// over, and another user's chat of the same id.
func TestUIChatResumeWhenNothingRuns(t *testing.T) {
	t.Parallel()
	a, b := mustServer(t, offline.New()), mustServer(t, offline.New())
	user, other := storetest.UserID(t), storetest.UserID(t)
	if r := a.ui(t, user, uiBody("finished", "submit-message", "", "Add a task to buy milk"), nil); r.status != 200 {
		t.Fatalf("the turn = %d %s", r.status, r.body)
	}
	cases := []struct {
		name, user, chatID string
		server             *testServer
	}{
		{"a chat id never used", user, "never-used", b},
		{"a finished turn, on its replica", user, "finished", a},
		{"a finished turn, on the other replica", user, "finished", b},
		{"another user's chat of that id", other, "finished", a},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			run := startSDK(t, c.user, c.chatID, "resume-only", c.server.URL)
			var resumed sdkChat
			run.next(t, "resumed", &resumed)
			run.wait(t)
			want := []sdkRequest{{"GET", c.server.URL + "/api/" + c.user + "/chat/ui/" + c.chatID + "/stream", 204}}
			if !reflect.DeepEqual(resumed.Requests, want) {
				t.Fatalf("requests = %+v, want %+v", resumed.Requests, want)
			}
			if len(resumed.Messages) != 0 || resumed.Status != "ready" || len(resumed.Errors) > 0 {
				t.Fatalf("the chat ended %s with %d messages and errors %v, want ready and none", resumed.Status, len(resumed.Messages), resumed.Errors)
			}
		})
	}
}

// A Stop button that calls the stop route (on the replica that does not
// run the turn) stops the turn: the client that follows the turn there by
// resumeStream(), and the one that started it, both end with the reply so
// far, marked stopped in its metadata, which is the stored reply.
func TestUIChatStopWhileFollowing(t *testing.T) {
	t.Parallel()
	fake, release := uiHeldReply(t) // released at the end only: the turn waits on its model until stopped
	defer release()
	a, b := mustServer(t, fake.Model()), mustServer(t, fake.Model())
	user := storetest.UserID(t)
	run := startSDK(t, user, "stop-me", "stop", a.URL, b.URL)

	var following struct{ Message sdkMessage }
	run.next(t, "following", &following)
	if n := storetest.Count(t, `SELECT count(*) FROM messages WHERE user_id = $1 AND role = 'assistant'`, user); n != 0 ||
		following.Message.tools() != "add_task:output-available" {
		t.Fatalf("the follower shows %+v, with %d replies stored, want the turn running", following.Message, n)
	}
	run.proceed(t) // the Stop button
	var ended struct {
		Stop struct {
			URL    string
			Status int
			Body   stopResponse
		}
		Sender, Follower sdkChat
	}
	run.next(t, "ended", &ended)
	run.wait(t)

	convID, turnID, msgs := uiStoredTurn(t, a, user)
	stop := ended.Stop
	if stop.URL != fmt.Sprintf("%s/api/%s/conversations/%d/stop", b.URL, user, convID) || stop.Status != 202 ||
		stop.Body != (stopResponse{ConversationID: convID, TurnID: turnID, Ended: true}) {
		t.Fatalf("stop = %+v, want 202 for turn %d of conversation %d, ended", stop, turnID, convID)
	}
	if len(msgs) != 2 || !msgs[1].Interrupted || msgs[1].Content != "Let me add that." || len(msgs[1].ToolCalls) != 1 {
		t.Fatalf("stored %+v, want the reply so far, interrupted, with its call", msgs)
	}
	for name, c := range map[string]sdkChat{"follower": ended.Follower, "sender": ended.Sender} {
		if c.Status != "ready" || len(c.Errors) > 0 || c.Message == nil {
			t.Fatalf("the %s ended %s with errors %v", name, c.Status, c.Errors)
		}
		mustBeTheStoredReply(t, name, *c.Message, convID, turnID, msgs[1])
		if m := c.Message.Metadata; !m.Interrupted || !m.Stopped {
			t.Fatalf("the %s's reply metadata = %+v, want interrupted and stopped", name, m)
		}
	}
	if r := ended.Follower.Requests; len(r) != 1 || r[0].Status != 200 || !strings.HasPrefix(r[0].URL, b.URL) {
		t.Fatalf("the follower's requests = %+v, want its resume on B", r)
	}
	// The conversation takes the next message at once.
	if r := b.ui(t, user, uiBody("stop-me", "submit-message", "", "thanks"), nil); r.status != 200 {
		t.Fatalf("the next message = %d %s", r.status, r.body)
	}
}
