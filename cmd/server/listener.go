package main

import (
	"net"
	"sync"
)

// limitListener caps the connections a replica holds open at max. Past
// it, Accept waits for one to close, and new clients wait in the kernel's
// listen backlog instead of each costing the server its buffers and a
// goroutine. (golang.org/x/net/netutil.LimitListener does the same; this
// is the few lines of it we need, without the dependency.)
func limitListener(ln net.Listener, max int) net.Listener {
	return &limitedListener{Listener: ln, slots: make(chan struct{}, max), closed: make(chan struct{})}
}

type limitedListener struct {
	net.Listener
	slots     chan struct{} // one token per open connection
	closed    chan struct{}
	closeOnce sync.Once
}

// Accept takes a slot, then a connection; the slot is given back when the
// connection closes. A closed listener stops waiting for a slot.
func (l *limitedListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.closed:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitedConn{Conn: c, release: func() { <-l.slots }}, nil
}

func (l *limitedListener) Close() error {
	err := l.Listener.Close()
	l.closeOnce.Do(func() { close(l.closed) })
	return err
}

// limitedConn gives its slot back once, on its first Close.
type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
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
