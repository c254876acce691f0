package turnstream

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/taskchat/taskchat/internal/chat"
	"github.com/taskchat/taskchat/internal/tasks"
)

// uiDone is the last line of every UI message stream.
const uiDone = "data: [DONE]\n\n"

// UI streams the turn as the Vercel AI SDK's UI message stream,
// protocol v1: one assistant message, whose id is reply-{turn id} and
// whose metadata holds the conversation id, in steps (one per model round)
// of text parts and dynamic tool parts. Until it starts, a failure is
// answered as problem JSON with its status; after, as an error chunk. The
// stream always ends with data: [DONE]. Like SSE, its state is
// touched by the handler's goroutine only.
type UI struct {
	*Stream
	begun    bool            // the message's start was written
	group    strings.Builder // the chunks of the event being written
	texts    int             // text parts opened so far; the open one's id is text-{texts-1}
	textOpen bool            // a text part is open
	round    int             // the model round of the open step
	results  bool            // a tool result came in the open step: text now begins the next round
	// asked is set once a call asked for approval: the text after it stays
	// in its step, as the AI SDK's client answers the approvals of the
	// last step only (lastAssistantMessageIsCompleteWithApprovalResponses).
	asked bool
}

// NewUI is the UI message stream of a turn to w, which answers r; a
// failure before its first chunk is answered through problems.
func NewUI(w http.ResponseWriter, r *http.Request, log *slog.Logger, cfg Config, problems Problems) *UI {
	return &UI{Stream: newStream(w, r, log, cfg, problems, uiHeader)}
}

// uiFrame is one chunk as a data line.
func uiFrame(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		data, _ = json.Marshal(uiErrorChunk{Type: "error", ErrorText: internalEvent.Message})
	}
	return "data: " + string(data) + "\n\n"
}

// uiHeader is the header of a UI message stream.
func uiHeader(h http.Header) { h.Set("X-Vercel-Ai-Ui-Message-Stream", "v1") }

// start begins the message: its start and its first step.
func (o *UI) start(conversationID, turnID int64) {
	if o.begun {
		return
	}
	o.begun = true
	start := uiStartChunk{Type: "start", MessageMetadata: uiMetadata{ConversationID: conversationID}}
	if turnID > 0 {
		start.MessageID = ReplyID(turnID)
	}
	o.send(uiFrame(start) + uiFrame(uiChunk{Type: "start-step"}))
}

// send adds chunks to the event being written; take writes them.
func (o *UI) send(frames string) { o.group.WriteString(frames) }

// take returns the chunks of the event being written, the last with the
// event's id, and begins the next event.
func (o *UI) take(id EventID) string {
	frames := o.group.String()
	o.group.Reset()
	if frames == "" {
		return ""
	}
	last := strings.LastIndex(frames[:len(frames)-2], "\n\n") + 2
	if last < 2 {
		last = 0
	}
	return frames[:last] + "id: " + id.String() + "\n" + frames[last:]
}

// Event streams the chunks of one event of the running turn, the last
// with the event's id.
func (o *UI) Event(id EventID, e chat.Event) {
	defer func() {
		if frames := o.take(id); frames != "" {
			o.Stream.send(frames)
		}
	}()
	switch e.Kind {
	case chat.EventStarted:
		o.start(e.ConversationID, e.TurnID)
		for _, c := range e.Earlier {
			o.toolCall(c.ToolCall, c.Round)
			o.toolResult(c.ToolCall)
		}
	case chat.EventDelta:
		o.text(e.Text)
	case chat.EventToolCall:
		o.toolCall(*e.Call, e.Round)
	case chat.EventToolResult:
		o.toolResult(*e.Call)
	case chat.EventApproval:
		// What the call that asked (tool-approval-request) waits for, for
		// useChat's onData: its summary, its expiry.
		o.send(uiFrame(uiDataChunk{Type: "data-approval", ID: strconv.FormatInt(e.Approval.ID, 10), Data: ApprovalOf(*e.Approval), Transient: true}))
	}
}

// text streams a piece of the reply. Text after a tool result is the next
// round's: a model writes a round's text before asking for its tools.
func (o *UI) text(s string) {
	if o.results && !o.asked {
		o.step(o.round + 1)
	}
	if !o.textOpen {
		o.texts++
		o.textOpen = true
		o.send(uiFrame(uiTextChunk{Type: "text-start", ID: o.textID()}))
	}
	o.send(uiFrame(uiTextDeltaChunk{Type: "text-delta", ID: o.textID(), Delta: s}))
}

