package openai

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/taskchat/taskchat/internal/agent"
)

// This file writes the request body. go-openai marshals a request with
// encoding/json, and every message through its own MarshalJSON, whose
// output encoding/json then validates and compacts again; the tools'
// declarations, the same on every call, are re-encoded through a map each
// time. That was a tenth of a busy server's CPU. Here the parts that never
// change (the model's name, the tools) are encoded once, and the system
// prompt (it names the user and the date) and each message are appended to
// a pooled buffer. The JSON is the one
// go-openai writes for the same request (TestRequestBodyMatchesGoOpenAI and
// FuzzRequestBody hold it to that), and go-openai still does the rest:
// headers, errors and reading the stream.

// bodyDoer is the HTTP doer go-openai sends each attempt through. go-openai
// is handed a request naming only the model, and the body it marshals from
// that is replaced here by the one encoded for the whole request.
type bodyDoer struct {
	body *pooledBody
	next *attempt
}

func (d bodyDoer) Do(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_ = r.Body.Close()
	}
	r.Body, r.GetBody, r.ContentLength = d.body, nil, int64(d.body.Len())
	return d.next.Do(r)
}

// encoder holds what every request of one Model shares, encoded once.
type encoder struct {
	head  []byte // {"model":…,"messages":[
	tools atomic.Pointer[encodedTools]
}

// encodedTools is the request's tail for one list of tool definitions.
type encodedTools struct {
	defs []agent.ToolDef
	tail []byte // ],"stream":true,…,"tools":[…]}
}

func newEncoder(model string) *encoder {
	e := &encoder{head: []byte(`{"model":`)}
	e.head = appendString(e.head, model)
	e.head = append(e.head, `,"messages":[`...)
	return e
}

// body encodes the streaming request for req into a pooled buffer, which
// goes back to the pool once the transport has sent it.
func (e *encoder) body(req agent.Request) (*pooledBody, error) {
	tail, err := e.tail(req.Tools)
	if err != nil {
		return nil, err
	}
	b := bodyPool.Get().(*pooledBody)
	buf := append(b.buf[:0], e.head...)
	sep := false
	if req.System != "" {
		buf, sep = appendMessage(buf, agent.Message{Role: goopenai.ChatMessageRoleSystem, Content: req.System}), true
	}
	for _, m := range req.Messages {
		if sep {
			buf = append(buf, ',')
		}
		buf, sep = appendMessage(buf, m), true
	}
	b.buf = append(buf, tail...)
	b.Reset(b.buf)
	return b, nil
}

// tail returns the request's end for defs, from the cache when defs is the
// slice seen last: a process offers every turn the same definitions.
func (e *encoder) tail(defs []agent.ToolDef) ([]byte, error) {
	if t := e.tools.Load(); t != nil && sameSlice(t.defs, defs) {
		return t.tail, nil
	}
	tail := []byte(`],"stream":true,"stream_options":{"include_usage":true}`)
	if len(defs) > 0 {
		// Once per list of definitions, go-openai's own encoding.
		tools, err := json.Marshal(chatTools(defs))
		if err != nil {
			return nil, err
		}
		tail = append(append(tail, `,"tools":`...), tools...)
	}
	tail = append(tail, '}')
	e.tools.Store(&encodedTools{defs: defs, tail: tail})
	return tail, nil
}

// sameSlice reports whether a and b are the same slice, not merely equal:
// the definitions are immutable once listed, so identity is enough.
func sameSlice(a, b []agent.ToolDef) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// appendMessage appends m as go-openai's ChatCompletionMessage encodes it:
// empty fields are left out.
func appendMessage(b []byte, m agent.Message) []byte {
	b = append(b, `{"role":`...)
	b = appendString(b, string(m.Role))
	if m.Content != "" {
		b = append(b, `,"content":`...)
		b = appendString(b, m.Content)
	}
	if len(m.ToolCalls) > 0 {
		b = append(b, `,"tool_calls":[`...)
		for i, c := range m.ToolCalls {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendToolCall(b, c)
		}
		b = append(b, ']')
	}
	if m.ToolCallID != "" {
		b = append(b, `,"tool_call_id":`...)
		b = appendString(b, m.ToolCallID)
	}
	return append(b, '}')
}

// appendToolCall appends c as go-openai's ToolCall encodes it.
func appendToolCall(b []byte, c agent.ToolCall) []byte {
	b = append(b, '{')
	if c.ID != "" {
		b = append(b, `"id":`...)
		b = appendString(b, c.ID)
		b = append(b, ',')
	}
	b = append(b, `"type":"function","function":{`...)
	sep := false
	if c.Name != "" {
		b = append(b, `"name":`...)
		b, sep = appendString(b, c.Name), true
	}
	if c.Arguments != "" {
		if sep {
			b = append(b, ',')
		}
		b = append(b, `"arguments":`...)
		b = appendString(b, c.Arguments)
	}
	return append(b, "}}"...)
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string, escaped as encoding/json does
// but for HTML's <, > and &, which need no escape in a request body:
// control characters, invalid UTF-8 (as U+FFFD) and U+2028 and U+2029.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// pooledBody is a request body whose buffer goes back to bodyPool when the
// transport closes it, which it does once the body is sent (or the send
// failed): a busy server then reuses a few buffers instead of allocating
// one per model call. The transport never reads a body after closing it.
type pooledBody struct {
	bytes.Reader
	buf []byte
}

// bodyConn is a connection to the model that writes a request's pooled
// body in one piece. net/http hands a body of known length to the
// connection through an io.LimitedReader, which io.Copy can only read into
// a buffer it allocates for the purpose (as large as the body, up to 32
// KiB): a copy and an allocation per request, the largest of a turn. The
// body is already in memory, so it is written from there. Over TLS the
// body is encrypted on its way and this does not apply.
type bodyConn struct{ net.Conn }

// ReadFrom is called by the transport's buffered writer once it has sent
// what it holds, with the rest of the body.
func (c bodyConn) ReadFrom(r io.Reader) (int64, error) {
	if lr, ok := r.(*io.LimitedReader); ok {
		if b, ok := lr.R.(*releasingBody); ok {
			if n, err, whole := b.writeWhole(c.Conn, lr.N); whole {
				lr.N -= n
				return n, err
			}
		}
	}
	return io.Copy(c.Conn, r)
}

// maxPooledBody keeps an unusually large request's buffer out of the pool.
const maxPooledBody = 256 << 10

var bodyPool = sync.Pool{New: func() any { return new(pooledBody) }}

func (b *pooledBody) Close() error {
	b.Reset(nil)
	if cap(b.buf) <= maxPooledBody {
		bodyPool.Put(b)
	}
	return nil
}
