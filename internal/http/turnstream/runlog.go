package turnstream

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/taskchat/taskchat/internal/chat"
)

// EventID is the id of one event of a turn's stream: its run and its
// number within the run, sent as "<run>-<n>" (a plain EventSource sends it
// back as Last-Event-ID when it reconnects). The run makes an id from an
// earlier turn of the conversation mean nothing for the next one; n counts
// from 1 within the turn. A keyed retry's replay, which runs nothing, has
// run 0.
type EventID struct {
	Run int64
	Seq int
}

// String is id as a stream sends it: "<run>-<n>".
func (id EventID) String() string {
	return strconv.FormatInt(id.Run, 10) + "-" + strconv.Itoa(id.Seq)
}

// before is the id of the event before id.
func (id EventID) before() EventID { return EventID{id.Run, max(id.Seq-1, 0)} }

// Next is the id of the event after id.
func (id EventID) Next() EventID { return EventID{id.Run, id.Seq + 1} }

// ParseEventID reads a Last-Event-ID; ok is false when it is not one.
func ParseEventID(s string) (id EventID, ok bool) {
	run, seq, found := strings.Cut(strings.TrimSpace(s), "-")
	r, err1 := strconv.ParseInt(run, 10, 64)
	n, err2 := strconv.Atoi(seq)
	if !found || err1 != nil || err2 != nil || r < 0 || n < 0 {
		return EventID{}, false
	}
	return EventID{r, n}, true
}

// logEvent is one event of a turn as its run keeps it (tasks.RunEvent's
// data): what every front needs to stream the turn again, whatever it
// speaks. Type is one of started, delta, tool_call, tool_result, and, last,
// done or error.
type logEvent struct {
	Type           string         `json:"type"`
	ConversationID int64          `json:"conversation_id,omitempty"`
	TurnID         int64          `json:"turn_id,omitempty"`
	Text           string         `json:"text,omitempty"`
	Round          int            `json:"round,omitempty"`
	Call           *ToolCall      `json:"call,omitempty"`
	Earlier        []earlierJSON  `json:"earlier,omitempty"`
	Approval       *Approval      `json:"approval,omitempty"`
	Outcome        *loggedOutcome `json:"outcome,omitempty"`
	Error          *ErrorEvent    `json:"error,omitempty"`
}

type earlierJSON struct {
	ToolCall
	Round int `json:"round"`
}

// loggedOutcome is how a turn ended, as its done event keeps it.
type loggedOutcome struct {
	ChatResponse
	TurnID int64 `json:"turn_id,omitempty"`
}

// The types of logEvent.
const (
	logStarted    = "started"
	logDelta      = "delta"
	logToolCall   = "tool_call"
	logToolResult = "tool_result"
	logApproved   = "approval"
	logDone       = "done"
	logError      = "error"
)

var logTypes = map[chat.EventKind]string{chat.EventStarted: logStarted, chat.EventDelta: logDelta,
	chat.EventToolCall: logToolCall, chat.EventToolResult: logToolResult, chat.EventApproval: logApproved}

// EncodeEvent is e as its run keeps it.
func EncodeEvent(e chat.Event) []byte {
	le := logEvent{Type: logTypes[e.Kind], ConversationID: e.ConversationID, TurnID: e.TurnID, Text: e.Text, Round: e.Round}
	if e.Call != nil {
		c := ToolCall(*e.Call)
		le.Call = &c
	}
	for _, c := range e.Earlier {
		le.Earlier = append(le.Earlier, earlierJSON{ToolCall(c.ToolCall), c.Round})
	}
	if e.Approval != nil {
		a := ApprovalOf(*e.Approval)
		le.Approval = &a
	}
	return mustJSON(le)
}

// EncodeDone is a turn's done event as its run keeps it.
func EncodeDone(o chat.Outcome) []byte {
	return mustJSON(logEvent{Type: logDone, Outcome: &loggedOutcome{ChatResponseOf(o), o.TurnID}})
}

// EncodeError is a turn's error event as its run keeps it.
func EncodeError(ev ErrorEvent) []byte {
	return mustJSON(logEvent{Type: logError, Error: &ev})
}

// EventError is a turn's failure as its run kept it: the error event a
// stream of the turn told, to be told again as it was. The http package's
// error table knows it (its code gives its status).
type EventError struct{ Event ErrorEvent }

// Error is the event's code and message.
func (e *EventError) Error() string { return e.Event.Code + ": " + e.Event.Message }

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // every member is JSON already
	}
	return b
}

// Replay writes a logged event to out, with its id, and reports whether
// it was the turn's last.
func Replay(out Output, id EventID, data []byte) (last bool, err error) {
	var le logEvent
	if err := json.Unmarshal(data, &le); err != nil {
		return false, err
	}
	switch le.Type {
	case logDone:
		o := le.Outcome
		calls := make([]chat.ToolCall, len(o.ToolCalls))
		for i, c := range o.ToolCalls {
			calls[i] = chat.ToolCall(c)
		}
		done := chat.Outcome{ConversationID: o.ConversationID, TurnID: o.TurnID, Reply: o.Response,
			ToolCalls: calls, Interrupted: o.Interrupted, Stopped: o.Stopped}
		for _, a := range o.Approvals {
			done.Approvals = append(done.Approvals, a.domain())
		}
		out.Done(id, done)
		return true, nil
	case logError:
		out.Fail(id, &EventError{*le.Error})
		return true, nil
	}
	e := chat.Event{ConversationID: le.ConversationID, TurnID: le.TurnID, Text: le.Text, Round: le.Round}
	for k, t := range logTypes {
		if t == le.Type {
			e.Kind = k
		}
	}
	if le.Call != nil {
		c := chat.ToolCall(*le.Call)
		e.Call = &c
	}
	for _, c := range le.Earlier {
		e.Earlier = append(e.Earlier, chat.EarlierCall{ToolCall: chat.ToolCall(c.ToolCall), Round: c.Round})
	}
	if le.Approval != nil {
		a := le.Approval.domain()
		e.Approval = &a
	}
	out.Event(id, e)
	return false, nil
}
