package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/taskchat/taskchat/internal/agent"
)

// fakeOpenAI is a chat-completions server speaking the real SSE wire
// format. Request i is answered by replies[i]; the last reply repeats.
type fakeOpenAI struct {
	*httptest.Server
	replies []http.HandlerFunc

	mu      sync.Mutex
	bodies  [][]byte
	headers []http.Header
}

// newFakeOpenAI starts a fake that answers with replies in turn.
func newFakeOpenAI(tb testing.TB, replies ...http.HandlerFunc) *fakeOpenAI {
	tb.Helper()
	f := &fakeOpenAI{replies: replies}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	tb.Cleanup(f.Close)
	return f
}

func (f *fakeOpenAI) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, "unexpected "+r.Method+" "+r.URL.Path, http.StatusTeapot)
		return
	}
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	n := len(f.bodies)
	f.bodies = append(f.bodies, body)
	f.headers = append(f.headers, r.Header.Clone())
	f.mu.Unlock()
	f.replies[min(n, len(f.replies)-1)](w, r)
}

// rawBody returns the body of request i as it arrived.
func (f *fakeOpenAI) rawBody(i int) []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.bodies[i]
}

// requests returns how many requests the fake received.
func (f *fakeOpenAI) requests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.bodies)
}

// header returns the headers of request i.
func (f *fakeOpenAI) header(i int) http.Header {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.headers[i]
}

// mustBody decodes the body of request i.
func (f *fakeOpenAI) mustBody(tb testing.TB, i int) wireRequest {
	tb.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	var req wireRequest
	if err := json.Unmarshal(f.bodies[i], &req); err != nil {
		tb.Fatalf("decode request body %q: %v", f.bodies[i], err)
	}
	return req
}

// wireRequest is the part of a chat-completions request the tests check.
type wireRequest struct {
	Model         string `json:"model"`
	Stream        bool   `json:"stream"`
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Messages []struct {
		Role       string     `json:"role"`
		Content    string     `json:"content"`
		ToolCallID string     `json:"tool_call_id"`
		ToolCalls  []wireCall `json:"tool_calls"`
	} `json:"messages"`
	Tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
}

// wireCall is a tool call as the wire carries it, in requests and chunks.
type wireCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// sse answers with chunks as server-sent events, then data: [DONE].
func sse(chunks ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		writeEvents(w, chunks...)
		writeEvents(w, "[DONE]")
	}
}

// sseNoDone sends chunks and ends the response cleanly, without [DONE].
func sseNoDone(chunks ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { writeEvents(w, chunks...) }
}

// sseCut sends chunks, then drops the connection mid-response.
func sseCut(chunks ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		writeEvents(w, chunks...)
		panic(http.ErrAbortHandler)
	}
}

// sseHang sends chunks, then stays silent until the client goes away.
func sseHang(chunks ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		writeEvents(w, chunks...)
		<-r.Context().Done()
	}
}

func writeEvents(w http.ResponseWriter, data ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	for _, d := range data {
		fmt.Fprintf(w, "data: %s\n\n", d)
		w.(http.Flusher).Flush()
	}
}

