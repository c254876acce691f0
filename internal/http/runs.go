package http

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/taskchat/taskchat/internal/chat"
	"github.com/taskchat/taskchat/internal/http/turnstream"
	"github.com/taskchat/taskchat/internal/limits"
	"github.com/taskchat/taskchat/internal/runs"
	"github.com/taskchat/taskchat/internal/tasks"
)

// errStreamGone ends a follower whose client no longer reads.
var errStreamGone = errors.New("the follower's client stopped reading")

// resumable is a stream a follower can write a turn's logged events to.
type resumable interface {
	turnstream.Output
	Base() *turnstream.Stream
}

// handleConversationStreamShow streams the conversation's running turn, on
// whichever replica it runs, from its start or after Last-Event-ID, then
// follows it live to its end; 204 when no turn runs.
func handleConversationStreamShow(log *slog.Logger, hub *runs.Hub, leases *limits.Leases, cfg StreamConfig) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := conversationID(r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		run, err := hub.Latest(r.Context(), userFrom(r.Context()), id)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		follow(w, r, hub, leases, run, turnstream.NewSSE(w, r, log, cfg, problems{log}))
	})
}

// handleChatUIStreamShow resumes a /chat/ui turn as a UI message stream:
// the route the AI SDK's DefaultChatTransport calls for useChat({resume:
// true}). 204 when no turn of the chat runs, or the chat has none yet.
func handleChatUIStreamShow(log *slog.Logger, hub *runs.Hub, leases *limits.Leases, cfg StreamConfig) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chatID, _ := pathParam(r, "chat_id")
		if !chatIDPattern.MatchString(chatID) {
			writeError(w, r, log, tasks.Invalid("chat_id", "must be 1 to 128 letters, digits, '_', '.', ':' or '-'"))
			return
		}
		run, err := hub.LatestOfChat(r.Context(), userFrom(r.Context()), chatID)
		if errors.Is(err, tasks.ErrNotFound) {
			w.WriteHeader(http.StatusNoContent) // a new chat: nothing to resume
			return
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		infoFrom(r.Context()).conversationID = run.ConversationID
		follow(w, r, hub, leases, run, turnstream.NewUI(w, r, log, cfg, problems{log}))
	})
}

// follow streams run to out: every event, though those up to the client's
// Last-Event-ID only go through out (to rebuild what it sent), then live
// until the run's last event. A run that is over is 204, unless the
// client's Last-Event-ID is of it and it has more to send: the events
// after it, or, when the run was cut short, the error that says so (whose
// id, one past the last written, then makes it 204).
func follow(w http.ResponseWriter, r *http.Request, hub *runs.Hub, leases *limits.Leases, run tasks.Run, out resumable) {
	after := 0
	if last, ok := turnstream.ParseEventID(r.Header.Get("Last-Event-ID")); ok && last.Run == run.ID {
		after = last.Seq
	}
	resuming := after > 0 && (after < run.LastSeq || after == run.LastSeq && !run.Ended)
	if !run.Running() && !resuming {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	userID := userFrom(r.Context())
	giveBack, err := leases.Open(r.Context(), userID)
	if err != nil {
		writeProblem(w, toAPIError(err))
		return
	}
	release := heldWhileConnected(r, giveBack)
	defer release()
	defer out.Close()
	s := out.Base()
	end := givingBack{out, release} // its last event, or its failure
	s.Open()
	seen := after
	err = hub.Follow(r.Context(), userID, run.ID, 0, func(ev tasks.RunEvent) (bool, error) {
		s.Mute(ev.Seq <= after)
		last, err := turnstream.Replay(end, turnstream.EventID{Run: run.ID, Seq: ev.Seq}, ev.Data)
		s.Mute(false)
		seen = max(seen, ev.Seq)
		if err == nil && !last && s.Gone() {
			err = errStreamGone // the client stopped reading: let it go
		}
		return last, err
	})
	next := turnstream.EventID{Run: run.ID, Seq: seen + 1}
	switch {
	case err == nil:
	case errors.Is(err, runs.ErrCutShort):
		end.Fail(next, apiErr(codeUnavailable, "The reply was cut short: the server writing it stopped. What it had done is saved; reload the conversation, and send your message again if it is not answered."))
	case errors.Is(err, runs.ErrClosing):
		s.Abandon() // this replica is shutting down: the client resumes on another
	case r.Context().Err() != nil, errors.Is(err, errStreamGone):
		// The client left.
	default:
		end.Fail(next, err)
	}
}

// handleConversationStop stops the conversation's running turn, wherever
// it runs: 202 once it is asked (it has then ended, unless ended is
// false), 204 when no turn runs.
func handleConversationStop(log *slog.Logger, hub *runs.Hub) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := conversationID(r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		run, ended, err := hub.Stop(r.Context(), userFrom(r.Context()), id)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		if run.ID == 0 {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		writeJSON(w, http.StatusAccepted, stopResponse{ConversationID: id, TurnID: run.TurnID, Ended: ended})
	})
}

