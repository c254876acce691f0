package mcptools

import (
	"container/list"
	"context"
	"fmt"
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
type Servers struct {
	build func(userID string) *mcp.Server
	max   int

	mu    sync.Mutex
	order *list.List // of *cachedServer, most recently used first
	byID  map[string]*list.Element
}

type cachedServer struct {
	userID string
	server *mcp.Server
}

// NewServers returns a cache of at most max users' servers over svc, as
// NewServer builds them: for the chat engine, in process.
func NewServers(svc *tasks.Service, max int) *Servers {
	return newServers(func(userID string) *mcp.Server { return NewServer(userID, svc) }, max)
}

// NewRemoteServers returns a cache of at most max users' servers over svc,
// as NewRemoteServer builds them: for outside clients.
func NewRemoteServers(svc *tasks.Service, max int) *Servers {
	return newServers(func(userID string) *mcp.Server { return NewRemoteServer(userID, svc) }, max)
}

func newServers(build func(string) *mcp.Server, max int) *Servers {
	return &Servers{build: build, max: max, order: list.New(), byID: map[string]*list.Element{}}
}

// Connect opens a client session on userID's server, building the server
// if it is not cached. Closing the session ends the server side too.
func (s *Servers) Connect(ctx context.Context, userID string) (*mcp.ClientSession, error) {
	return connect(ctx, s.Server(userID))
}

// Server returns userID's server, building it if it is not cached.
func (s *Servers) Server(userID string) *mcp.Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.byID[userID]; ok {
		s.order.MoveToFront(e)
		return e.Value.(*cachedServer).server
	}
	srv := s.build(userID)
	s.byID[userID] = s.order.PushFront(&cachedServer{userID: userID, server: srv})
	for s.order.Len() > s.max {
		oldest := s.order.Back()
		s.order.Remove(oldest)
		delete(s.byID, oldest.Value.(*cachedServer).userID)
	}
	return srv
}

// connect joins a new client session to server in process.
func connect(ctx context.Context, server *mcp.Server) (*mcp.ClientSession, error) {
	serverT, clientT := newPipeTransports()
	if _, err := server.Connect(ctx, serverT, nil); err != nil {
		return nil, fmt.Errorf("mcp server: %w", err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "taskchat-agent", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, clientT, nil)
	if err != nil {
		return nil, fmt.Errorf("mcp client: %w", err)
	}
	return cs, nil
}