// fail answers with an HTTP error and a JSON body.
func fail(status int, body string, header ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// chunk renders a chat.completion.chunk whose only choice has delta.
func chunk(delta string) string {
	return `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini",` +
		`"system_fingerprint":"fp_1","choices":[{"index":0,"delta":` + delta + `,"logprobs":null,"finish_reason":null}],"usage":null}`
}

func roleChunk() string { return chunk(`{"role":"assistant","content":"","refusal":null}`) }

func textChunk(s string) string {
	b, _ := json.Marshal(map[string]string{"content": s})
	return chunk(string(b))
}

// toolChunk renders one tool-call fragment; index < 0 leaves index out.
func toolChunk(index int, id, name, args string) string {
	c := wireCall{ID: id}
	if index >= 0 {
		c.Index = &index
	}
	if name != "" {
		c.Type = "function"
	}
	c.Function.Name, c.Function.Arguments = name, args
	b, _ := json.Marshal(map[string][]wireCall{"tool_calls": {c}})
	return chunk(string(b))
}

func finishChunk(reason string) string {
	return `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini",` +
		`"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"` + reason + `"}],"usage":null}`
}

func usageChunk(prompt, completion int) string {
	return fmt.Sprintf(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini",`+
		`"choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`, prompt, completion, prompt+completion)
}

// newTestModel returns a model calling f with tiny retry delays; change
// adjusts its config.
func newTestModel(tb testing.TB, f *fakeOpenAI, change ...func(*Config)) *Model {
	tb.Helper()
	cfg := Config{APIKey: "sk-test", BaseURL: f.URL + "/v1", RetryBaseDelay: time.Microsecond}
	for _, c := range change {
		c(&cfg)
	}
	hc := NewHTTPClient()
	tb.Cleanup(hc.CloseIdleConnections)
	return New(cfg, hc)
}

// collect returns an onText that records the pieces, and the record.
func collect() (func(string), *[]string) {
	var got []string
	return func(s string) { got = append(got, s) }, &got
}

// mustKind fails unless err is an *agent.ModelError of kind want.
func mustKind(tb testing.TB, err, want error) *agent.ModelError {
	tb.Helper()
	var me *agent.ModelError
	if !errors.As(err, &me) || !errors.Is(err, want) {
		tb.Fatalf("error = %v, want a *agent.ModelError of kind %v", err, want)
	}
	return me
}

func TestOpenAIStreamsTextInOrder(t *testing.T) {
	t.Parallel()
	f := newFakeOpenAI(t, sse(roleChunk(), textChunk("Hel"), textChunk("lo, "), textChunk("wor"), textChunk("ld"),
		finishChunk("stop"), usageChunk(12, 4)))
	onText, got := collect()

	resp, err := newTestModel(t, f).Stream(context.Background(), agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Content: "hi"}}}, onText)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if want := []string{"Hel", "lo, ", "wor", "ld"}; !reflect.DeepEqual(*got, want) {
		t.Errorf("onText got %q, want %q", *got, want)
	}
	if resp.Text != "Hello, world" {
		t.Errorf("Text = %q, want %q", resp.Text, "Hello, world")
	}
	if want := (agent.Usage{PromptTokens: 12, CompletionTokens: 4, TotalTokens: 16}); resp.Usage != want {
		t.Errorf("Usage = %+v, want %+v (from the chunk with empty choices)", resp.Usage, want)
	}
	if len(resp.ToolCalls) != 0 {
		t.Errorf("ToolCalls = %+v, want none", resp.ToolCalls)
	}
}

func TestOpenAISendsTheWholeConversation(t *testing.T) {
	t.Parallel()
	f := newFakeOpenAI(t, sse(textChunk("done")))
	schema := json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"}},"required":["title"]}`)
	req := agent.Request{
		System: "You manage tasks.",
		Messages: []agent.Message{
			{Role: agent.RoleUser, Content: "add milk"},
			{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "call_1", Name: "create_task", Arguments: `{"title":"milk"}`}}},
			{Role: agent.RoleTool, ToolCallID: "call_1", Content: `{"id":7}`},
		},
		Tools: []agent.ToolDef{{Name: "create_task", Description: "Creates a task.", Parameters: schema}},
	}

	if _, err := newTestModel(t, f, func(c *Config) { c.Model = "gpt-test" }).Stream(context.Background(), req, nil); err != nil {
		t.Fatalf("Stream: %v", err)
	}
	got := f.mustBody(t, 0)
	if got.Model != "gpt-test" || !got.Stream || !got.StreamOptions.IncludeUsage {
		t.Errorf("model %q stream %v include_usage %v, want gpt-test true true", got.Model, got.Stream, got.StreamOptions.IncludeUsage)
	}
	if auth := f.header(0).Get("Authorization"); auth != "Bearer sk-test" {
		t.Errorf("Authorization = %q", auth)
	}
	roles := []string{}
	for _, m := range got.Messages {
		roles = append(roles, m.Role)
	}
	if want := []string{"system", "user", "assistant", "tool"}; !reflect.DeepEqual(roles, want) {
		t.Fatalf("roles = %q, want %q", roles, want)
	}
	if m := got.Messages[0]; m.Content != "You manage tasks." {
		t.Errorf("system content = %q", m.Content)
	}
	call := got.Messages[2].ToolCalls
	if len(call) != 1 || call[0].ID != "call_1" || call[0].Type != "function" ||
		call[0].Function.Name != "create_task" || call[0].Function.Arguments != `{"title":"milk"}` {
		t.Errorf("assistant tool_calls = %+v", call)
	}
	if m := got.Messages[3]; m.ToolCallID != "call_1" || m.Content != `{"id":7}` {
		t.Errorf("tool message = %+v", m)
	}
	if len(got.Tools) != 1 || got.Tools[0].Type != "function" || got.Tools[0].Function.Name != "create_task" ||
		string(got.Tools[0].Function.Parameters) != string(schema) {
		t.Errorf("tools = %+v", got.Tools)
	}
}

