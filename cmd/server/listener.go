package main

import (
	"container/list"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/taskchat/taskchat/internal/telemetry"
)

// silentGrace is how long a new connection may stay silent before it may be
// closed to make room: a client sends its request as soon as it connects,
// so one that has sent none after a second is holding a slot, not using it.
const silentGrace = time.Second

// limitListener caps the connections a replica holds open at max, each
// costing the server its buffers and a goroutine.
//
// A connection that is serving a request is busy; one that is not (idle
// between two requests of a kept-alive client, or connected but silent for
// over silentGrace, slowloris-style) is quiet. At the cap, a new connection
// makes room by closing the quiet connection used least recently (whose
// last request began, or which connected, the longest ago), so that cheap
// idle sockets never lock out the next client, a health check included.
// Only when every connection is busy does the new one wait, accepted but
// unserved, for one to turn quiet or close; meanwhile the clients after it
// wait in the kernel's listen backlog.
//
// Each connection closed to make room is counted in tel (which may be nil).
// The http.Server must report each connection's state to ConnState.
func limitListener(ln net.Listener, max int, tel *telemetry.Telemetry) *limitedListener {
	return &limitedListener{
		Listener: ln,
		tel:      tel,
		slots:    make(chan struct{}, max),
		idled:    make(chan struct{}, 1),
		closed:   make(chan struct{}),
	}
}

type limitedListener struct {
	net.Listener
	tel       *telemetry.Telemetry
	slots     chan struct{} // one token per open connection
	idled     chan struct{} // signalled when a connection turns idle
	closed    chan struct{}
	closeOnce sync.Once

	mu    sync.Mutex
	conns list.List // of *limitedConn, used least recently first
}

// Accept takes a connection, then a slot for it; the slot is given back
// when the connection closes. A closed listener stops waiting for a slot.
func (l *limitedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if !l.takeSlot() {
		c.Close()
		return nil, net.ErrClosed
	}
	lc := &limitedConn{Conn: c, l: l, silent: true, since: time.Now()}
	l.mu.Lock()
	lc.elem = l.conns.PushBack(lc)
	l.mu.Unlock()
	return lc, nil
}

// takeSlot takes a free slot; else one that the quiet connection used
// least recently gives up; else it waits for a slot to come free, a
// connection to turn idle or a silent one to outlast its grace. It reports
// false once the listener is closed.
func (l *limitedListener) takeSlot() bool {
	for {
		select {
		case l.slots <- struct{}{}:
			return true
		default:
		}
		var later <-chan time.Time
		if wait := l.closeLeastRecentlyUsed(); wait > 0 {
			later = time.After(wait)
		}
		select {
		case l.slots <- struct{}{}:
			return true
		case <-l.idled:
		case <-later:
		case <-l.closed:
			return false
		}
	}
}

// closeLeastRecentlyUsed closes the quiet connection used least recently,
// but not a silent one within its silentGrace. When it closes none, it
// returns how long until the first silent one may be closed, or 0 when
// there is none.
func (l *limitedListener) closeLeastRecentlyUsed() (wait time.Duration) {
	l.mu.Lock()
	now := time.Now()
	for e := l.conns.Front(); e != nil; e = e.Next() {
		c := e.Value.(*limitedConn)
		if c.busy {
			continue
		}
		if left := c.since.Add(silentGrace).Sub(now); c.silent && left > 0 {
			if wait == 0 {
				wait = left
			}
			continue
		}
		c.busy = true // never chosen twice
		l.mu.Unlock()
		l.tel.CountEvictedConnection()
		// net/http's goroutine for c sees its read fail and ends; the slot
		// is given back now, by this Close.
		c.Close()
		return 0
	}
	l.mu.Unlock()
	return wait
}

// ConnState is the http.Server's ConnState hook: it keeps the listener
// told which connections are busy, and when each was last used.
func (l *limitedListener) ConnState(c net.Conn, state http.ConnState) {
	lc, ok := c.(*limitedConn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if lc.elem == nil { // closed
		return
	}
	switch state {
	case http.StateActive:
		lc.busy, lc.silent, lc.since = true, false, time.Now()
		l.conns.MoveToBack(lc.elem)
	case http.StateHijacked:
		lc.busy = true // no longer net/http's to read from
	case http.StateIdle:
		lc.busy = false
		select {
		case l.idled <- struct{}{}:
		default:
		}
	}
}

func (l *limitedListener) Close() error {
	err := l.Listener.Close()
	l.closeOnce.Do(func() { close(l.closed) })
	return err
}

// limitedConn gives its slot back once, on its first Close.
type limitedConn struct {
	net.Conn
	l    *limitedListener
	once sync.Once

	// Guarded by l.mu: its place in l.conns (nil once closed); whether it
	// serves a request, or has never sent one; and since when it does, or
	// since it connected.
	elem   *list.Element
	busy   bool
	silent bool
	since  time.Time
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.mu.Lock()
		c.l.conns.Remove(c.elem)
		c.elem = nil
		c.l.mu.Unlock()
		<-c.l.slots
	})
	return err
}

// CloseWrite lets net/http half-close the connection after an error answer
// (a 431, say), so the client reads the answer before the close, as it
// would on a bare *net.TCPConn.
func (c *limitedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
