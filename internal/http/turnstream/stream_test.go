package turnstream

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// deadlineRecorder is a ResponseWriter that keeps the write deadline last
// set through http.ResponseController.
type deadlineRecorder struct {
	*httptest.ResponseRecorder
	deadline time.Time
}

func (d *deadlineRecorder) SetWriteDeadline(t time.Time) error { d.deadline = t; return nil }

// The last frame is sent by net/http after the handler returns, with the
// end of the body: the deadline it was written under must still hold then,
// or a client that stopped reading just before the end would hold the
// connection for ever.
func TestStreamLastFrameKeepsItsWriteDeadline(t *testing.T) {
	t.Parallel()
	w := &deadlineRecorder{ResponseRecorder: httptest.NewRecorder()}
	r := httptest.NewRequest("POST", "/api/u/chat", nil)
	s := newStream(w, r, slog.New(slog.NewTextHandler(io.Discard, nil)),
		Config{PingInterval: time.Hour, WriteTimeout: time.Minute}, nil, func(http.Header) {})
	s.send("event: start\ndata: {}\n\n")
	s.end("event: done\ndata: {}\n\n")
	s.close(func() string { return "" })
	if w.deadline.IsZero() || time.Until(w.deadline) <= 0 {
		t.Fatalf("write deadline after the stream closed = %v, want the last frame's, in the future", w.deadline)
	}
}
