package http

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/taskchat/taskchat/internal/chat"
)

// output is how a turn answers: as one JSON body or as Server-Sent Events.
// The engine calls event as the turn goes (chat.EventStarted first, once
// the conversation is known), and then the handler calls exactly one of
// done or fail.
type output interface {
	event(e chat.Event)
	done(o chat.Outcome)
	fail(err error)
	// close runs when the handler returns, on every path (panics too):
	// after it the output writes nothing.
	close()
}

// jsonOutput answers with one JSON body when the turn is over.
type jsonOutput struct {
	w   http.ResponseWriter
	r   *http.Request
	log *slog.Logger
}

func (o *jsonOutput) event(chat.Event)      {}
func (o *jsonOutput) done(out chat.Outcome) { writeJSON(o.w, http.StatusOK, chatResponseOf(out)) }
func (o *jsonOutput) fail(err error)        { writeError(o.w, o.r, o.log, err) }
func (o *jsonOutput) close()                {}

// sseStream is what every stream of a turn shares, whatever its format
// (taskchat's events, the AI SDK's chunks): it sends the headers, writes
// each frame within the write timeout and flushes it, pings while the turn
// is quiet, and ends the turn when the client stops reading. Its frames
// are written whole, one at a time.
type sseStream struct {
	w        http.ResponseWriter
	r        *http.Request
	rc       *http.ResponseController
	log      *slog.Logger
	interval time.Duration
	timeout  time.Duration           // for one frame's write
	cancel   context.CancelCauseFunc // ends the turn when the client stops reading

	mu      sync.Mutex // serialises writes: the turn and the pinger
	started bool
	ended   bool
	pinger  *time.Timer
}

func newSSEStream(w http.ResponseWriter, r *http.Request, log *slog.Logger, cfg StreamConfig, cancel context.CancelCauseFunc) *sseStream {
	return &sseStream{w: w, r: r, rc: http.NewResponseController(w), log: log,
		interval: cfg.PingInterval, timeout: cfg.WriteTimeout, cancel: cancel}
}

// errClientStalled ends a turn whose client no longer reads its stream.
var errClientStalled = errors.New("the client stopped reading the stream")

// open sends the headers (the stream's own, set by header, then ours) and
// the first frame, and begins pinging. It reports false, and does nothing,
// when the stream is open already.
func (s *sseStream) open(header func(http.Header), first string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return false
	}
	s.started = true
	h := s.w.Header()
	header(h)
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	s.w.WriteHeader(http.StatusOK)
	s.write(first)
	s.pinger = time.AfterFunc(s.interval, s.ping)
	return true
}

// isOpen reports whether the headers were sent: a failure is then told in
// the stream, not with a status.
func (s *sseStream) isOpen() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.started
}

// ping writes a comment and re-arms itself, so proxies and clients see the
// connection alive. A timer rather than a goroutine: a stream waiting on
// its model holds no extra stack for it.
func (s *sseStream) ping() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended || s.r.Context().Err() != nil {
		return
	}
	s.write(": ping\n\n")
	s.pinger.Reset(s.interval)
}

// send writes one frame, unless the stream has ended.
func (s *sseStream) send(frame string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ended {
		s.write(frame)
	}
}

// end sends the stream's last frames and stops the pinger. A ping already
// running sees ended under the lock and writes nothing. The frames are not
// flushed: the handler returns right after, and net/http then sends them
// with the end of the chunked body in one write instead of two.
func (s *sseStream) end(last string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ended {
		s.writeOnly(last)
		s.ended = true
	}
	if s.pinger != nil {
		s.pinger.Stop()
	}
}

// close stops the pinger for good; the handler is returning. A stream
// that has not ended by then (the handler panicked) ends with the frames
// fallback returns.
func (s *sseStream) close(fallback func() string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started && !s.ended {
		s.write(fallback())
	}
	s.ended = true
	if s.pinger != nil {
		s.pinger.Stop()
	}
	// The write deadline stays as the last frame set it: net/http sends
	// that frame, with the end of the body, after the handler returns, and
	// a client that stopped reading must not hold the connection past it.
	// net/http clears it once the response is out, before the connection
	// serves another request (HTTP/2 deadlines are the stream's own).
}