// followRetry answers a keyed retry whose first request's turn still runs
// (its client left, say): it follows that turn to its end instead of
// refusing the retry — a stream sends the turn's events, as GET …/stream
// does, and JSON waits for the end — and answers as the key's replay
// would. A turn that ended in the meantime is replayed at once. It reports
// false, having written nothing, when the key's turn is not the
// conversation's latest; the retry then hears request_in_progress.
func followRetry(w http.ResponseWriter, r *http.Request, engine *chat.Engine, hub *runs.Hub, req *chat.Request, out turnstream.Output, turn tasks.TurnRef,
	held *limits.TurnLease) bool {
	run, err := hub.Latest(r.Context(), req.UserID, turn.ConversationID)
	if err != nil || run.TurnID != turn.TurnID {
		return false
	}
	if run.Running() {
		if stream, ok := out.(resumable); ok {
			// The retry started no turn, so took no lease: its stream takes
			// one now, as a follower's does.
			if err := held.Take(r.Context()); err != nil {
				writeProblem(w, toAPIError(err))
				return true
			}
			followRetryStream(w, r, hub, req.UserID, run, out, stream.Base())
			return true
		}
		// JSON: once the turn has ended, the key holds its outcome.
		if err := hub.Follow(r.Context(), req.UserID, run.ID, run.LastSeq, func(tasks.RunEvent) (bool, error) { return false, nil }); err != nil {
			return false
		}
	}
	outcome, err := engine.Run(context.WithoutCancel(r.Context()), *req, nil)
	if err != nil {
		out.Fail(turnstream.EventID{}, err)
		return true
	}
	if outcome.Replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	out.Done(turnstream.EventID{Run: 0, Seq: 2}, outcome)
	return true
}

// followRetryStream sends a running turn's events to a keyed retry's
// stream, from its start, to its end.
func followRetryStream(w http.ResponseWriter, r *http.Request, hub *runs.Hub, userID string, run tasks.Run, out turnstream.Output, s *turnstream.Stream) {
	w.Header().Set("Idempotent-Replayed", "true")
	s.Open()
	err := hub.Follow(r.Context(), userID, run.ID, 0, func(ev tasks.RunEvent) (bool, error) {
		return turnstream.Replay(out, turnstream.EventID{Run: run.ID, Seq: ev.Seq}, ev.Data)
	})
	switch {
	case errors.Is(err, runs.ErrClosing):
		s.Abandon() // this replica is shutting down: the client retries elsewhere
	case err != nil && r.Context().Err() == nil:
		out.Fail(turnstream.EventID{Run: run.ID, Seq: run.LastSeq + 1}, apiErr(codeRequestInProgress, "The first request with this Idempotency-Key is still being answered, and could not be followed to its end; retry after it finishes."))
	}
}
