// Package logtest captures what a service, a handler or a child process
// writes while a test reads it. Tests of several packages read logs as
// they are written (a server that logs "listening" and the address, a
// verifier that logs each JWKS fetch), so the buffer they share lives
// here once rather than in each package's tests.
package logtest

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer that a writer and a test may use at once: a
// logger, or a child process's stdout and stderr, writes to it from its
// own goroutines while the test reads what it has so far. The zero value
// is an empty buffer ready to use.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p, as io.Writer asks.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