func TestOpenAIAssemblesToolCalls(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		chunks []string
		want   []agent.ToolCall
	}{{
		name: "one call with split arguments",
		chunks: []string{roleChunk(), toolChunk(0, "call_a", "list_tasks", ""),
			toolChunk(0, "", "", `{"sta`), toolChunk(0, "", "", `tus":"op`), toolChunk(0, "", "", `en"}`), finishChunk("tool_calls")},
		want: []agent.ToolCall{{ID: "call_a", Name: "list_tasks", Arguments: `{"status":"open"}`}},
	}, {
		name: "two parallel calls interleaved",
		chunks: []string{toolChunk(0, "call_a", "create_task", ""), toolChunk(0, "", "", `{"title":`),
			toolChunk(1, "call_b", "create_task", ""), toolChunk(1, "", "", `{"title":"eggs"}`),
			toolChunk(0, "", "", `"milk"}`), finishChunk("tool_calls")},
		want: []agent.ToolCall{
			{ID: "call_a", Name: "create_task", Arguments: `{"title":"milk"}`},
			{ID: "call_b", Name: "create_task", Arguments: `{"title":"eggs"}`},
		},
	}, {
		name: "server omits index and repeats the id",
		chunks: []string{toolChunk(-1, "call_a", "list_tasks", `{"status":`), toolChunk(-1, "call_b", "get_task", `{"id":`),
			toolChunk(-1, "call_a", "", `"done"}`), toolChunk(-1, "call_b", "", `3}`)},
		want: []agent.ToolCall{
			{ID: "call_a", Name: "list_tasks", Arguments: `{"status":"done"}`},
			{ID: "call_b", Name: "get_task", Arguments: `{"id":3}`},
		},
	}, {
		name: "server omits index and the id after the first fragment",
		chunks: []string{toolChunk(-1, "call_a", "list_tasks", `{"status":`), toolChunk(-1, "", "", `"done"}`),
			toolChunk(-1, "call_b", "get_task", `{"id":`), toolChunk(-1, "", "", `3}`)},
		want: []agent.ToolCall{
			{ID: "call_a", Name: "list_tasks", Arguments: `{"status":"done"}`},
			{ID: "call_b", Name: "get_task", Arguments: `{"id":3}`},
		},
	}, {
		name:   "server gives parallel calls the same index",
		chunks: []string{toolChunk(0, "call_a", "get_task", `{"id":1}`), toolChunk(0, "call_b", "get_task", `{"id":2}`)},
		want: []agent.ToolCall{
			{ID: "call_a", Name: "get_task", Arguments: `{"id":1}`},
			{ID: "call_b", Name: "get_task", Arguments: `{"id":2}`},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeOpenAI(t, sse(append(tt.chunks, usageChunk(5, 5))...))
			resp, err := newTestModel(t, f).Stream(context.Background(), agent.Request{}, nil)
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			if !reflect.DeepEqual(resp.ToolCalls, tt.want) {
				t.Errorf("ToolCalls = %+v, want %+v", resp.ToolCalls, tt.want)
			}
		})
	}
}

func TestOpenAIGivesIDsToCallsWithout(t *testing.T) {
	t.Parallel()
	f := newFakeOpenAI(t, sse(toolChunk(0, "", "list_tasks", "{}"), toolChunk(1, "", "get_task", `{"id":1}`)))
	resp, err := newTestModel(t, f).Stream(context.Background(), agent.Request{}, nil)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if len(resp.ToolCalls) != 2 {
		t.Fatalf("ToolCalls = %+v, want 2", resp.ToolCalls)
	}
	a, b := resp.ToolCalls[0].ID, resp.ToolCalls[1].ID
	if !strings.HasPrefix(a, "call_") || !strings.HasPrefix(b, "call_") || a == b {
		t.Errorf("ids = %q, %q, want two distinct call_ ids", a, b)
	}
}