// write sends str within the write timeout. A client that does not take it
// is treated as gone: the turn is cancelled, stores what it did, and ends.
// The caller holds s.mu.
func (s *sseStream) write(str string) {
	if s.writeOnly(str) {
		s.lost(s.rc.Flush())
	}
}

// writeOnly buffers str for the client, within the write timeout, and
// reports whether it did. The caller holds s.mu.
func (s *sseStream) writeOnly(str string) bool {
	if s.ended {
		return false
	}
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.timeout))
	_, err := io.WriteString(s.w, str)
	s.lost(err)
	return err == nil
}

// lost ends the stream if err says the client is gone. The caller holds s.mu.
func (s *sseStream) lost(err error) {
	if err != nil {
		s.ended = true // nothing more can reach this client
		s.log.InfoContext(s.r.Context(), "stream client gone; ending the turn", "err", err)
		s.cancel(errClientStalled)
	}
}

// failed answers err as problem JSON, with its status, when the stream
// has not started, and reports false. Once it has, it logs a failure on our
// side and returns err as the stream's own error frame is to tell it.
func (s *sseStream) failed(err error) (*apiError, bool) {
	if !s.isOpen() {
		writeError(s.w, s.r, s.log, err)
		return nil, false
	}
	ae := toAPIError(err)
	if ae.status() >= 500 && s.r.Context().Err() == nil {
		s.log.ErrorContext(s.r.Context(), "stream failed", "code", ae.code, "err", err)
	}
	return ae, true
}

// sseOutput streams the turn as taskchat's Server-Sent Events. Until
// start, a failure is answered as problem JSON with its status; after it,
// as an error event. Every stream ends with exactly one done or error
// event. Its events are built by the handler's goroutine only (the engine
// calls its observer from there), so nextID needs no lock.
type sseOutput struct {
	*sseStream
	nextID int
}

func newSSEOutput(w http.ResponseWriter, r *http.Request, log *slog.Logger, cfg StreamConfig, cancel context.CancelCauseFunc) *sseOutput {
	return &sseOutput{sseStream: newSSEStream(w, r, log, cfg, cancel)}
}

// start sends the headers and the start event, and begins pinging.
func (o *sseOutput) start(conversationID int64) {
	if o.isOpen() {
		return
	}
	o.open(func(http.Header) {}, o.frame("start", startEvent{ConversationID: conversationID}))
}

func (o *sseOutput) event(e chat.Event) {
	switch e.Kind {
	case chat.EventStarted:
		o.start(e.ConversationID)
	case chat.EventDelta:
		o.send(o.frame("delta", deltaEvent{Text: e.Text}))
	case chat.EventToolCall:
		o.send(o.frame("tool_call", toolCallEvent{ID: e.Call.ID, Tool: e.Call.Tool, Arguments: e.Call.Arguments}))
	case chat.EventToolResult:
		o.send(o.frame("tool_result", toolResultEvent{ID: e.Call.ID, Tool: e.Call.Tool, Result: e.Call.Result, IsError: e.Call.IsError}))
	}
}

// done ends the stream with the outcome. A replay, which started no turn,
// sends its start event first.
func (o *sseOutput) done(out chat.Outcome) {
	o.start(out.ConversationID)
	o.end(o.frame("done", chatResponseOf(out)))
}

func (o *sseOutput) fail(err error) {
	if ae, open := o.failed(err); open {
		o.end(o.frame("error", errorEvent{Code: ae.code, Message: ae.detail, ToolCalls: ae.toolCalls}))
	}
}

func (o *sseOutput) close() {
	o.sseStream.close(func() string {
		return o.frame("error", errorEvent{Code: codeInternal, Message: "Something went wrong on our side."})
	})
}

// frame encodes one event with the next id.
func (o *sseOutput) frame(name string, v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		name, data = "error", []byte(`{"code":"internal","message":"Something went wrong on our side."}`)
	}
	o.nextID++
	return fmt.Sprintf("id: %d\nevent: %s\ndata: %s\n\n", o.nextID, name, data)
}
