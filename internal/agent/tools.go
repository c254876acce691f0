package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ToolSource gives a turn its tools: their definitions, for the model, and
// a way to run one call. A source may open its MCP session only when the
// model first calls a tool, so a turn that calls none never pays for one,
// and a turn waiting on its model holds none.
type ToolSource interface {
	Definitions(ctx context.Context) ([]ToolDef, error)
	// Call runs call (its ID, Tool, Round and Seq are set; Result is not).
	// Its Arguments are a JSON object, sent to the tool as they are.
	Call(ctx context.Context, call Call) (*mcp.CallToolResult, error)
}

// SessionTools is a ToolSource over an open session, listing its tools.
func SessionTools(cs *mcp.ClientSession) ToolSource { return sessionTools{cs} }

type sessionTools struct{ cs *mcp.ClientSession }

func (s sessionTools) Definitions(ctx context.Context) ([]ToolDef, error) {
	return ListTools(ctx, s.cs)
}

func (s sessionTools) Call(ctx context.Context, call Call) (*mcp.CallToolResult, error) {
	return s.cs.CallTool(ctx, &mcp.CallToolParams{Name: call.Tool, Arguments: call.Arguments})
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
		readOnly := tool.Annotations != nil && tool.Annotations.ReadOnlyHint
		defs = append(defs, ToolDef{Name: tool.Name, Description: tool.Description, Parameters: schema, ReadOnly: readOnly})
	}
	return defs, nil
}

// LazyTools is a ToolSource with known definitions whose session is taken
// by open on first use. Close gives the session back through the release
// function open returned, telling it whether every call on it succeeded.
type LazyTools struct {
	defs []ToolDef
	open func(context.Context) (*mcp.ClientSession, func(reuse bool), error)

	mu      sync.Mutex
	cs      *mcp.ClientSession
	release func(reuse bool)
	failed  bool // a call on cs returned an error: its session is in doubt
}

// NewLazyTools returns a LazyTools over defs and open.
func NewLazyTools(defs []ToolDef, open func(context.Context) (*mcp.ClientSession, func(reuse bool), error)) *LazyTools {
	return &LazyTools{defs: defs, open: open}
}

// Definitions returns the known definitions.
func (l *LazyTools) Definitions(context.Context) ([]ToolDef, error) { return l.defs, nil }

// Call runs one call on the session, opening it first if need be.
func (l *LazyTools) Call(ctx context.Context, call Call) (*mcp.CallToolResult, error) {
	return l.Send(ctx, &mcp.CallToolParams{Name: call.Tool, Arguments: call.Arguments})
}

// Send sends params, which a source may have given a _meta, on the
// session, opening it first if need be.
func (l *LazyTools) Send(ctx context.Context, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	cs, err := l.session(ctx)
	if err != nil {
		return nil, err
	}
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		l.mu.Lock()
		l.failed = true
		l.mu.Unlock()
	}
	return res, err
}

// session opens the session on first use and returns it after.
func (l *LazyTools) session(ctx context.Context) (*mcp.ClientSession, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cs == nil {
		cs, release, err := l.open(ctx)
		if err != nil {
			return nil, err
		}
		l.cs, l.release = cs, release
	}
	return l.cs, nil
}

// Close gives the session back, if one was opened.
func (l *LazyTools) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cs != nil {
		l.release(!l.failed)
		l.cs, l.release = nil, nil
	}
	return nil
}
