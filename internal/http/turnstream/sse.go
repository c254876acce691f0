package turnstream

import (
	"encoding/json"
	"log/slog"
	"net/http"

	"github.com/taskchat/taskchat/internal/chat"
)

// SSE streams the turn as taskchat's Server-Sent Events. Until
// its start event, a failure is answered as problem JSON with its status; after it,
// as an error event. Every stream ends with exactly one done or error
// event. Its state is touched by one goroutine only: the turn's, or the
// follower's.
type SSE struct {
	*Stream
	id    EventID // of the event being written
	begun bool    // the start event was written
}

// NewSSE is the stream of taskchat's events to w, which answers r; a
// failure before its first frame is answered through problems.
func NewSSE(w http.ResponseWriter, r *http.Request, log *slog.Logger, cfg Config, problems Problems) *SSE {
	return &SSE{Stream: newStream(w, r, log, cfg, problems, func(http.Header) {})}
}

// start sends the headers and the start event, and begins pinging.
func (o *SSE) start(conversationID, turnID int64) {
	if o.begun {
		return
	}
	o.begun = true
	o.send(o.frame("start", startEvent{ConversationID: conversationID, TurnID: turnID}))
}

// Event streams one event of the running turn.
func (o *SSE) Event(id EventID, e chat.Event) {
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
	case chat.EventApproval:
		o.send(o.frame("approval_required", ApprovalOf(*e.Approval)))
	}
}

// Done ends the stream with the outcome. A replay, which started no turn,
// sends its start event first.
func (o *SSE) Done(id EventID, out chat.Outcome) {
	if !o.begun {
		o.id = id.before()
		o.start(out.ConversationID, out.TurnID)
	}
	o.id = id
	o.end(o.frame("done", ChatResponseOf(out)))
}

// Fail ends the stream with an error event, or answers err as problem
// JSON if nothing was sent yet.
func (o *SSE) Fail(id EventID, err error) {
	o.id = id
	if ev, open := o.failed(err); open {
		o.end(o.frame("error", ev))
	}
}

// Close ends a stream the handler left unended (it panicked) with an
// internal error event.
func (o *SSE) Close() {
	o.Stream.close(func() string {
		o.id = o.id.Next()
		return o.frame("error", internalEvent)
	})
}

// frame encodes one event with the id of the event being written.
func (o *SSE) frame(name string, v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		name, data = "error", []byte(`{"code":"internal","message":"Something went wrong on our side."}`)
	}
	return "id: " + o.id.String() + "\nevent: " + name + "\ndata: " + string(data) + "\n\n"
}
