package openai

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	goopenai "github.com/sashabaranov/go-openai"
	segjson "github.com/segmentio/encoding/json"

	"github.com/taskchat/taskchat/internal/agent"
)

// This file reads one attempt's stream: text is passed on as it comes,
// tool calls are merged from their fragments, and the "data: [DONE]" line
// tells a finished answer from one cut short.

// errNoDone is why a stream that stopped without "data: [DONE]" is
// malformed: the answer may have been cut anywhere.
var errNoDone = errors.New("stream ended before data: [DONE]")

// attempt is one request of a Stream call and what its stream delivered.
// It is also the HTTP doer go-openai sends through, to keep what go-openai
// drops: a refusal's Retry-After, and whether the stream ended with [DONE].
type attempt struct {
	hc         *http.Client
	onText     func(string)
	retryAfter time.Duration
	body       *sseBody
	streaming  bool // the server accepted the request and began its answer
	delivered  bool // text or a tool call reached the caller
	text       strings.Builder
	calls      toolCallMerger
	usage      agent.Usage
}

// Do sends r through the shared client and wraps the response body. The
// request body is let go once written, so a long stream does not keep its
// request (system prompt, tools, history) in memory; a failed send is
// retried by Stream, not replayed by the transport.
func (a *attempt) Do(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		r.Body, r.GetBody = &releasingBody{rc: r.Body}, nil
	}
	resp, err := a.hc.Do(r)
	if err != nil {
		return nil, err
	}
	a.retryAfter = parseRetryAfter(resp.Header.Get("Retry-After"))
	a.body = &sseBody{ReadCloser: resp.Body}
	resp.Body = a.body
	return resp, nil
}

// closeBody closes the response body, if a response came.
func (a *attempt) closeBody() {
	if a.body != nil {
		_ = a.body.Close()
	}
}

// streamChunk is what the answer is made of in a chat.completion.chunk:
// go-openai's ChatCompletionStreamResponse holds every field the API
// sends, each decoded for every chunk, and a model sends a chunk for every
// token or so. Other fields are skipped as the chunk is decoded.
type streamChunk struct {
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content   string              `json:"content"`
			ToolCalls []goopenai.ToolCall `json:"tool_calls"`
		} `json:"delta"`
	} `json:"choices"`
	Usage *goopenai.Usage `json:"usage"`
}

// decodeChunk decodes one chunk with segmentio's decoder, which the MCP
// go-sdk brings already: a quarter of encoding/json's time and allocations
// for a chunk (0.6 against 2.4 µs), and a model sends hundreds a reply. It
// takes the same inputs and gives the same values (FuzzDecodeChunk). The
// decoder recurses without limit, and a stack that overflows ends the
// process, not the stream: a chunk nested deeper than encoding/json allows
// is refused first, as encoding/json refuses it.
func decodeChunk(raw []byte, chunk *streamChunk) error {
	if tooDeep(raw) {
		return errChunkTooDeep
	}
	return segjson.Unmarshal(raw, chunk)
}

// maxChunkDepth is encoding/json's limit on nesting.
const maxChunkDepth = 10000

var errChunkTooDeep = fmt.Errorf("a stream chunk nests deeper than %d", maxChunkDepth)

// tooDeep reports whether raw's objects and arrays, outside strings, nest
// deeper than maxChunkDepth, in one pass over it.
func tooDeep(raw []byte) bool {
	depth, inString, escaped := 0, false, false
	for _, b := range raw {
		switch {
		case inString && escaped:
			escaped = false
		case inString && b == '\\':
			escaped = true
		case inString:
			inString = b != '"'
		case b == '"':
			inString = true
		case b == '{' || b == '[':
			if depth++; depth > maxChunkDepth {
				return true
			}
		case b == '}' || b == ']':
			depth--
		}
	}
	return false
}

// add folds one chunk into the answer, passing text on as it comes. The
// usage chunk has no choices; other chunks carry a null usage.
func (a *attempt) add(chunk streamChunk) {
	if u := chunk.Usage; u != nil {
		a.usage = agent.Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
	}
	for _, c := range chunk.Choices {
		if c.Index != 0 {
			continue
		}
		if c.Delta.Content != "" {
			a.delivered = true
			a.text.WriteString(c.Delta.Content)
			a.onText(c.Delta.Content)
		}
		for _, d := range c.Delta.ToolCalls {
			a.delivered = true
			a.calls.add(d)
		}
	}
}

// finish returns the answer once go-openai reports the end of the stream,
// which it does with io.EOF both after [DONE] and when the body just ends.
func (a *attempt) finish() (agent.Response, error) {
	if a.body == nil || !a.body.done {
		return agent.Response{}, &agent.ModelError{Kind: agent.ErrModelStream, Err: errNoDone}
	}
	a.body.drain()
	return agent.Response{Text: a.text.String(), ToolCalls: a.calls.complete(), Usage: a.usage}, nil
}

// spent is what a failed attempt consumed: the usage the server reported,
// or, when the stream was cut before it came (the client left, the stream
// broke), an estimate of the request and of what it produced, since the
// server has spent those tokens all the same: a turn cut short must not be
// free, or leaving early would dodge the daily budget. An attempt the
// server never began to answer consumed nothing we can know.
func (a *attempt) spent(req agent.Request) agent.Usage {
	switch {
	case a.usage != (agent.Usage{}):
		return a.usage
	case !a.streaming:
		return agent.Usage{}
	}
	return agent.EstimateUsage(req, agent.Response{Text: a.text.String(), ToolCalls: a.calls.complete()})
}