func TestOpenAIStreamHeldOpenAfterDone(t *testing.T) {
	t.Parallel()
	f := newFakeOpenAI(t, func(w http.ResponseWriter, r *http.Request) {
		sse(textChunk("ok"))(w, r)
		<-r.Context().Done()
	})
	resp, err := newTestModel(t, f).Stream(context.Background(), agent.Request{}, nil)
	if err != nil || resp.Text != "ok" {
		t.Fatalf("Stream = %q, %v; [DONE] ends the answer even if the body does not end", resp.Text, err)
	}
}

func TestOpenAIStreamWithoutDoneIsMalformed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		reply http.HandlerFunc
	}{
		{"body ends cleanly", sseNoDone(textChunk("Hel"), textChunk("lo"), finishChunk("stop"), usageChunk(1, 1))},
		{"connection cut", sseCut(textChunk("Hel"), textChunk("lo"))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeOpenAI(t, tt.reply)
			onText, got := collect()
			_, err := newTestModel(t, f).Stream(context.Background(), agent.Request{}, onText)
			mustKind(t, err, agent.ErrModelStream)
			if len(*got) != 2 {
				t.Errorf("onText got %q before the cut, want both pieces", *got)
			}
			if n := f.requests(); n != 1 {
				t.Errorf("requests = %d, want 1: text had reached the caller", n)
			}
		})
	}
}

func TestOpenAIRetriesACutBeforeAnyText(t *testing.T) {
	t.Parallel()
	f := newFakeOpenAI(t, sseCut(roleChunk()), sse(textChunk("ok")))
	resp, err := newTestModel(t, f).Stream(context.Background(), agent.Request{}, nil)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if resp.Text != "ok" || f.requests() != 2 {
		t.Errorf("Text %q after %d requests, want \"ok\" after 2", resp.Text, f.requests())
	}
}

