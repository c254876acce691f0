package http

import (
	"net/http"
	"time"
)

// writeDeadline gives every answer timeout to reach its client, counted
// from the answer's first byte: a client that stops reading cannot hold a
// handler, and the body it holds, for longer. The clock starts at the
// first write, not at the request, so a chat turn may think for as long as
// its own deadline allows. A stream sets a deadline of its own before each
// event (see turnstream.Stream), which replaces this one. net/http clears the
// connection's write deadline once an answer is done, so a kept-alive
// connection's next answer starts afresh.
func writeDeadline(timeout time.Duration) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(&deadlineWriter{ResponseWriter: w, rc: http.NewResponseController(w), timeout: timeout}, r)
		})
	}
}

// deadlineWriter sets the write deadline when the answer starts. It
// unwraps, so http.ResponseController still reaches the connection.
type deadlineWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	armed   bool
}

func (w *deadlineWriter) arm() {
	if !w.armed {
		w.armed = true
		_ = w.rc.SetWriteDeadline(time.Now().Add(w.timeout))
	}
}

func (w *deadlineWriter) WriteHeader(code int) {
	if code >= 200 {
		w.arm()
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *deadlineWriter) Write(b []byte) (int, error) {
	w.arm()
	return w.ResponseWriter.Write(b)
}

func (w *deadlineWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
