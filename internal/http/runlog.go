package http

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/taskchat/taskchat/internal/chat"
)

// eventID is the id of one event of a turn's stream: its run and its
// number within the run, sent as "<run>-<n>" (a plain EventSource sends it
// back as Last-Event-ID when it reconnects). The run makes an id from an
// earlier turn of the conversation mean nothing for the next one; n counts
// from 1 within the turn. A keyed retry's replay, which runs nothing, has
// run 0.
type eventID struct {
	run int64
	seq int
}

func (id eventID) String() string {
	return strconv.FormatInt(id.run, 10) + "-" + strconv.Itoa(id.seq)
}

// before is the id of the event before id.
func (id eventID) before() eventID { return eventID{id.run, max(id.seq-1, 0)} }

// next is the id of the event after id.
func (id eventID) next() eventID { return eventID{id.run, id.seq + 1} }

// parseEventID reads a Last-Event-ID; ok is false when it is not one.
func parseEventID(s string) (id eventID, ok bool) {
	run, seq, found := strings.Cut(strings.TrimSpace(s), "-")
	r, err1 := strconv.ParseInt(run, 10, 64)
	n, err2 := strconv.Atoi(seq)
	if !found || err1 != nil || err2 != nil || r < 0 || n < 0 {
		return eventID{}, false
	}
	return eventID{r, n}, true
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
	Call           *toolCallJSON  `json:"call,omitempty"`
	Earlier        []earlierJSON  `json:"earlier,omitempty"`
	Outcome        *loggedOutcome `json:"outcome,omitempty"`
	Error          *errorEvent    `json:"error,omitempty"`
}

type earlierJSON struct {
	toolCallJSON
	Round int `json:"round"`
}

// loggedOutcome is how a turn ended, as its done event keeps it.
type loggedOutcome struct {
	chatResponse
	TurnID int64 `json:"turn_id,omitempty"`
}

// The types of logEvent.
const (
	logStarted    = "started"
	logDelta      = "delta"
	logToolCall   = "tool_call"
	logToolResult = "tool_result"
	logDone       = "done"
	logError      = "error"
)

var logTypes = map[chat.EventKind]string{chat.EventStarted: logStarted, chat.EventDelta: logDelta,
	chat.EventToolCall: logToolCall, chat.EventToolResult: logToolResult}

// encodeEvent is e as its run keeps it.
func encodeEvent(e chat.Event) []byte {
	le := logEvent{Type: logTypes[e.Kind], ConversationID: e.ConversationID, TurnID: e.TurnID, Text: e.Text, Round: e.Round}
	if e.Call != nil {
		c := toolCallJSON(*e.Call)
		le.Call = &c
	}
	for _, c := range e.Earlier {
		le.Earlier = append(le.Earlier, earlierJSON{toolCallJSON(c.ToolCall), c.Round})
	}
	return mustJSON(le)
}

// encodeDone is a turn's done event as its run keeps it.
func encodeDone(o chat.Outcome) []byte {
	return mustJSON(logEvent{Type: logDone, Outcome: &loggedOutcome{chatResponseOf(o), o.TurnID}})
}

// internalErrorEvent is the error event of a turn that panicked.
var internalErrorEvent = encodeError(internalError)

// encodeError is a turn's error event as its run keeps it.
func encodeError(ae *apiError) []byte {
	ev := errorEventOf(ae)
	return mustJSON(logEvent{Type: logError, Error: &ev})
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // every member is JSON already
	}
	return b
}

// replay writes a logged event to out, with its id, and reports whether
// it was the turn's last.
func replay(out output, id eventID, data []byte) (last bool, err error) {
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
		out.done(id, chat.Outcome{ConversationID: o.ConversationID, TurnID: o.TurnID, Reply: o.Response,
			ToolCalls: calls, Interrupted: o.Interrupted, Stopped: o.Stopped})
		return true, nil
	case logError:
		out.fail(id, &apiError{code: le.Error.Code, detail: le.Error.Message, toolCalls: le.Error.ToolCalls})
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
		e.Earlier = append(e.Earlier, chat.EarlierCall{ToolCall: chat.ToolCall(c.toolCallJSON), Round: c.Round})
	}
	out.event(id, e)
	return false, nil
}

// errorEventOf is the error event that tells ae.
func errorEventOf(ae *apiError) errorEvent {
	return errorEvent{Code: ae.code, Message: ae.detail, ToolCalls: ae.toolCalls}
}