// toolCallMerger assembles tool calls from their streamed fragments. A
// fragment belongs to the call with its id, else to the call with its
// index (OpenAI sends the id only once), else, when it carries neither, to
// the latest call (servers that omit the index).
type toolCallMerger struct {
	calls []agent.ToolCall
	args  []*strings.Builder // each call's arguments so far: appended, not re-concatenated
	slots map[string]int     // "index:N" and "id:X" to position in calls
}

// add appends one fragment: the id and name are set once, the arguments
// are concatenated.
func (m *toolCallMerger) add(d goopenai.ToolCall) {
	i := m.slot(d)
	c := &m.calls[i]
	if c.ID == "" {
		c.ID = d.ID
	}
	if c.Name == "" {
		c.Name = d.Function.Name
	}
	m.args[i].WriteString(d.Function.Arguments)
}

// slot finds or makes the position of d's call. A known index with a
// different id is a new call: some servers give parallel calls one index.
func (m *toolCallMerger) slot(d goopenai.ToolCall) int {
	var keys []string
	if d.ID != "" {
		keys = append(keys, "id:"+d.ID)
	}
	if d.Index != nil {
		keys = append(keys, "index:"+strconv.Itoa(*d.Index))
	}
	i, ok := m.find(keys, d.ID)
	if !ok {
		m.calls = append(m.calls, agent.ToolCall{})
		m.args = append(m.args, &strings.Builder{})
		i = len(m.calls) - 1
	}
	if m.slots == nil {
		m.slots = make(map[string]int)
	}
	for _, k := range keys {
		m.slots[k] = i
	}
	return i
}

// find looks keys up in order, the id before the index.
func (m *toolCallMerger) find(keys []string, id string) (int, bool) {
	if len(keys) == 0 {
		return len(m.calls) - 1, len(m.calls) > 0
	}
	for _, k := range keys {
		i, ok := m.slots[k]
		if ok && (id == "" || m.calls[i].ID == "" || m.calls[i].ID == id) {
			return i, true
		}
	}
	return 0, false
}

// complete returns the calls, giving an id to any the server left without.
func (m *toolCallMerger) complete() []agent.ToolCall {
	for i := range m.calls {
		m.calls[i].Arguments = m.args[i].String()
		if m.calls[i].ID == "" {
			m.calls[i].ID = "call_" + rand.Text()
		}
	}
	return m.calls
}

// maxDoneLine is longer than any line sseBody needs to recognise.
const maxDoneLine = 64

// sseBody watches a stream's bytes for the "data: [DONE]" line, because
// go-openai reports both that line and a body that merely ends as io.EOF.
type sseBody struct {
	io.ReadCloser
	line    []byte // the current line, while it is short
	lineLen int    // the current line's length so far
	done    bool
}

// maxLine bounds one line of the stream. go-openai reads each line whole
// into memory; a server that sent one without end (a broken proxy, say)
// would take all of it. No chunk comes near: a model sends a token or so
// a chunk, and even a server that sends a whole reply at once sends less.
const maxLine = 4 << 20

var errLineTooLong = fmt.Errorf("a line of the model's stream is longer than %d bytes", maxLine)

// Read reads from the body and scans what it read.
func (b *sseBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.scan(p[:n])
	if b.lineLen > maxLine {
		return 0, errLineTooLong
	}
	if errors.Is(err, io.EOF) {
		b.endLine()
	}
	return n, err
}

// scan follows the lines in p.
func (b *sseBody) scan(p []byte) {
	for {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			b.keep(p)
			return
		}
		b.keep(p[:i])
		b.endLine()
		p = p[i+1:]
	}
}

// keep adds p to the current line unless the line is too long to matter.
func (b *sseBody) keep(p []byte) {
	if b.lineLen += len(p); b.lineLen > maxDoneLine {
		return
	}
	b.line = append(b.line, p...)
}

// endLine notes a [DONE] line and starts the next one.
func (b *sseBody) endLine() {
	data, ok := bytes.CutPrefix(bytes.TrimSpace(b.line), []byte("data:"))
	if b.lineLen <= maxDoneLine && ok && string(bytes.TrimSpace(data)) == "[DONE]" {
		b.done = true
	}
	b.line, b.lineLen = b.line[:0], 0
}

// drain reads the little that follows [DONE] (the end of a chunked body
// may come in a later packet) so that an HTTP/1.1 connection goes back to
// the pool instead of being closed.
func (b *sseBody) drain() {
	_, _ = io.CopyN(io.Discard, b.ReadCloser, 4<<10)
}

// releasingBody drops the reader it wraps at EOF or Close. The transport
// may close a request body from another goroutine while it is read.
type releasingBody struct {
	mu sync.Mutex
	rc io.ReadCloser
}

func (b *releasingBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.rc == nil {
		return 0, io.EOF
	}
	n, err := b.rc.Read(p)
	if err == io.EOF {
		_ = b.rc.Close()
		b.rc = nil
	}
	return n, err
}

// writeWhole writes the rest of a pooled body to w in one piece and
// releases it, when it is no longer than limit; whole is false, and nothing
// is written, for any other body.
func (b *releasingBody) writeWhole(w io.Writer, limit int64) (n int64, err error, whole bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	pb, ok := b.rc.(*pooledBody)
	if !ok || int64(pb.Len()) > limit {
		return 0, nil, false
	}
	n, err = pb.WriteTo(w)
	_ = pb.Close()
	b.rc = nil
	return n, err, true
}

func (b *releasingBody) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.rc == nil {
		return nil
	}
	err := b.rc.Close()
	b.rc = nil
	return err
}
