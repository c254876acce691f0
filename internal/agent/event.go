package agent

// EventKind says what an Event reports.
type EventKind int

// The events of a turn, in the order a turn produces them: text deltas and,
// per tool call, EventToolCall then EventToolResult, interleaved as they
// happen; EventDone exactly once, last.
const (
	EventDelta      EventKind = iota + 1 // Text holds the new text
	EventToolCall                        // Call holds the call, without result
	EventToolResult                      // Call holds the call with its result
	EventDone                            // Result holds the turn's result, Err its error
)

// Event is one thing that happened in a turn.
type Event struct {
	Kind   EventKind
	Text   string
	Call   *Call
	Result *Result
	Err    error
}

// Observer receives a turn's events, synchronously and in order, from the
// goroutine that called Run. It must not block for long: the turn waits.
type Observer func(Event)
