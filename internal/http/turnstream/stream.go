package turnstream

import (
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"
)

// Stream is what every stream of a turn shares, whatever its format
// (taskchat's events, the AI SDK's chunks): it sends the headers, writes
// each frame within the write timeout and flushes it, and pings while the
// turn is quiet. A client that stops reading is let go: the turn runs on
// without it (it can resume). Its frames are written whole, one at a time.
type Stream struct {
	w        http.ResponseWriter
	r        *http.Request
	rc       *http.ResponseController
	log      *slog.Logger
	problems Problems
	interval time.Duration
	timeout  time.Duration     // for one frame's write
	header   func(http.Header) // sets the stream's own headers

	mu      sync.Mutex // serialises writes: the turn and the pinger
	started bool
	ended   bool
	// muted drops frames: a resumed stream goes through the events its
	// client has, to know what it sent, without sending them again.
	muted  bool
	pinger *time.Timer
}

// newStream is a stream to w, which answers r; header sets the headers of
// its format.
func newStream(w http.ResponseWriter, r *http.Request, log *slog.Logger, cfg Config, problems Problems, header func(http.Header)) *Stream {
	return &Stream{w: w, r: r, rc: http.NewResponseController(w), log: log, problems: problems,
		interval: cfg.PingInterval, timeout: cfg.WriteTimeout, header: header}
}

// Open sends the headers now, unless they were sent, and begins pinging:
// for a stream whose first event may be a while coming.
func (s *Stream) Open() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.begin()
	s.lost(s.rc.Flush())
}

// begin writes the headers (the stream's own, then ours) once, and begins
// pinging; they go out with the first frame. The caller holds s.mu.
func (s *Stream) begin() {
	if s.started {
		return
	}
	s.started = true
	h := s.w.Header()
	s.header(h)
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	s.w.WriteHeader(http.StatusOK)
	s.pinger = time.AfterFunc(s.interval, s.ping)
}

// Mute drops the frames written until it is called with false; see muted.
func (s *Stream) Mute(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.muted = on
}

// isOpen reports whether the headers were sent: a failure is then told in
// the stream, not with a status.
func (s *Stream) isOpen() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.started
}

// ping writes a comment and re-arms itself, so proxies and clients see the
// connection alive. A timer rather than a goroutine: a stream waiting on
// its model holds no extra stack for it.
func (s *Stream) ping() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended || s.r.Context().Err() != nil {
		return
	}
	s.write(": ping\n\n")
	s.pinger.Reset(s.interval)
}

// send writes frames, after the headers if they were not sent, unless
// the stream has ended.
func (s *Stream) send(frames string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.begin()
	if !s.ended {
		s.write(frames)
	}
}

// end sends the stream's last frames and stops the pinger. A ping already
// running sees ended under the lock and writes nothing. The frames are not
// flushed: the handler returns right after, and net/http then sends them
// with the end of the chunked body in one write instead of two.
func (s *Stream) end(last string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.begin()
	if !s.ended {
		s.writeOnly(last)
		s.ended = true
	}
	if s.pinger != nil {
		s.pinger.Stop()
	}
}

// Gone reports whether the stream has ended: its client stopped reading,
// or its last event was written.
func (s *Stream) Gone() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ended
}

// Abandon ends the stream with no last event: its client is to resume it
// elsewhere.
func (s *Stream) Abandon() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ended = true
}

// close stops the pinger for good; the handler is returning. A stream
// that has not ended by then (the handler panicked) ends with the frames
// fallback returns.
func (s *Stream) close(fallback func() string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started && !s.ended {
		s.write(fallback())
	}
	s.ended = true
	if s.pinger != nil {
		s.pinger.Stop()
	}
	// The write deadline stays as the last frame set it: net/http sends
	// that frame, with the end of the body, after the handler returns, and
	// a client that stopped reading must not hold the connection past it.
	// net/http clears it once the response is out, before the connection
	// serves another request (HTTP/2 deadlines are the stream's own).
}

// write sends str within the write timeout. A client that does not take it
// is treated as gone: the turn is cancelled, stores what it did, and ends.
// The caller holds s.mu.
func (s *Stream) write(str string) {
	if s.writeOnly(str) {
		s.lost(s.rc.Flush())
	}
}

// writeOnly buffers str for the client, within the write timeout, and
// reports whether it did. The caller holds s.mu.
func (s *Stream) writeOnly(str string) bool {
	if s.ended || s.muted {
		return false
	}
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.timeout))
	_, err := io.WriteString(s.w, str)
	s.lost(err)
	return err == nil
}

// lost ends the stream if err says the client is gone. The turn goes on;
// the client can resume it. The caller holds s.mu.
func (s *Stream) lost(err error) {
	if err != nil {
		s.ended = true // nothing more can reach this client
		s.log.InfoContext(s.r.Context(), "stream client gone; the turn goes on without it", "err", err)
	}
}

// failed answers err as problem JSON, with its status, when the stream
// has not started, and reports false. Once it has, it logs a failure on our
// side and returns the error event that tells err in the stream.
func (s *Stream) failed(err error) (ErrorEvent, bool) {
	if !s.isOpen() {
		s.problems.Write(s.w, s.r, err)
		return ErrorEvent{}, false
	}
	ev, status := s.problems.Event(err)
	if status >= 500 && s.r.Context().Err() == nil {
		s.log.ErrorContext(s.r.Context(), "stream failed", "code", ev.Code, "err", err)
	}
	return ev, true
}

// Base is the stream under an output (SSE, UI), which a follower of a
// running turn opens, mutes while it goes through the events its client
// has, and lets go.
func (s *Stream) Base() *Stream { return s }

// Config is how often a stream pings, and how long one event may take to
// reach a stream's client before the client counts as gone.
type Config struct {
	PingInterval time.Duration
	WriteTimeout time.Duration
}
