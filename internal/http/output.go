package http

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/taskchat/taskchat/internal/chat"
)

// output is how a turn answers: as one JSON body or as Server-Sent Events.
// The engine's events reach it as the turn goes (chat.EventStarted first,
// once the conversation is known), and then exactly one of done or fail.
// Each comes with the id of the turn's event it is (eventID), which a
// stream sends with it so that a client can resume after it.
type output interface {
	event(id eventID, e chat.Event)
	done(id eventID, o chat.Outcome)
	fail(id eventID, err error)
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

func (o *jsonOutput) event(eventID, chat.Event) {}
func (o *jsonOutput) done(_ eventID, out chat.Outcome) {
	writeJSON(o.w, http.StatusOK, chatResponseOf(out))
}
func (o *jsonOutput) fail(_ eventID, err error) { writeError(o.w, o.r, o.log, err) }
func (o *jsonOutput) close()                    {}

// sseStream is what every stream of a turn shares, whatever its format
// (taskchat's events, the AI SDK's chunks): it sends the headers, writes
// each frame within the write timeout and flushes it, and pings while the
// turn is quiet. A client that stops reading is let go: the turn runs on
// without it (it can resume). Its frames are written whole, one at a time.
type sseStream struct {
	w        http.ResponseWriter
	r        *http.Request
	rc       *http.ResponseController
	log      *slog.Logger
	interval time.Duration
	timeout  time.Duration     // for one frame's write
	header   func(http.Header) // sets the stream's own headers

	mu      sync.Mutex // serialises writes: the turn and the pinger
	started bool
	ended   bool
	// muted drops frames: a resumed stream goes through the events its
	// client has, to know what it sent, without sending them again.
	muted  bool
	pinger *time.Timer
}

func newSSEStream(w http.ResponseWriter, r *http.Request, log *slog.Logger, cfg StreamConfig, header func(http.Header)) *sseStream {
	return &sseStream{w: w, r: r, rc: http.NewResponseController(w), log: log,
		interval: cfg.PingInterval, timeout: cfg.WriteTimeout, header: header}
}

// open sends the headers now, unless they were sent, and begins pinging:
// for a stream whose first event may be a while coming.
func (s *sseStream) open() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.begin()
	s.lost(s.rc.Flush())
}

// begin writes the headers (the stream's own, then ours) once, and begins
// pinging; they go out with the first frame. The caller holds s.mu.
func (s *sseStream) begin() {
	if s.started {
		return
	}
	s.started = true
	h := s.w.Header()
	s.header(h)
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	s.w.WriteHeader(http.StatusOK)
	s.pinger = time.AfterFunc(s.interval, s.ping)
}

// mute drops the frames written until it is called with false; see muted.
func (s *sseStream) mute(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.muted = on
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

// send writes frames, after the headers if they were not sent, unless
// the stream has ended.
func (s *sseStream) send(frames string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.begin()
	if !s.ended {
		s.write(frames)
	}
}

// end sends the stream's last frames and stops the pinger. A ping already
// running sees ended under the lock and writes nothing. The frames are not
// flushed: the handler returns right after, and net/http then sends them
// with the end of the chunked body in one write instead of two.
func (s *sseStream) end(last string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.begin()
	if !s.ended {
		s.writeOnly(last)
		s.ended = true
	}
	if s.pinger != nil {
		s.pinger.Stop()
	}
}

// gone reports whether the stream has ended: its client stopped reading,
// or its last event was written.
func (s *sseStream) gone() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ended
}

// abandon ends the stream with no last event: its client is to resume it
// elsewhere.
func (s *sseStream) abandon() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ended = true
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
	if s.ended || s.muted {
		return false
	}
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.timeout))
	_, err := io.WriteString(s.w, str)
	s.lost(err)
	return err == nil
}

// lost ends the stream if err says the client is gone. The turn goes on;
// the client can resume it. The caller holds s.mu.
func (s *sseStream) lost(err error) {
	if err != nil {
		s.ended = true // nothing more can reach this client
		s.log.InfoContext(s.r.Context(), "stream client gone; the turn goes on without it", "err", err)
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
// event. Its state is touched by one goroutine only: the turn's, or the
// follower's.
type sseOutput struct {
	*sseStream
	id    eventID // of the event being written
	begun bool    // the start event was written
}

func newSSEOutput(w http.ResponseWriter, r *http.Request, log *slog.Logger, cfg StreamConfig) *sseOutput {
	return &sseOutput{sseStream: newSSEStream(w, r, log, cfg, func(http.Header) {})}
}

// start sends the headers and the start event, and begins pinging.
func (o *sseOutput) start(conversationID, turnID int64) {
	if o.begun {
		return
	}
	o.begun = true
	o.send(o.frame("start", startEvent{ConversationID: conversationID, TurnID: turnID}))
}

func (o *sseOutput) event(id eventID, e chat.Event) {
	o.id = id
	switch e.Kind {
	case chat.EventStarted:
		o.start(e.ConversationID, e.TurnID)
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
func (o *sseOutput) done(id eventID, out chat.Outcome) {
	if !o.begun {
		o.id = id.before()
		o.start(out.ConversationID, out.TurnID)
	}
	o.id = id
	o.end(o.frame("done", chatResponseOf(out)))
}

func (o *sseOutput) fail(id eventID, err error) {
	o.id = id
	if ae, open := o.failed(err); open {
		o.end(o.frame("error", errorEventOf(ae)))
	}
}

func (o *sseOutput) close() {
	o.sseStream.close(func() string {
		o.id = o.id.next()
		return o.frame("error", errorEvent{Code: codeInternal, Message: "Something went wrong on our side."})
	})
}

// frame encodes one event with the id of the event being written.
func (o *sseOutput) frame(name string, v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		name, data = "error", []byte(`{"code":"internal","message":"Something went wrong on our side."}`)
	}
	return "id: " + o.id.String() + "\nevent: " + name + "\ndata: " + string(data) + "\n\n"
}
