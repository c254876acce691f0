package http

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/taskchat/taskchat/internal/chat"
	"github.com/taskchat/taskchat/internal/http/turnstream"
	"github.com/taskchat/taskchat/internal/limits"
	"github.com/taskchat/taskchat/internal/runs"
	"github.com/taskchat/taskchat/internal/tasks"
)

// maxChatBody is the largest chat request body accepted.
const maxChatBody = 64 << 10

type chatRequest struct {
	ConversationID *int64 `json:"conversation_id"`
	Message        string `json:"message"`
}

// handleChatCreate runs one chat turn: the token was verified by the
// middleware; this decodes the request, applies the user's limits, hands
// the turn to the engine and encodes what it says, as one JSON body or as
// Server-Sent Events.
func handleChatCreate(log *slog.Logger, engine *chat.Engine, hub *runs.Hub, leases *limits.Leases, cfg StreamConfig) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, stream, err := parseChat(w, r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		newOutput := func() turnstream.Output { return &jsonOutput{w: w, r: r, log: log} }
		if stream {
			newOutput = func() turnstream.Output { return turnstream.NewSSE(w, r, log, cfg, problems{log}) }
		}
		serveTurn(w, r, engine, hub, leases, req, stream, newOutput)
	})
}

// serveTurn applies the user's limits, hands the turn to the engine and
// tells the output what happens. Every front of the chat turn ends here,
// whatever it speaks. The turn runs on a context of its own: a client
// that leaves, or stops reading, does not end it; a stop does (POST
// …/stop). Each event is added to the turn's run as it is told, so that a
// client can resume the stream, on any replica, after any event's id.
func serveTurn(w http.ResponseWriter, r *http.Request, engine *chat.Engine, hub *runs.Hub, leases *limits.Leases, req chat.Request,
	stream bool, newOutput func() turnstream.Output) {
	var held *limits.TurnLease
	if stream {
		// The stream's lease is taken with the turn, in the statement that
		// starts it: a user at the cap is refused before anything is saved.
		held = leases.ForTurn(r.Context(), req.UserID)
		req.Stream = held.Lease
		defer held.Release()
		newOutput = givingBackAtTheEnd(newOutput, held.Release)
	}
	answerTurn(w, r, engine, hub, &req, newOutput, held)
}

// givingBack is a stream's output that gives back the stream's lease just
// before it writes its last event (done, or an error): a client that reads
// the end of one stream and at once opens another finds the lease gone.
type givingBack struct {
	resumable
	release func()
}

func (o givingBack) Done(id turnstream.EventID, out chat.Outcome) {
	o.release()
	o.resumable.Done(id, out)
}

func (o givingBack) Fail(id turnstream.EventID, err error) {
	o.release()
	o.resumable.Fail(id, err)
}

// givingBackAtTheEnd makes newOutput's streams give back the lease with
// release before their last event.
func givingBackAtTheEnd(newOutput func() turnstream.Output, release func()) func() turnstream.Output {
	return func() turnstream.Output {
		out := newOutput()
		if s, ok := out.(resumable); ok {
			return givingBack{s, release}
		}
		return out
	}
}

// admitStream takes the lease of a stream that starts no turn of its own
// yet — a decision's, whose turn goes on only once it is decided — in a
// statement of its own, so that a decision the cap refuses is not made. It
// answers 429 and reports false when the user holds as many streams as
// they may; else release gives the lease back.
func admitStream(w http.ResponseWriter, r *http.Request, leases *limits.Leases, userID string) (release func(), ok bool) {
	giveBack, err := leases.Open(r.Context(), userID)
	if err != nil {
		writeProblem(w, toAPIError(err))
		return nil, false
	}
	return heldWhileConnected(r, giveBack), true
}

// heldWhileConnected returns a func that gives back a stream's lease, also
// called as soon as the client leaves: a client that leaves holds no
// stream, its turn goes on, and it may follow it again at once.
func heldWhileConnected(r *http.Request, giveBack func()) (release func()) {
	giveBack = sync.OnceFunc(giveBack)
	stop := context.AfterFunc(r.Context(), giveBack)
	return func() { stop(); giveBack() }
}

// answerTurn runs the turn on a context of its own, adding each event to
// its run as the output is told it, and answers how it ended. Its frame,
// and the observer's state, are what a stream holds while it waits on its
// model: kept small (a turn's frames push a goroutine's stack past a power
// of two at a few hundred bytes more).
func answerTurn(w http.ResponseWriter, r *http.Request, engine *chat.Engine, hub *runs.Hub, req *chat.Request, newOutput func() turnstream.Output,
	held *limits.TurnLease) {
	ctx, turn := hub.Begin(r.Context())
	defer turn.End(internalErrorEvent) // if the turn panicked; else a no-op
	req.Log = runLog{turn}
	t := &answering{turn: turn, out: newOutput(), info: infoFrom(r.Context()), userID: req.UserID, held: held}
	defer t.out.Close()
	outcome, err := engine.Run(ctx, *req, t.observe)
	var running *tasks.InProgressError
	if errors.As(err, &running) && followRetry(w, r, engine, hub, req, t.out, running.Turn, held) {
		return
	}
	t.answer(w, outcome, err)
}

// answering is a turn's answer as it is written: its output, and the id
// of the last event it was told.
type answering struct {
	turn   *runs.Turn
	out    turnstream.Output
	info   *requestInfo
	userID string
	id     turnstream.EventID
	held   *limits.TurnLease // the stream's lease, if the front took one for the turn
}

