package store

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Listener is a replica's one connection that LISTENs, whatever the number
// of channels and of those waiting on them. It reconnects after the
// connection is lost (a PostgreSQL restart, a network fault), LISTENs again
// to every channel it had, and then says so with its reconnected callback:
// notifications sent meanwhile are lost, so whoever waits must read again
// what they wait for. A notification wakes; it carries nothing that is not
// in a table.
//
// It must reach PostgreSQL directly: a pooler in transaction mode (PgBouncer)
// does not keep a session's LISTEN (LISTEN_DATABASE_URL).
type Listener struct {
	url         string
	log         *slog.Logger
	notify      func(channel, payload string)
	reconnected func()

	mu        sync.Mutex
	want      map[string]int  // channel → how many asked for it
	listening map[string]bool // channels LISTENed on the current connection
	dropping  map[string]bool // channels being UNLISTENed: not to be trusted
	waiters   map[string][]chan bool
	connected bool
	dirty     bool               // a channel was asked for or given up since the last sync
	interrupt context.CancelFunc // ends the wait for a notification, to LISTEN or UNLISTEN
	done      chan struct{}
	stop      context.CancelFunc
}

// Listen starts a Listener on databaseURL that LISTENs to channels always,
// and calls notify with each notification and reconnected after every
// connection made, the first one included. Close stops it.
func Listen(databaseURL string, log *slog.Logger, channels []string, notify func(channel, payload string), reconnected func()) *Listener {
	ctx, stop := context.WithCancel(context.Background())
	l := &Listener{url: databaseURL, log: log, notify: notify, reconnected: reconnected,
		want: map[string]int{}, listening: map[string]bool{}, dropping: map[string]bool{}, waiters: map[string][]chan bool{},
		done: make(chan struct{}), stop: stop}
	for _, c := range channels {
		l.want[c]++
	}
	go l.run(ctx)
	return l
}

// Close stops the listener and closes its connection.
func (l *Listener) Close() {
	l.stop()
	<-l.done
}

// Connected reports whether the listener holds a connection now, so that
// a notification sent now reaches it.
func (l *Listener) Connected() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.connected
}

// Subscribe asks for channel's notifications, and reports whether they are
// coming: LISTEN ran on the current connection before it returned. Until a
// connection is back it reports false at once, and the caller polls; the
// channel is LISTENed again on every new connection all the same. Each
// Subscribe is undone by one Unsubscribe.
func (l *Listener) Subscribe(ctx context.Context, channel string) bool {
	l.mu.Lock()
	l.want[channel]++
	if l.listening[channel] && !l.dropping[channel] {
		l.mu.Unlock()
		return true
	}
	if !l.connected {
		l.mu.Unlock()
		return false
	}
	ready := make(chan bool, 1)
	l.waiters[channel] = append(l.waiters[channel], ready)
	l.wake()
	l.mu.Unlock()
	t := time.NewTimer(2 * time.Second)
	defer t.Stop()
	select {
	case ok := <-ready:
		return ok
	case <-ctx.Done():
	case <-t.C:
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.waiters[channel] = slices.DeleteFunc(l.waiters[channel], func(w chan bool) bool { return w == ready })
	select {
	case ok := <-ready: // answered meanwhile
		return ok
	default:
		return false
	}
}

// Unsubscribe undoes one Subscribe; the last one UNLISTENs.
func (l *Listener) Unsubscribe(channel string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.want[channel]--; l.want[channel] <= 0 {
		delete(l.want, channel)
		l.wake()
	}
}

// wake interrupts the wait for a notification, or the next one before it
// starts. The caller holds l.mu.
func (l *Listener) wake() {
	l.dirty = true
	if l.interrupt != nil {
		l.interrupt()
	}
}

func (l *Listener) run(ctx context.Context) {
	defer close(l.done)
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := l.session(ctx)
		l.mu.Lock()
		l.connected, l.listening, l.dropping = false, map[string]bool{}, map[string]bool{}
		for ch, ws := range l.waiters {
			for _, w := range ws {
				w <- false
			}
			delete(l.waiters, ch)
		}
		l.mu.Unlock()
		if ctx.Err() != nil {
			return
		}
		l.log.Warn("listener: connection lost; reconnecting", "err", err, "in", backoff.String())
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
		if errors.Is(err, errListenerHealthy) {
			backoff = 100 * time.Millisecond
		}
	}
}

// errListenerHealthy marks a session that had connected: the next attempt
// starts again from the shortest wait.
var errListenerHealthy = errors.New("listener connection lost")

// session connects, LISTENs, and delivers notifications until the
// connection fails or ctx ends.
func (l *Listener) session(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	conn, err := pgx.Connect(cctx, l.url)
	cancel()
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if err := l.sync(ctx, conn); err != nil {
		return err
	}
	l.mu.Lock()
	l.connected = true
	l.mu.Unlock()
	l.reconnected()
	for {
		if err := l.sync(ctx, conn); err != nil {
			return errors.Join(errListenerHealthy, err)
		}
		n, err := l.wait(ctx, conn)
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case n != nil:
			l.notify(n.Channel, n.Payload)
		case err != nil && !errors.Is(err, context.Canceled):
			return errors.Join(errListenerHealthy, err)
		}
	}
}

// wait waits for a notification until it comes, the wait is interrupted
// (nil, context.Canceled), or half a minute passes, when the connection is
// checked (nil, nil).
func (l *Listener) wait(ctx context.Context, conn *pgx.Conn) (*pgconn.Notification, error) {
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	l.mu.Lock()
	if l.dirty {
		l.mu.Unlock()
		return nil, context.Canceled
	}
	l.interrupt = cancel
	l.mu.Unlock()
	n, err := conn.WaitForNotification(wctx)
	l.mu.Lock()
	l.interrupt = nil
	l.mu.Unlock()
	if n != nil {
		return n, nil
	}
	if errors.Is(wctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		return nil, conn.Ping(pctx)
	}
	if wctx.Err() != nil && !conn.IsClosed() {
		return nil, context.Canceled
	}
	return nil, err
}

// sync LISTENs to the channels wanted and UNLISTENs from those no longer
// wanted, then answers those waiting on Subscribe.
func (l *Listener) sync(ctx context.Context, conn *pgx.Conn) error {
	l.mu.Lock()
	l.dirty = false
	var add, drop []string
	for ch := range l.want {
		if !l.listening[ch] {
			add = append(add, ch)
		}
	}
	for ch := range l.listening {
		if l.want[ch] == 0 {
			drop = append(drop, ch)
			l.dropping[ch] = true // a Subscribe meanwhile waits for the next LISTEN
		}
	}
	l.mu.Unlock()
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for _, ch := range add {
		if _, err := conn.Exec(sctx, "LISTEN "+pgx.Identifier{ch}.Sanitize()); err != nil {
			return err
		}
	}
	for _, ch := range drop {
		if _, err := conn.Exec(sctx, "UNLISTEN "+pgx.Identifier{ch}.Sanitize()); err != nil {
			return err
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, ch := range add {
		l.listening[ch] = true
	}
	for _, ch := range drop {
		delete(l.listening, ch)
		delete(l.dropping, ch)
		if l.want[ch] > 0 {
			l.dirty = true // asked for again while it was UNLISTENed
		}
	}
	for ch, ws := range l.waiters {
		if !l.listening[ch] {
			continue // asked for since this sync began: the next one LISTENs
		}
		for _, w := range ws {
			w <- true
		}
		delete(l.waiters, ch)
	}
	return nil
}
