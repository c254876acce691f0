package http

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/store"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/tasks"
)

func TestMain(m *testing.M) { os.Exit(storetest.Run(m)) }

var testSecret = []byte("a-test-secret-that-is-long-enough-for-hs256")

// testServer is the real handler on real PostgreSQL behind httptest.
type testServer struct {
	*httptest.Server
	logs *syncBuffer
}

// mustServer starts NewServer with the given model; adjust may change the
// chat configuration before it starts.
func mustServer(tb testing.TB, model agent.Model, adjust ...func(*ChatConfig)) *testServer {
	tb.Helper()
	pool := storetest.Pool(tb)
	return mustServerOn(tb, pool, model, adjust...)
}

func mustServerOn(tb testing.TB, db *pgxpool.Pool, model agent.Model, adjust ...func(*ChatConfig)) *testServer {
	tb.Helper()
	auth, err := NewAuthenticator(AuthConfig{Secret: testSecret})
	if err != nil {
		tb.Fatal(err)
	}
	cfg := ChatConfig{Model: model, Prompt: agent.DefaultPrompt(), TurnsPerMinute: 6000, TurnBurst: 1000, MaxStreams: 100}
	for _, f := range adjust {
		f(&cfg)
	}
	logs := &syncBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	h := NewServer(log, auth, db, tasks.NewService(store.NewTasks(db)), store.NewConversations(db), cfg)
	s := &testServer{Server: httptest.NewServer(h), logs: logs}
	tb.Cleanup(s.Close)
	return s
}

func mustToken(tb testing.TB, user string) string {
	tb.Helper()
	tok, err := MintToken(testSecret, user, time.Hour, "", "", time.Now())
	if err != nil {
		tb.Fatal(err)
	}
	return tok
}

// call is one HTTP request of a test.
type call struct {
	method, path, token string
	body                string
	header              http.Header
}

// reply is a finished response with its body read.
type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) json(tb testing.TB) map[string]any {
	tb.Helper()
	var v map[string]any
	if err := json.Unmarshal(r.body, &v); err != nil {
		tb.Fatalf("body %q is not a JSON object: %v", r.body, err)
	}
	return v
}

func (s *testServer) do(tb testing.TB, c call) reply {
	tb.Helper()
	req, err := http.NewRequest(c.method, s.URL+c.path, strings.NewReader(c.body))
	if err != nil {
		tb.Fatal(err)
	}
	if c.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	for k, v := range c.header {
		req.Header[k] = v
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: body}
}

// chat sends one JSON chat turn as user and checks it against the spec.
func (s *testServer) chat(tb testing.TB, user string, convID int64, message string) reply {
	tb.Helper()
	r := s.do(tb, call{method: "POST", path: "/api/" + user + "/chat", token: mustToken(tb, user), body: chatBody(convID, message)})
	mustMatchSpec(tb, "POST", "/api/{user_id}/chat", r.status, r.header, r.body)
	return r
}

func chatBody(convID int64, message string) string {
	m := map[string]any{"message": message}
	if convID != 0 {
		m["conversation_id"] = convID
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// sseEvent is one parsed Server-Sent Event.
type sseEvent struct {
	id, name string
	data     map[string]any
}

// readEvents parses a whole event stream, failing on anything malformed.
func readEvents(tb testing.TB, body io.Reader) (events []sseEvent, pings int) {
	tb.Helper()
	sc := bufio.NewScanner(body)
	var cur sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.name != "" {
				events = append(events, cur)
			}
			cur = sseEvent{}
		case line == ": ping":
			pings++
		case strings.HasPrefix(line, "id: "):
			cur.id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &cur.data); err != nil {
				tb.Fatalf("event data %q is not JSON: %v", line, err)
			}
		default:
			tb.Fatalf("unexpected stream line %q", line)
		}
	}
	return events, pings
}

func eventNames(events []sseEvent) string {
	var names []string
	for _, e := range events {
		names = append(names, e.name)
	}
	return strings.Join(names, ",")
}

// syncBuffer is a bytes.Buffer safe for a logger and a test to share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// fakeOpenAI is an OpenAI-compatible server speaking the real
// chat-completions wire format (SSE chunks, [DONE]). Each request is
// answered by the next step of its script; it records the requests.
type fakeOpenAI struct {
	*httptest.Server
	mu       sync.Mutex
	script   []fakeStep
	requests []map[string]any
}

// fakeStep answers one model call: text, tool calls, an HTTP error status,
// or a hang until the client goes away (after sending text, if any).
type fakeStep struct {
	text   string
	calls  []agent.ToolCall
	status int
	hang   bool
	wait   chan struct{} // closed by the test to let the step answer
}

func newFakeOpenAI(tb testing.TB, script ...fakeStep) *fakeOpenAI {
	tb.Helper()
	f := &fakeOpenAI{script: script}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	tb.Cleanup(f.Close)
	return f
}

// model returns the OpenAI provider pointed at the fake.
func (f *fakeOpenAI) model() agent.Model {
	return agent.NewOpenAI(agent.OpenAIConfig{APIKey: "sk-test", BaseURL: f.URL + "/v1", Model: "fake-model", MaxRetries: 1, RetryBaseDelay: time.Millisecond}, f.Client())
}

func (f *fakeOpenAI) requestCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.requests)
}

func (f *fakeOpenAI) request(i int) map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests[i]
}

func (f *fakeOpenAI) serve(w http.ResponseWriter, r *http.Request) {
	var req map[string]any
	_ = json.NewDecoder(r.Body).Decode(&req)
	f.mu.Lock()
	n := len(f.requests)
	f.requests = append(f.requests, req)
	step := f.script[min(n, len(f.script)-1)]
	f.mu.Unlock()
	if step.wait != nil {
		select {
		case <-step.wait:
		case <-r.Context().Done():
			return
		}
	}
	if step.status != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(step.status)
		fmt.Fprintf(w, `{"error":{"message":"fake failure","type":"server_error","code":null}}`)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	flush := func() { http.NewResponseController(w).Flush() }
	chunk := func(delta string) {
		fmt.Fprintf(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"fake-model","choices":[{"index":0,"delta":%s,"finish_reason":null}]}`+"\n\n", delta)
		flush()
	}
	for _, word := range strings.SplitAfter(step.text, " ") {
		if word != "" {
			b, _ := json.Marshal(map[string]string{"content": word})
			chunk(string(b))
		}
	}
	if step.hang {
		<-r.Context().Done()
		return
	}
	for i, c := range step.calls {
		b, _ := json.Marshal(map[string]any{"tool_calls": []map[string]any{{"index": i, "id": c.ID, "type": "function", "function": map[string]string{"name": c.Name, "arguments": c.Arguments}}}})
		chunk(string(b))
	}
	fmt.Fprint(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"fake-model","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`+"\n\n")
	fmt.Fprint(w, "data: [DONE]\n\n")
	flush()
}

// waitFor polls cond until it holds or a generous deadline passes.
func waitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			tb.Fatalf("timed out waiting for %s", what)
		case <-time.After(5 * time.Millisecond):
		}
	}
}
