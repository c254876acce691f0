// Package openaitest is an OpenAI-compatible chat-completions server for
// tests and load runs: it speaks the real wire format (SSE chunks, a usage
// chunk with empty choices, [DONE]) and answers from a script.
package openaitest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/agent/openai"
)

// Step answers one model call: text (streamed word by word), tool calls,
// an HTTP error status, or a hang until the client goes away (after the
// text, if any). Wait, when set, holds the answer until it is closed;
// Delay holds it for a while.
type Step struct {
	Text   string
	Calls  []agent.ToolCall
	Status int
	Hang   bool
	Wait   chan struct{}
	Delay  time.Duration
	// Pause, when set, holds the answer after Text until it gets a value
	// or closes (or the client leaves), and Rest follows it: a reply that
	// stops half-way for as long as a test needs.
	Pause chan struct{}
	Rest  string
}

// Server is the fake. Respond picks the step for each request; by default
// the n-th request gets the n-th step of the script, the last one repeating.
type Server struct {
	*httptest.Server
	Respond func(req map[string]any, n int) Step

	mu       sync.Mutex
	requests []map[string]any
}

// New starts a fake answering from script. Close it when done.
func New(script ...Step) *Server {
	s := &Server{}
	s.SetScript(script...)
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// NewTLS starts a fake that speaks HTTPS and HTTP/2, as OpenAI's API does,
// so many streams share one connection. Its certificate is s.Certificate().
func NewTLS(script ...Step) *Server {
	s := &Server{}
	s.SetScript(script...)
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.EnableHTTP2 = true
	s.StartTLS()
	return s
}

// SetScript replaces the script and forgets the requests seen so far.
func (s *Server) SetScript(script ...Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = nil
	s.Respond = func(_ map[string]any, n int) Step { return script[min(n, len(script)-1)] }
}

// ToolThenAnswer is a Respond function for load runs: a request whose last
// message is a user message gets call; one that follows tool results gets
// answer. Every conversation therefore makes exactly one tool call a turn.
func ToolThenAnswer(call agent.ToolCall, answer string) func(map[string]any, int) Step {
	return func(req map[string]any, _ int) Step {
		msgs, _ := req["messages"].([]any)
		if len(msgs) > 0 {
			if last, _ := msgs[len(msgs)-1].(map[string]any); last["role"] == "tool" {
				return Step{Text: answer}
			}
		}
		return Step{Calls: []agent.ToolCall{call}}
	}
}

// Model returns taskchat's OpenAI provider pointed at the fake.
func (s *Server) Model() agent.Model {
	return openai.New(openai.Config{
		APIKey: "sk-test", BaseURL: s.URL + "/v1", Model: "fake-model",
		MaxRetries: 1, RetryBaseDelay: time.Millisecond,
	}, s.Client())
}

// Requests returns how many requests the fake got.
func (s *Server) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

// Request returns the i-th request body, decoded.
func (s *Server) Request(i int) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[i]
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	var req map[string]any
	_ = json.NewDecoder(r.Body).Decode(&req)
	s.mu.Lock()
	n := len(s.requests)
	s.requests = append(s.requests, req)
	respond := s.Respond
	s.mu.Unlock()
	step := respond(req, n)
	if !wait(r, step) {
		return
	}
	if step.Status != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(step.Status)
		fmt.Fprint(w, `{"error":{"message":"fake failure","type":"server_error","code":null}}`)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	rc := http.NewResponseController(w)
	chunk := func(delta any) {
		b, _ := json.Marshal(delta)
		fmt.Fprintf(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"fake-model","choices":[{"index":0,"delta":%s,"finish_reason":null}]}`+"\n\n", b)
		_ = rc.Flush()
	}
	words := func(text string) {
		for _, word := range strings.SplitAfter(text, " ") {
			if word != "" {
				chunk(map[string]string{"content": word})
			}
		}
	}
	words(step.Text)
	if step.Pause != nil {
		select {
		case <-step.Pause:
		case <-r.Context().Done():
			return
		}
		words(step.Rest)
	}
	if step.Hang {
		<-r.Context().Done()
		return
	}
	for i, c := range step.Calls {
		chunk(map[string]any{"tool_calls": []map[string]any{{"index": i, "id": c.ID, "type": "function",
			"function": map[string]string{"name": c.Name, "arguments": c.Arguments}}}})
	}
	fmt.Fprint(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"fake-model","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`+"\n\n")
	fmt.Fprint(w, "data: [DONE]\n\n")
	_ = rc.Flush()
}

// wait holds a step until its Wait channel closes or its Delay passes; it
// reports false when the client left meanwhile.
func wait(r *http.Request, step Step) bool {
	var timer <-chan time.Time
	if step.Delay > 0 {
		timer = time.After(step.Delay)
	}
	if step.Wait == nil && timer == nil {
		return true
	}
	select {
	case <-step.Wait:
	case <-timer:
	case <-r.Context().Done():
		return false
	}
	return true
}