// textID is the id of the newest text part.
func (o *UI) textID() string { return "text-" + strconv.Itoa(o.texts-1) }

func (o *UI) toolCall(c chat.ToolCall, round int) {
	if round != o.round {
		o.step(round)
	}
	o.closeText()
	o.send(uiFrame(uiToolInputChunk{Type: "tool-input-available", ToolCallID: c.ID, ToolName: c.Tool, Input: c.Arguments, Dynamic: true}))
}

func (o *UI) toolResult(c chat.ToolCall) {
	o.results = true
	if c.ApprovalID != 0 && tasks.AwaitingID(c.Result) != 0 {
		// The call waits: the part asks its person (useChat's
		// addToolApprovalResponse answers, on the chat's next request).
		o.send(uiFrame(uiApprovalChunk{Type: "tool-approval-request", ApprovalID: strconv.FormatInt(c.ApprovalID, 10), ToolCallID: c.ID}))
		o.asked = true
		return
	}
	if c.IsError {
		o.send(uiFrame(uiToolErrorChunk{Type: "tool-output-error", ToolCallID: c.ID, ErrorText: toolErrorText(c.Result), Dynamic: true}))
		return
	}
	o.send(uiFrame(uiToolOutputChunk{Type: "tool-output-available", ToolCallID: c.ID, Output: c.Result, Dynamic: true}))
}

// step ends the open step and begins the one of round.
func (o *UI) step(round int) {
	o.closeText()
	o.send(uiFrame(uiChunk{Type: "finish-step"}) + uiFrame(uiChunk{Type: "start-step"}))
	o.round, o.results = round, false
}

func (o *UI) closeText() {
	if o.textOpen {
		o.send(uiFrame(uiTextChunk{Type: "text-end", ID: o.textID()}))
		o.textOpen = false
	}
}

// Done ends the message. A replay, which streamed nothing, sends what the
// turn did first: its tool calls, then its reply.
func (o *UI) Done(id EventID, out chat.Outcome) {
	if !o.begun {
		o.start(out.ConversationID, out.TurnID)
		for _, c := range out.ToolCalls {
			o.toolCall(c, 0)
			o.toolResult(c)
		}
		if out.Reply != "" {
			o.text(out.Reply)
		}
	}
	o.closeText()
	finish := uiFinishChunk{Type: "finish", FinishReason: "stop"}
	if out.Interrupted || out.Stopped {
		finish.MessageMetadata = &uiMetadata{Interrupted: out.Interrupted, Stopped: out.Stopped}
	}
	o.send(uiFrame(uiChunk{Type: "finish-step"}) + uiFrame(finish))
	o.end(o.take(id) + uiDone)
}

// Fail ends the message with an error chunk, or answers err as problem
// JSON if nothing was sent yet.
func (o *UI) Fail(id EventID, err error) {
	if ev, open := o.failed(err); open {
		o.closeText()
		o.send(uiFrame(uiErrorChunk{Type: "error", ErrorText: ev.Message}))
		o.end(o.take(id) + uiDone)
	}
}

// Close ends a stream the handler left unended (it panicked) with an
// error chunk.
func (o *UI) Close() {
	o.Stream.close(func() string {
		return uiFrame(uiErrorChunk{Type: "error", ErrorText: internalEvent.Message}) + uiDone
	})
}

// ReplyID is the UI message id of a turn's reply. A regenerated reply
// keeps it: it answers the same message.
func ReplyID(turnID int64) string { return "reply-" + strconv.FormatInt(turnID, 10) }

// TurnOfReply reads the turn id back from a reply's id; 0 when id is not
// one.
func TurnOfReply(id string) int64 {
	s, ok := strings.CutPrefix(id, "reply-")
	n, err := strconv.ParseInt(s, 10, 64)
	if !ok || err != nil || n <= 0 || strconv.FormatInt(n, 10) != s {
		return 0
	}
	return n
}

// toolErrorText is the sentence of a failed call's result, a
// tasks.ErrorResult, or the result itself when it has none.
func toolErrorText(result json.RawMessage) string {
	var r tasks.ErrorResult
	if json.Unmarshal(result, &r) == nil && r.Error != "" {
		return r.Error
	}
	return string(result)
}
