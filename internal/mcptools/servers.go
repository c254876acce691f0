package mcptools

import (
	"container/list"
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskchat/taskchat/internal/tasks"
)

// Servers keeps the MCP servers of the most recently active users, so a
// turn or a request pays only for a fresh session, not for building the
// user's server: the go-sdk validates every tool's schema anew in each
// server it builds. A server holds the user it is bound to and nothing
// else — no task, no conversation — so dropping one changes nothing but
// the next turn's cost.
//
// In process, it also keeps each such user's last idle client session
// (Session), so a turn's first tool call need not open one: the session is
// bound to its user's server like the server itself, and a turn's own
// record travels with each call (CallMeta), so a session carries nothing
// from one turn to the next.
type Servers struct {
	// Log is where the servers log a tool handler's panic; nil means
	// slog's default logger. Each server reads it once, as it is built:
	// set it before the first call.
	Log *slog.Logger

	build func(userID string) *mcp.Server
	max   int
	// records are the records of the calls under way, which CallMeta puts
	// and the servers built here take; nil for NewRemoteServers', which
	// never read one.
	records *callRecords

	mu    sync.Mutex
	order *list.List // of *cachedServer, most recently used first
	byID  map[string]*list.Element
}

type cachedServer struct {
	userID string
	server *mcp.Server
	idle   *mcp.ClientSession // a session no turn holds, or nil
}

// NewServers returns a cache of at most max users' servers over svc, for
// the chat engine, in process: each takes the record of every call it is
// sent from the table of records these servers share (see CallMeta).
func NewServers(svc *tasks.Service, max int) *Servers {
	s := newServers(max)
	s.records = &callRecords{}
	s.build = func(userID string) *mcp.Server { return newTurnServer(userID, svc, s.records, s.Log) }
	return s
}

// NewRemoteServers returns a cache of at most max users' servers over svc,
// as NewRemoteServer builds them: for outside clients.
func NewRemoteServers(svc *tasks.Service, max int) *Servers {
	s := newServers(max)
	s.build = func(userID string) *mcp.Server { return newRemoteServer(userID, svc, s.Log) }
	return s
}

func newServers(max int) *Servers {
	return &Servers{max: max, order: list.New(), byID: map[string]*list.Element{}}
}

// CallMeta is the _meta of a call made for rec on userID's server, one of
// these (NewServers'), and forget, to be called once the call has
// returned. The _meta names rec's entry in the servers' table of records,
// under a key of 128 random bits; userID's server takes it, once. A call
// whose entry is gone (forgotten, taken, or never there), or that is
// another user's, fails as a call with an unreadable record does: nothing
// is changed. It panics on NewRemoteServers' servers, which read no
// record: asking it of them is a mistake in the wiring.
func (s *Servers) CallMeta(userID string, rec tasks.CallRecord) (meta mcp.Meta, forget func()) {
	if s.records == nil {
		panic("mcptools: CallMeta on servers for outside clients, which read no call record")
	}
	return s.records.put(userID, rec)
}

// Connect opens a new client session on userID's server, building the
// server if it is not cached. Closing the session ends the server side too.
func (s *Servers) Connect(ctx context.Context, userID string) (*mcp.ClientSession, error) {
	return connect(ctx, s.Server(userID))
}

// Session lends a client session on userID's server: the user's idle one,
// or a new one. release gives it back, to be lent again, when reuse is
// true and the user's server is still cached and has no idle session;
// otherwise it closes it. A caller passes reuse false when a call on the
// session failed: a session in doubt is not lent again.
func (s *Servers) Session(ctx context.Context, userID string) (cs *mcp.ClientSession, release func(reuse bool), err error) {
	s.mu.Lock()
	e, evicted := s.entry(userID)
	cs, e.idle = e.idle, nil
	s.mu.Unlock()
	closeAll(evicted)
	if cs == nil {
		if cs, err = connect(ctx, e.server); err != nil {
			return nil, nil, err
		}
	}
	return cs, func(reuse bool) { s.giveBack(e, cs, reuse) }, nil
}

// giveBack keeps cs as e's idle session, or closes it.
func (s *Servers) giveBack(e *cachedServer, cs *mcp.ClientSession, reuse bool) {
	s.mu.Lock()
	if el, ok := s.byID[e.userID]; reuse && ok && el.Value == e && e.idle == nil {
		e.idle = cs
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	_ = cs.Close()
}

// Server returns userID's server, building it if it is not cached.
func (s *Servers) Server(userID string) *mcp.Server {
	s.mu.Lock()
	e, evicted := s.entry(userID)
	s.mu.Unlock()
	closeAll(evicted)
	return e.server
}

// entry returns userID's entry, building it if it is not cached; s.mu must
// be held. Entries past max are dropped; their idle sessions are returned
// for the caller to close once it has let go of the lock.
func (s *Servers) entry(userID string) (e *cachedServer, evicted []*mcp.ClientSession) {
	if el, ok := s.byID[userID]; ok {
		s.order.MoveToFront(el)
		return el.Value.(*cachedServer), nil
	}
	e = &cachedServer{userID: userID, server: s.build(userID)}
	s.byID[userID] = s.order.PushFront(e)
	for s.order.Len() > s.max {
		oldest := s.order.Remove(s.order.Back()).(*cachedServer)
		delete(s.byID, oldest.userID)
		if oldest.idle != nil {
			evicted = append(evicted, oldest.idle)
		}
	}
	return e, evicted
}

func closeAll(sessions []*mcp.ClientSession) {
	for _, cs := range sessions {
		_ = cs.Close()
	}
}

// inProcessProtocol is the MCP version an in-process session speaks. Such a
// session lives for many calls (Servers lends it from turn to turn), which
// is what the session-based protocol is made for: it initializes once. The
// stateless 2026-07-28 protocol instead carries the client's version,
// capabilities and identity in every request's _meta, which the server
// decodes twice a call, for nothing a session does not already know
// (about 10 KB and 90 allocations a chat turn).
const inProcessProtocol = "2025-11-25"

// connect joins a new client session to server in process. The session
// may outlive the call that opens it (Servers lends it to later turns), and
// the SDK keeps the context it is opened with, values and all, for the
// session's life: the server's handlers run in it. So it is opened with
// none of ctx's values (a request's, a span, a logger), only with its
// cancellation while connecting.
func connect(ctx context.Context, server *mcp.Server) (*mcp.ClientSession, error) {
	bare, stop := context.WithCancel(context.Background())
	defer stop()
	defer context.AfterFunc(ctx, stop)()
	ctx = bare
	serverT, clientT := newPipeTransports()
	if _, err := server.Connect(ctx, serverT, nil); err != nil {
		return nil, fmt.Errorf("mcp server: %w", err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "taskchat-agent", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, clientT, &mcp.ClientSessionOptions{ProtocolVersion: inProcessProtocol})
	if err != nil {
		return nil, fmt.Errorf("mcp client: %w", err)
	}
	return cs, nil
}