// observe adds an event to the turn's run and tells the output.
func (t *answering) observe(e chat.Event) {
	if e.Kind == chat.EventStarted {
		t.info.conversationID = e.ConversationID // for the access log
		t.turn.Started(t.userID, e.RunID)
		t.held.Started()
	}
	t.id = turnstream.EventID{Run: t.turn.RunID(), Seq: t.turn.Add(turnstream.EncodeEvent(e))}
	t.out.Event(t.id, e)
}

// answer tells the output how the turn ended. The run has ended with the
// reply, in its transaction; if the reply could not be stored, it ends
// here, before the client hears the outcome: a client that sends its next
// message at once finds this turn no longer running.
func (t *answering) answer(w http.ResponseWriter, outcome chat.Outcome, err error) {
	id := t.id.Next()
	if err != nil {
		t.turn.End(turnstream.EncodeError(errorEventOf(toAPIError(err))))
		t.out.Fail(id, err)
		return
	}
	t.turn.End(turnstream.EncodeDone(outcome))
	if outcome.Replayed {
		// A replay runs nothing and keeps no run: its stream is a start
		// event and a done event, 0-1 and 0-2.
		id = turnstream.EventID{Run: 0, Seq: 2}
		w.Header().Set("Idempotent-Replayed", "true")
	}
	t.out.Done(id, outcome)
}

// parseChat reads and validates the request; stream reports whether the
// client asked for Server-Sent Events.
func parseChat(w http.ResponseWriter, r *http.Request) (req chat.Request, stream bool, err error) {
	var body chatRequest
	if err := decodeJSON(w, r, maxChatBody, &body); err != nil {
		return chat.Request{}, false, err
	}
	req.UserID = userFrom(r.Context())
	if body.ConversationID != nil {
		if *body.ConversationID <= 0 {
			return chat.Request{}, false, tasks.Invalid("conversation_id", "must be a positive integer")
		}
		req.ConversationID = *body.ConversationID
	}
	if req.Message, err = tasks.ValidateMessage(body.Message); err != nil {
		return chat.Request{}, false, err
	}
	if req.IdempotencyKey, err = idempotencyKey(r); err != nil {
		return chat.Request{}, false, err
	}
	return req, wantsStream(r), nil
}

// idempotencyKey reads the request's Idempotency-Key header: "" without one.
func idempotencyKey(r *http.Request) (string, error) {
	keys := r.Header.Values("Idempotency-Key")
	if len(keys) == 0 {
		return "", nil
	}
	if len(keys) > 1 || !validKey(keys[0]) {
		return "", tasks.Invalid("Idempotency-Key", "must be one header of 1 to 255 visible ASCII characters")
	}
	return unquoteKey(keys[0]), nil
}

// wantsStream reports whether the client asked for Server-Sent Events: its
// Accept lists text/event-stream with a weight above 0. A media range with
// q=0 is one the client does not accept (RFC 9110 §12.4.2).
func wantsStream(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		for _, part := range strings.Split(v, ",") {
			mt, params, _ := strings.Cut(part, ";")
			if strings.EqualFold(strings.TrimSpace(mt), "text/event-stream") && !refused(params) {
				return true
			}
		}
	}
	return false
}

// refused reports whether a media range's parameters give it the weight 0.
func refused(params string) bool {
	for _, p := range strings.Split(params, ";") {
		name, value, _ := strings.Cut(p, "=")
		if strings.EqualFold(strings.TrimSpace(name), "q") {
			q, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
			return err == nil && q == 0
		}
	}
	return false
}

// unquoteKey removes one pair of surrounding double quotes, the draft's
// sf-string form (quotes optional here). Only a pair: trimming every quote
// from either end would make `q1""` and `"q1` the same key.
func unquoteKey(k string) string {
	if len(k) >= 2 && k[0] == '"' && k[len(k)-1] == '"' {
		return k[1 : len(k)-1]
	}
	return k
}

func validKey(k string) bool {
	k = unquoteKey(k)
	if k == "" || len(k) > 255 {
		return false
	}
	for _, c := range []byte(k) {
		if c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

// runLog is a turn's run as the engine ends it (chat.RunLog).
type runLog struct{ turn *runs.Turn }

func (l runLog) Take(o chat.Outcome, err error) *tasks.RunEnd {
	last := turnstream.EncodeDone(o)
	if err != nil {
		last = turnstream.EncodeError(errorEventOf(toAPIError(err)))
	}
	run, first, events := l.turn.Take(last)
	if run == 0 {
		return nil
	}
	return &tasks.RunEnd{RunID: run, First: first, Events: events}
}

func (l runLog) Written() { l.turn.Written() }

// internalErrorEvent is the error event of a turn that panicked.
var internalErrorEvent = turnstream.EncodeError(errorEventOf(internalError))

// jsonOutput answers with one JSON body when the turn is over: the turn's
// output (turnstream.Output) when the client asked for no stream. Its
// failures are problem JSON, from the error table.
type jsonOutput struct {
	w   http.ResponseWriter
	r   *http.Request
	log *slog.Logger
}

func (o *jsonOutput) Event(turnstream.EventID, chat.Event) {}

func (o *jsonOutput) Done(_ turnstream.EventID, out chat.Outcome) {
	writeJSON(o.w, http.StatusOK, turnstream.ChatResponseOf(out))
}

func (o *jsonOutput) Fail(_ turnstream.EventID, err error) { writeError(o.w, o.r, o.log, err) }

func (o *jsonOutput) Close() {}