func TestOpenAIRefusalsAreNotRetried(t *testing.T) {
	t.Parallel()
	quota := `{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`
	tests := []struct {
		name   string
		status int
		body   string
		want   error
	}{
		{"bad key", 401, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`, agent.ErrModelAuth},
		{"forbidden", 403, `{"error":{"message":"Country not supported","type":"request_forbidden"}}`, agent.ErrModelAuth},
		{"quota", 429, quota, agent.ErrModelQuota},
		{"payment required", 402, `{"error":{"message":"Insufficient credits"}}`, agent.ErrModelQuota},
		{"bad request", 400, `{"error":{"message":"Invalid schema","type":"invalid_request_error"}}`, agent.ErrModelRequest},
		{"unknown model", 404, `{"error":{"message":"The model does not exist","type":"invalid_request_error","code":"model_not_found"}}`, agent.ErrModelRequest},
		{"unprocessable, not JSON", 422, `unprocessable`, agent.ErrModelRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeOpenAI(t, fail(tt.status, tt.body))
			_, err := newTestModel(t, f).Stream(context.Background(), agent.Request{}, nil)
			if me := mustKind(t, err, tt.want); me.Status != tt.status {
				t.Errorf("Status = %d, want %d", me.Status, tt.status)
			}
			if n := f.requests(); n != 1 {
				t.Errorf("requests = %d, want 1", n)
			}
		})
	}
}

func TestOpenAIRetriesRateLimitsAndOutages(t *testing.T) {
	t.Parallel()
	limited := fail(429, `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`)
	down := fail(500, `{"error":{"message":"The server had an error","type":"server_error"}}`)

	t.Run("429 then success", func(t *testing.T) {
		t.Parallel()
		f := newFakeOpenAI(t, limited, sse(textChunk("ok")))
		resp, err := newTestModel(t, f).Stream(context.Background(), agent.Request{}, nil)
		if err != nil || resp.Text != "ok" {
			t.Fatalf("Stream = %q, %v", resp.Text, err)
		}
		if n := f.requests(); n != 2 {
			t.Errorf("requests = %d, want 2", n)
		}
	})
	t.Run("500 every time", func(t *testing.T) {
		t.Parallel()
		f := newFakeOpenAI(t, down)
		_, err := newTestModel(t, f, func(c *Config) { c.MaxRetries = 2 }).Stream(context.Background(), agent.Request{}, nil)
		mustKind(t, err, agent.ErrModelServer)
		if n := f.requests(); n != 3 {
			t.Errorf("requests = %d, want 3: the first and 2 retries", n)
		}
	})
	t.Run("retries disabled", func(t *testing.T) {
		t.Parallel()
		f := newFakeOpenAI(t, down)
		_, err := newTestModel(t, f, func(c *Config) { c.MaxRetries = -1 }).Stream(context.Background(), agent.Request{}, nil)
		mustKind(t, err, agent.ErrModelServer)
		if n := f.requests(); n != 1 {
			t.Errorf("requests = %d, want 1", n)
		}
	})
	t.Run("Retry-After past the deadline", func(t *testing.T) {
		t.Parallel()
		f := newFakeOpenAI(t, fail(429, `{"error":{"message":"Rate limit reached"}}`, "Retry-After", "30"), sse(textChunk("late")))
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := newTestModel(t, f).Stream(ctx, agent.Request{}, nil)
		mustKind(t, err, agent.ErrModelRateLimited)
		if n := f.requests(); n != 1 {
			t.Errorf("requests = %d, want 1: waiting 30s would pass the deadline", n)
		}
	})
	t.Run("server unreachable", func(t *testing.T) {
		t.Parallel()
		f := newFakeOpenAI(t, down)
		f.Close()
		_, err := newTestModel(t, f).Stream(context.Background(), agent.Request{}, nil)
		mustKind(t, err, agent.ErrModelServer)
	})
}

func TestOpenAIErrorEventMidStream(t *testing.T) {
	t.Parallel()
	f := newFakeOpenAI(t, sse(textChunk("Hel"), `{"error":{"message":"The server is overloaded","type":"server_error"}}`))
	_, err := newTestModel(t, f).Stream(context.Background(), agent.Request{}, nil)
	mustKind(t, err, agent.ErrModelServer)
	if n := f.requests(); n != 1 {
		t.Errorf("requests = %d, want 1", n)
	}
}

func TestOpenAIIdleStreamTimesOut(t *testing.T) {
	t.Parallel()
	// Whether the chunk beats the short timer or not, the server then
	// hangs for good: the answer is a timeout either way.
	f := newFakeOpenAI(t, sseHang(textChunk("Hel")))
	_, err := newTestModel(t, f, func(c *Config) { c.IdleTimeout = 50 * time.Millisecond }).
		Stream(context.Background(), agent.Request{}, nil)
	mustKind(t, err, agent.ErrModelTimeout)
}

func TestOpenAICallerDeadlineIsATimeout(t *testing.T) {
	t.Parallel()
	f := newFakeOpenAI(t, sseHang(textChunk("Hel")))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := newTestModel(t, f).Stream(ctx, agent.Request{}, nil)
	mustKind(t, err, agent.ErrModelTimeout)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error = %v, want it to wrap context.DeadlineExceeded", err)
	}
}

func TestOpenAICancelMidStream(t *testing.T) {
	t.Parallel()
	f := newFakeOpenAI(t, sseHang(textChunk("Hel")))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	onText := func(string) { cancel() }

	_, err := newTestModel(t, f).Stream(ctx, agent.Request{}, onText)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
	var me *agent.ModelError
	if errors.As(err, &me) {
		t.Errorf("error = %v is a *agent.ModelError; a caller's cancel is not a model failure", err)
	}
}

// A call cut short before its usage came consumed tokens all the same: it
// reports an estimate of what it sent and produced, so that a client that
// leaves early does not dodge the daily budget. One the server refused, or
// one that reported its usage before the cut, reports what it knows.
func TestOpenAICallCutShortReportsItsUsage(t *testing.T) {
	t.Parallel()
	req := agent.Request{System: strings.Repeat("s", 400), Messages: []agent.Message{{Role: agent.RoleUser, Content: strings.Repeat("m", 400)}}}
	leave := func() (context.Context, func(string)) {
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		return ctx, func(string) { cancel() }
	}
	for _, tc := range []struct {
		name  string
		reply http.HandlerFunc
		ctx   func() (context.Context, func(string))
		want  agent.Usage
	}{
		{"the client leaves mid-stream", sseHang(textChunk(strings.Repeat("r", 40))), leave, agent.Usage{PromptTokens: 200, CompletionTokens: 10, TotalTokens: 210}},
		{"the stream breaks", sseCut(textChunk(strings.Repeat("r", 40))), nil, agent.Usage{PromptTokens: 200, CompletionTokens: 10, TotalTokens: 210}},
		{"reported before the cut", sseCut(textChunk("Hel"), usageChunk(7, 3)), nil, agent.Usage{PromptTokens: 7, CompletionTokens: 3, TotalTokens: 10}},
		{"refused", fail(http.StatusBadRequest, `{"error":{"message":"bad","type":"invalid_request_error"}}`), nil, agent.Usage{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, onText := context.Background(), func(string) {}
			if tc.ctx != nil {
				ctx, onText = tc.ctx()
			}
			resp, err := newTestModel(t, newFakeOpenAI(t, tc.reply)).Stream(ctx, req, onText)
			if err == nil || resp.Usage != tc.want {
				t.Fatalf("Stream = usage %+v, %v; want usage %+v and an error", resp.Usage, err, tc.want)
			}
		})
	}
}

func TestOpenAIDefaults(t *testing.T) {
	t.Parallel()
	m := New(Config{}, nil)
	if m.Name() != "gpt-4o-mini" {
		t.Errorf("Name = %q, want gpt-4o-mini", m.Name())
	}
	want := Config{Model: "gpt-4o-mini", MaxRetries: 3, RetryBaseDelay: 250 * time.Millisecond, IdleTimeout: 60 * time.Second}
	if m.cfg != want {
		t.Errorf("cfg = %+v, want %+v", m.cfg, want)
	}
}

// A line of the stream is held whole while it is read, so one may not
// grow without end: a 3 MiB chunk (a whole long reply at once) is read,
// a 5 MiB one fails the stream.
func TestOpenAILongLines(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 3<<20)
	f := newFakeOpenAI(t, sse(textChunk(long)))
	resp, err := newTestModel(t, f).Stream(context.Background(), agent.Request{}, nil)
	if err != nil || resp.Text != long {
		t.Fatalf("a 3 MiB chunk: %d bytes of text, %v; want all of it", len(resp.Text), err)
	}
	f = newFakeOpenAI(t, sse(textChunk("Hel"), textChunk(strings.Repeat("a", 5<<20))))
	_, err = newTestModel(t, f).Stream(context.Background(), agent.Request{}, nil)
	mustKind(t, err, agent.ErrModelStream)
}

// A chunk nested millions deep, which would overflow the decoder's stack
// and end the process, fails the stream as any malformed chunk does. (The
// brackets need not close: the decoder recurses as it opens them. The
// line stays under maxLine.)
func TestOpenAIChunkNestedTooDeep(t *testing.T) {
	t.Parallel()
	deep := `{"x":` + strings.Repeat("[", 3<<20)
	f := newFakeOpenAI(t, sse(textChunk("Hel"), deep))
	_, err := newTestModel(t, f).Stream(context.Background(), agent.Request{}, nil)
	mustKind(t, err, agent.ErrModelStream)
}

// A chunk that is not the JSON of a chunk fails the stream, after the text
// that came before it, and is not retried: text has reached the caller.
func TestOpenAIMalformedChunk(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{`{"choices":`, `{"choices":"none"}`, `{"choices":[{"delta":{"content":7}}]}`, `not json`} {
		f := newFakeOpenAI(t, sse(textChunk("Hel"), bad, textChunk("lo")))
		onText, got := collect()
		_, err := newTestModel(t, f).Stream(context.Background(), agent.Request{}, onText)
		mustKind(t, err, agent.ErrModelStream)
		if !reflect.DeepEqual(*got, []string{"Hel"}) || f.requests() != 1 {
			t.Errorf("%s: text %q after %d requests; want only what came before it, once", bad, *got, f.requests())
		}
	}
}
