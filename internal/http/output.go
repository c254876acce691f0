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

// sseOutput streams the turn as Server-Sent Events. Until start, a failure
// is answered as problem JSON with its status; after it, as an error event.
// Every stream ends with exactly one done or error event.
type sseOutput struct {
	w        http.ResponseWriter
	r        *http.Request
	rc       *http.ResponseController
	log      *slog.Logger
	interval time.Duration
	timeout  time.Duration           // for one event's write
	cancel   context.CancelCauseFunc // ends the turn when the client stops reading

	mu      sync.Mutex // serialises writes: the turn and the pinger
	started bool
	ended   bool
	stalled bool // a write failed: the client is gone
	nextID  int
	pinger  *time.Timer
}

func newSSEOutput(w http.ResponseWriter, r *http.Request, log *slog.Logger, cfg StreamConfig, cancel context.CancelCauseFunc) *sseOutput {
	return &sseOutput{w: w, r: r, rc: http.NewResponseController(w), log: log,
		interval: cfg.PingInterval, timeout: cfg.WriteTimeout, cancel: cancel}
}

// errClientStalled ends a turn whose client no longer reads its stream.
var errClientStalled = errors.New("the client stopped reading the stream")

// start sends the headers and the start event, and begins pinging.
func (o *sseOutput) start(conversationID int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.started {
		return
	}
	o.started = true
	h := o.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	o.w.WriteHeader(http.StatusOK)
	o.send("start", startEvent{ConversationID: conversationID})
	o.pinger = time.AfterFunc(o.interval, o.ping)
}

// ping writes a comment and re-arms itself, so proxies and clients see the
// connection alive. A timer rather than a goroutine: a stream waiting on
// its model holds no extra stack for it.
func (o *sseOutput) ping() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.ended || o.r.Context().Err() != nil {
		return
	}
	o.write(": ping\n\n")
	o.pinger.Reset(o.interval)
}

func (o *sseOutput) event(e chat.Event) {
	if e.Kind == chat.EventStarted {
		o.start(e.ConversationID)
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	switch e.Kind {
	case chat.EventDelta:
		o.send("delta", deltaEvent{Text: e.Text})
	case chat.EventToolCall:
		o.send("tool_call", toolCallEvent{ID: e.Call.ID, Tool: e.Call.Tool, Arguments: e.Call.Arguments})
	case chat.EventToolResult:
		o.send("tool_result", toolResultEvent{ID: e.Call.ID, Tool: e.Call.Tool, Result: e.Call.Result, IsError: e.Call.IsError})
	}
}

// done ends the stream with the outcome. A replay, which started no turn,
// sends its start event first.
func (o *sseOutput) done(out chat.Outcome) {
	o.start(out.ConversationID)
	o.end("done", chatResponseOf(out))
}

func (o *sseOutput) fail(err error) {
	o.mu.Lock()
	started := o.started
	o.mu.Unlock()
	if !started {
		writeError(o.w, o.r, o.log, err)
		return
	}
	ae := toAPIError(err)
	if ae.status() >= 500 && o.r.Context().Err() == nil {
		o.log.ErrorContext(o.r.Context(), "stream failed", "code", ae.code, "err", err)
	}
	o.end("error", errorEvent{Code: ae.code, Message: ae.detail, ToolCalls: ae.toolCalls})
}

// end sends the stream's last event and stops the pinger. A ping already
// running sees ended under the lock and writes nothing.
func (o *sseOutput) end(name string, v any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.ended {
		o.send(name, v)
		o.ended = true
	}
	if o.pinger != nil {
		o.pinger.Stop()
	}
}

// close stops the pinger for good; the handler is returning. A stream
// that has not ended by then (the handler panicked) ends with an error.
func (o *sseOutput) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.started && !o.ended {
		o.send("error", errorEvent{Code: codeInternal, Message: "Something went wrong on our side."})
	}
	o.ended = true
	if o.pinger != nil {
		o.pinger.Stop()
	}
	// A healthy connection may serve another request and must not inherit
	// the last event's deadline; a stalled one keeps it, so the server's
	// last write fails and the connection is closed.
	if !o.stalled {
		_ = o.rc.SetWriteDeadline(time.Time{})
	}
}

// send writes one event and flushes it. The caller holds o.mu. Write
// errors mean the client left; the request's context tells the turn.
func (o *sseOutput) send(name string, v any) {
	if o.ended {
		return
	}
	data, err := json.Marshal(v)
	if err != nil {
		name, data = "error", []byte(`{"code":"internal","message":"Something went wrong on our side."}`)
	}
	o.nextID++
	o.write(fmt.Sprintf("id: %d\nevent: %s\ndata: %s\n\n", o.nextID, name, data))
}

// write sends s within the write timeout. A client that does not take it is
// treated as gone: the turn is cancelled, stores what it did, and ends.
// The caller holds o.mu.
func (o *sseOutput) write(s string) {
	_ = o.rc.SetWriteDeadline(time.Now().Add(o.timeout))
	_, err := io.WriteString(o.w, s)
	if err == nil {
		err = o.rc.Flush()
	}
	if err != nil {
		o.ended, o.stalled = true, true // nothing more can reach this client
		o.log.InfoContext(o.r.Context(), "stream client gone; ending the turn", "err", err)
		o.cancel(errClientStalled)
	}
}
