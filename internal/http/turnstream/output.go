package turnstream

import (
	"net/http"

	"github.com/taskchat/taskchat/internal/chat"
)

// Output is how a turn answers: as one JSON body (the http package's) or
// as a stream (SSE, UI).
// The engine's events reach it as the turn goes (chat.EventStarted first,
// once the conversation is known), and then exactly one of done or fail.
// Each comes with the id of the turn's event it is (EventID), which a
// stream sends with it so that a client can resume after it.
type Output interface {
	Event(id EventID, e chat.Event)
	Done(id EventID, o chat.Outcome)
	Fail(id EventID, err error)
	// Close runs when the handler returns, on every path (panics too):
	// after it the output writes nothing.
	Close()
}

// Problems is the API's one table from error to code and status, which
// the http package holds: a stream answers a failure that comes before its
// first frame as problem JSON, with its status, and tells one that comes
// after as an error event.
type Problems interface {
	// Write answers err as problem JSON, with its status.
	Write(w http.ResponseWriter, r *http.Request, err error)
	// Event is err as a stream's error event, and the status it has.
	Event(err error) (ErrorEvent, int)
}

// internalEvent is the error event of a turn whose handler panicked; its
// code is the API's internal error, as when a frame cannot be encoded.
var internalEvent = ErrorEvent{Code: "internal", Message: "Something went wrong on our side."}
