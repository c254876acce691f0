package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/taskchat/taskchat/internal/agent"
)

// goOpenAIBody is the body go-openai itself writes for req: the reference
// our encoder must match.
func goOpenAIBody(tb testing.TB, model string, req agent.Request) []byte {
	tb.Helper()
	var msgs []goopenai.ChatCompletionMessage
	if req.System != "" {
		msgs = append(msgs, goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleSystem, Content: req.System})
	}
	for _, m := range req.Messages {
		var calls []goopenai.ToolCall
		for _, c := range m.ToolCalls {
			calls = append(calls, goopenai.ToolCall{ID: c.ID, Type: goopenai.ToolTypeFunction,
				Function: goopenai.FunctionCall{Name: c.Name, Arguments: c.Arguments}})
		}
		msgs = append(msgs, goopenai.ChatCompletionMessage{Role: string(m.Role), Content: m.Content, ToolCalls: calls, ToolCallID: m.ToolCallID})
	}
	b, err := json.Marshal(goopenai.ChatCompletionRequest{
		Model: model, Messages: msgs, Tools: chatTools(req.Tools), Stream: true,
		StreamOptions: &goopenai.StreamOptions{IncludeUsage: true},
	})
	if err != nil {
		tb.Fatalf("go-openai marshal: %v", err)
	}
	return b
}

// mustEncode returns our encoder's body for req, read as the transport reads it.
func mustEncode(tb testing.TB, e *encoder, req agent.Request) []byte {
	tb.Helper()
	body, err := e.body(req)
	if err != nil {
		tb.Fatalf("encode: %v", err)
	}
	defer body.Close()
	b, err := io.ReadAll(body)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// sameJSON reports whether a and b hold the same JSON value, and fails if
// either is not JSON.
func sameJSON(tb testing.TB, a, b []byte) bool {
	tb.Helper()
	decode := func(p []byte) any {
		d := json.NewDecoder(bytes.NewReader(p))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			tb.Fatalf("not JSON: %v\n%s", err, p)
		}
		return v
	}
	return reflect.DeepEqual(decode(a), decode(b))
}

var testTools = []agent.ToolDef{
	{Name: "add_task", Description: "Add a task.", Parameters: json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"}},"required":["title"]}`)},
	{Name: "list_tasks", Description: "List tasks."}, // no schema: an empty object is declared
}

func TestRequestBodyMatchesGoOpenAI(t *testing.T) {
	t.Parallel()
	tests := map[string]agent.Request{
		"a first message": {System: "You manage tasks.", Messages: []agent.Message{{Role: agent.RoleUser, Content: "add milk"}}, Tools: testTools},
		"a round with tools": {System: "You manage tasks.", Tools: testTools, Messages: []agent.Message{
			{Role: agent.RoleUser, Content: "add milk and list"},
			{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{
				{ID: "call_1", Name: "add_task", Arguments: `{"title":"milk"}`},
				{ID: "call_2", Name: "list_tasks", Arguments: `{}`},
			}},
			{Role: agent.RoleTool, ToolCallID: "call_1", Content: `{"task_id":1,"status":"created","title":"milk"}`},
			{Role: agent.RoleTool, ToolCallID: "call_2", Content: `{"tasks":[]}`},
			{Role: agent.RoleAssistant, Content: "Added <milk> & listed \"all\"."},
		}},
		"no system prompt, no tools": {Messages: []agent.Message{{Role: agent.RoleUser, Content: "hi"}}},
		"text that needs escaping": {System: "line\nbreak\ttab\r\x00\x1f \u2028\u2029 \\ \"", Messages: []agent.Message{
			{Role: agent.RoleUser, Content: "bad utf-8 \xff\xfe, emoji 🎉, é"},
			{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{Name: "add_task", Arguments: "{\"title\":\"a\\u0000b\"}"}}},
		}},
		"empty contents and calls": {Messages: []agent.Message{
			{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "c"}}},
			{Role: agent.RoleTool, ToolCallID: "c"},
		}},
	}
	for name, req := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEncoder("gpt-test")
			want := goOpenAIBody(t, "gpt-test", req)
			for range 2 { // the second time from the caches
				if got := mustEncode(t, e, req); !sameJSON(t, got, want) {
					t.Fatalf("body differs from go-openai's\n got %s\nwant %s", got, want)
				}
			}
		})
	}
}

