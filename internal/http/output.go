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

	"github.com/taskchat/taskchat/internal/agent"
)

// output is how a turn answers: as one JSON body or as Server-Sent Events.
// The turn calls start once the conversation is known, event for each
// agent event, and then exactly one of done, replay or fail.
type output interface {
	start(conversationID int64)
	event(e agent.Event)
	done(resp chatResponse)
	replay(stored json.RawMessage)
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

func (o *jsonOutput) start(int64)       {}
func (o *jsonOutput) event(agent.Event) {}
func (o *jsonOutput) done(resp chatResponse) {
	writeJSON(o.w, http.StatusOK, resp)
}
func (o *jsonOutput) replay(stored json.RawMessage) {
	writeJSON(o.w, http.StatusOK, stored)
}
func (o *jsonOutput) fail(err error) { writeError(o.w, o.r, o.log, err) }
func (o *jsonOutput) close()         {}

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

func newSSEOutput(w http.ResponseWriter, r *http.Request, log *slog.Logger, cfg ChatConfig, cancel context.CancelCauseFunc) *sseOutput {
	return &sseOutput{w: w, r: r, rc: http.NewResponseController(w), log: log,
		interval: cfg.PingInterval, timeout: cfg.StreamWriteTimeout, cancel: cancel}
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
	o.send("start", map[string]int64{"conversation_id": conversationID})
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

func (o *sseOutput) event(e agent.Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch e.Kind {
	case agent.EventDelta:
		o.send("delta", map[string]string{"text": e.Text})
	case agent.EventToolCall:
		c := toolCallOf(e.Call.ID, e.Call.Tool, e.Call.Arguments, nil, false)
		o.send("tool_call", map[string]any{"id": c.ID, "tool": c.Tool, "arguments": c.Arguments})
	case agent.EventToolResult:
		c := toolCallOf(e.Call.ID, e.Call.Tool, e.Call.Arguments, e.Call.Result, e.Call.IsError)
		o.send("tool_result", map[string]any{"id": c.ID, "tool": c.Tool, "result": c.Result, "is_error": c.IsError})
	}
}

func (o *sseOutput) done(resp chatResponse) { o.end("done", resp) }

func (o *sseOutput) replay(stored json.RawMessage) {
	var head struct {
		ConversationID int64 `json:"conversation_id"`
	}
	_ = json.Unmarshal(stored, &head)
	o.start(head.ConversationID)
	o.end("done", stored)
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
	if ae.status >= 500 && o.r.Context().Err() == nil {
		o.log.ErrorContext(o.r.Context(), "stream failed", "code", ae.code, "err", err)
	}
	o.end("error", map[string]string{"code": ae.code, "message": ae.detail})
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
		o.send("error", map[string]string{"code": codeInternal, "message": "Something went wrong on our side."})
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
