package main

import (
	"net"
	"net/http"
	"testing"
)

// The connection closed to make room is the quiet one used least
// recently: here the connections are used in the order 2, 0, 1, and 1 is
// still serving a request, so 2 goes first, then 0; a busy one never.
func TestLimitListenerClosesTheQuietOneUsedLeastRecently(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := limitListener(ln, 3, nil)
	defer l.Close()
	accepted := make([]net.Conn, 3)
	clients := make([]net.Conn, 3)
	for i := range accepted {
		if clients[i], err = net.Dial("tcp", ln.Addr().String()); err != nil {
			t.Fatal(err)
		}
		defer clients[i].Close()
		if accepted[i], err = l.Accept(); err != nil {
			t.Fatal(err)
		}
	}
	for _, i := range []int{2, 0, 1} {
		l.ConnState(accepted[i], http.StateActive)
	}
	l.ConnState(accepted[2], http.StateIdle)
	l.ConnState(accepted[0], http.StateIdle) // 1 stays busy
	closed := func(i int) bool {
		return accepted[i].(*limitedConn).elem == nil
	}
	for _, want := range []int{2, 0} {
		l.closeLeastRecentlyUsed()
		if !closed(want) {
			t.Fatalf("connection %d is still open; closed: 0 %v, 1 %v, 2 %v", want, closed(0), closed(1), closed(2))
		}
	}
	l.closeLeastRecentlyUsed()
	if closed(1) {
		t.Fatal("a connection serving a request was closed to make room")
	}
}