func TestRequestBodyFollowsChangedDefinitions(t *testing.T) {
	t.Parallel()
	e := newEncoder("m")
	first := agent.Request{System: "one", Tools: testTools[:1], Messages: []agent.Message{{Role: agent.RoleUser, Content: "x"}}}
	second := agent.Request{System: "two", Tools: testTools, Messages: first.Messages}
	for _, req := range []agent.Request{first, second, first} {
		if got, want := mustEncode(t, e, req), goOpenAIBody(t, "m", req); !sameJSON(t, got, want) {
			t.Fatalf("body differs from go-openai's\n got %s\nwant %s", got, want)
		}
	}
}

func FuzzRequestBody(f *testing.F) {
	f.Add("You manage tasks.", "add milk", "call_1", `{"title":"milk"}`, "done")
	f.Add("\u2028", "\xff", "", "", "")
	f.Add("<&>", "\x00\"\\", "id\n", "{\"a\":\"\\ud800\"}", "\t")
	f.Fuzz(func(t *testing.T, system, user, callID, args, reply string) {
		req := agent.Request{System: system, Tools: testTools, Messages: []agent.Message{
			{Role: agent.RoleUser, Content: user},
			{Role: agent.RoleAssistant, Content: reply, ToolCalls: []agent.ToolCall{{ID: callID, Name: "add_task", Arguments: args}}},
			{Role: agent.RoleTool, ToolCallID: callID, Content: args},
		}}
		if got, want := mustEncode(t, newEncoder(user), req), goOpenAIBody(t, user, req); !sameJSON(t, got, want) {
			t.Fatalf("body differs from go-openai's\n got %s\nwant %s", got, want)
		}
	})
}

// BenchmarkRequestBody measures encoding a request of a conversation with
// history (the figure go-openai's own encoding is compared with).
func BenchmarkRequestBody(b *testing.B) {
	req := benchRequest()
	b.Run("ours", func(b *testing.B) {
		e := newEncoder("gpt-test")
		b.ReportAllocs()
		for b.Loop() {
			body, _ := e.body(req)
			_ = body.Close()
		}
	})
	b.Run("go-openai", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			goOpenAIBody(b, "gpt-test", req)
		}
	})
}

// benchRequest is a load-test turn's second model call at its tenth turn:
// the system prompt, nine earlier turns with one tool call each, and this one.
func benchRequest() agent.Request {
	req := agent.Request{System: agent.DefaultPrompt().Render("user-1", "gpt-test", time.Now()), Tools: testTools}
	for range 10 {
		req.Messages = append(req.Messages,
			agent.Message{Role: agent.RoleUser, Content: "Add a task to keep the load going"},
			agent.Message{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "call_1", Name: "add_task", Arguments: `{"title":"Load test task"}`}}},
			agent.Message{Role: agent.RoleTool, ToolCallID: "call_1", Content: `{"task_id":12,"status":"created","title":"Load test task"}`},
			agent.Message{Role: agent.RoleAssistant, Content: "Added the task."})
	}
	return req
}

// TestRequestBodiesOfEverySizeArriveWhole sends bodies on either side of the
// transport's 1 KiB write buffer, of io.Copy's 32 KiB, and of the largest
// pooled buffer, through the process's HTTP client, whose connections
// write a pooled body in one piece (bodyConn). Each arrives as encoded.
func TestRequestBodiesOfEverySizeArriveWhole(t *testing.T) {
	t.Parallel()
	for _, size := range []int{10, 900, 1100, 5 << 10, 40 << 10, 300 << 10} {
		f := newFakeOpenAI(t, sse(textChunk("ok")))
		m := newTestModel(t, f)
		req := agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Content: strings.Repeat("é", size/2)}}}
		if _, err := m.Stream(context.Background(), req, nil); err != nil {
			t.Fatalf("%d bytes: %v", size, err)
		}
		want, err := m.enc.body(req)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.rawBody(0); !bytes.Equal(got, want.buf) {
			t.Fatalf("%d bytes: the server got %d bytes, want the %d encoded", size, len(got), len(want.buf))
		}
		_ = want.Close()
	}
}

