package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ToolSource gives a turn its tools: their definitions, for the model, and
// the MCP session that runs them. A source may open the session only when
// the model first calls a tool, so a turn that calls none never pays for
// one, and a turn waiting on its model holds none.
type ToolSource interface {
	Definitions(ctx context.Context) ([]ToolDef, error)
	Session(ctx context.Context) (*mcp.ClientSession, error)
}

// SessionTools is a ToolSource over an open session, listing its tools.
func SessionTools(cs *mcp.ClientSession) ToolSource { return sessionTools{cs} }

type sessionTools struct{ cs *mcp.ClientSession }

func (s sessionTools) Definitions(ctx context.Context) ([]ToolDef, error) {
	return ListTools(ctx, s.cs)
}
func (s sessionTools) Session(context.Context) (*mcp.ClientSession, error) {
	return s.cs, nil
}

// ListTools describes the session's tools to a model.
func ListTools(ctx context.Context, cs *mcp.ClientSession) ([]ToolDef, error) {
	var defs []ToolDef
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("list tools: %w", err)
		}
		schema, err := json.Marshal(tool.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("tool %s schema: %w", tool.Name, err)
		}
		defs = append(defs, ToolDef{Name: tool.Name, Description: tool.Description, Parameters: schema})
	}
	return defs, nil
}

// LazyTools is a ToolSource with known definitions whose session is opened
// by connect on first use. Close closes the session if it was opened.
type LazyTools struct {
	defs    []ToolDef
	connect func(context.Context) (*mcp.ClientSession, error)

	mu sync.Mutex
	cs *mcp.ClientSession
}

// NewLazyTools returns a LazyTools over defs and connect.
func NewLazyTools(defs []ToolDef, connect func(context.Context) (*mcp.ClientSession, error)) *LazyTools {
	return &LazyTools{defs: defs, connect: connect}
}

// Definitions returns the known definitions.
func (l *LazyTools) Definitions(context.Context) ([]ToolDef, error) { return l.defs, nil }

// Session opens the session on first use and returns it after.
func (l *LazyTools) Session(ctx context.Context) (*mcp.ClientSession, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cs == nil {
		cs, err := l.connect(ctx)
		if err != nil {
			return nil, err
		}
		l.cs = cs
	}
	return l.cs, nil
}

// Close closes the session if one was opened.
func (l *LazyTools) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cs == nil {
		return nil
	}
	return l.cs.Close()
}