// TestModelConnectionsWriteBodiesWithoutACopy holds bodyConn to its
// saving: without it, net/http copies every request body through a buffer
// allocated for the purpose, as large as the body up to 32 KiB. Calls with
// a 40 KiB body go through the process's client and through the same
// client on plain connections, and the heap profile, recording every
// allocation, counts the bytes allocated where the transport hands the
// body to its connection (a count of the whole process's allocations is
// too noisy: the race detector's sync.Pool drops a quarter of what it is
// given). It runs alone, not in parallel: MemProfileRate is the process's,
// and the other tests' requests pass through the same function.
func TestModelConnectionsWriteBodiesWithoutACopy(t *testing.T) {
	defer func(rate int) { runtime.MemProfileRate = rate }(runtime.MemProfileRate)
	runtime.MemProfileRate = 1
	const size, calls = 40 << 10, 10
	reply := sse(textChunk("ok"))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		reply(w, r)
	}))
	defer srv.Close()
	req := agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Content: strings.Repeat("x", size)}}}
	perCall := func(hc *http.Client) int64 {
		t.Helper()
		defer hc.CloseIdleConnections()
		m := New(Config{BaseURL: srv.URL + "/v1"}, hc)
		stream := func() {
			if _, err := m.Stream(context.Background(), req, nil); err != nil {
				t.Fatal(err)
			}
		}
		stream() // dials
		const handOver = "net/http.persistConnWriter.ReadFrom"
		before := allocatedUnder(handOver)
		for range calls {
			stream()
		}
		return (allocatedUnder(handOver) - before) / calls
	}
	plain := NewHTTPClient()
	tr := plain.Transport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{}).DialContext
	plain.Transport = tr
	if n := perCall(plain); n < 32<<10 {
		t.Fatalf("on plain connections, writing a %d-byte body allocates %d bytes, want a copy of it: the test no longer sees one", size, n)
	}
	if n := perCall(NewHTTPClient()); n > 1<<10 { // sync.Pool growing, as the body goes back to it

		t.Fatalf("writing a %d-byte body allocates %d bytes: it is copied on its way to the connection", size, n)
	}
}

// allocatedUnder returns the bytes the heap profile has seen allocated by
// fn or what it called.
func allocatedUnder(fn string) int64 {
	// A profile is published two collections after its allocations.
	runtime.GC()
	runtime.GC()
	var records []runtime.MemProfileRecord
	n, ok := runtime.MemProfile(nil, true)
	for !ok {
		records = make([]runtime.MemProfileRecord, n+64)
		n, ok = runtime.MemProfile(records, true)
	}
	records = records[:n]
	var total int64
	for _, r := range records {
		frames := runtime.CallersFrames(r.Stack())
		for {
			f, more := frames.Next()
			if f.Function == fn {
				total += r.AllocBytes
				break
			}
			if !more {
				break
			}
		}
	}
	return total
}

// BenchmarkStreamReply measures reading a streamed reply of 200 chunks, a
// token or so each, as OpenAI sends them, from a local server: the client's
// work per chunk, with the server's in the same process.
func BenchmarkStreamReply(b *testing.B) {
	chunks := []string{roleChunk()}
	for i := range 200 {
		chunks = append(chunks, textChunk(fmt.Sprintf(" word%d", i)))
	}
	chunks = append(chunks, finishChunk("stop"), usageChunk(500, 200))
	f := newFakeOpenAI(b, sse(chunks...))
	m := newTestModel(b, f)
	req := agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Content: "Tell me a story"}}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		resp, err := m.Stream(ctx, req, nil)
		if err != nil || resp.Usage.CompletionTokens != 200 {
			b.Fatal(resp, err)
		}
	}
}

// FuzzDecodeChunk holds decodeChunk to encoding/json's reading of a chunk:
// the same inputs fail, and the others give the same values.
func FuzzDecodeChunk(f *testing.F) {
	for _, c := range []string{
		roleChunk(), textChunk("Hel"), textChunk("é \u2028 \"quoted\" \\ done"), finishChunk("stop"), usageChunk(12, 4),
		toolChunk(0, "call_1", "add_task", `{"title":`), toolChunk(0, "", "", `"Buy milk"}`),
		`{"error":{"message":"overloaded"}}`, "{\"choices\":[{\"delta\":{\"content\":\"a\xffb\\ud800\"}}]}",
		`{"choices":[{"delta":{"Content":"x","content":"y"}}]}`, `{"choices":[{"index":1.5}]}`, `{"choices":[]} {}`, `null`, ``,
		// As deep as encoding/json allows, in a field a chunk skips; and one deeper.
		`{"x":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`,
		`{"x":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`,
		`{"x":"` + strings.Repeat("[", 20000) + `","choices":[]}`,
	} {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var got, want streamChunk
		// decodeChunk reads a copy that is overwritten after: nothing it
		// returns may point into the line it was given.
		line := bytes.Clone(raw)
		errGot := decodeChunk(line, &got)
		for i := range line {
			line[i] = 'X'
		}
		errWant := json.Unmarshal(raw, &want)
		if (errGot == nil) != (errWant == nil) {
			t.Fatalf("%q: decodeChunk says %v, encoding/json %v", raw, errGot, errWant)
		}
		if errGot == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\n decodeChunk %+v\n encoding/json %+v", raw, got, want)
		}
	})
}
