package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/tasks"
	"github.com/taskchat/taskchat/internal/telemetry"
)

// ToolServers lends MCP sessions on a user's task tools, in process, and
// carries each call's record to the tool it calls; see mcptools.Servers.
// The server behind a session is bound to that user when it is built: no
// tool takes a user id, and the model never sees one.
type ToolServers interface {
	// Session lends a session on userID's server; release gives it back
	// (reuse false when a call on it failed).
	Session(ctx context.Context, userID string) (cs *mcp.ClientSession, release func(reuse bool), err error)
	// CallMeta is the _meta of a call made for rec on userID's server,
	// which names rec to that server, and forget, to be called once the
	// call has returned.
	CallMeta(userID string, rec tasks.CallRecord) (meta mcp.Meta, forget func())
}

// toolDefs holds the tools' definitions, the same for every user, listed
// over MCP once per process: from the first turn's own session.
type toolDefs struct {
	mu       sync.Mutex
	defs     []agent.ToolDef
	readOnly map[string]bool // by tool name
}

func (d *toolDefs) get(ctx context.Context, servers ToolServers, userID string) ([]agent.ToolDef, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.defs != nil {
		return d.defs, nil
	}
	cs, release, err := servers.Session(ctx, userID)
	if err != nil {
		return nil, err
	}
	defs, err := agent.ListTools(ctx, cs)
	release(err == nil)
	if err != nil {
		return nil, err
	}
	d.defs, d.readOnly = defs, map[string]bool{}
	for _, def := range defs {
		d.readOnly[def.Name] = def.ReadOnly
	}
	return defs, nil
}

// isReadOnly reports whether the tool only reads; unknown tools do not.
func (d *toolDefs) isReadOnly(tool string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.readOnly[tool]
}

// turnTools is one turn's agent.ToolSource. It takes a session on the
// user's tools at the first call, and sends each call with its record (see
// ToolServers.CallMeta): a call that changes a task is recorded with the
// change, in one transaction, while the turn holds its conversation.
type turnTools struct {
	*agent.LazyTools
	servers ToolServers
	userID  string
	turn    *tasks.Turn
	grace   time.Duration // how long a call may run, once started, whatever its caller does
	tel     *telemetry.Telemetry

	// The calls that wait for their person (gate): the tools, the store
	// that records their approvals, how long one waits; asked are the
	// approvals this run's calls asked for.
	waits     []string
	approvals tasks.ApprovalStore
	ttl       time.Duration
	asked     []tasks.Approval
}

// gate makes the calls of tools wait for their person, recording their
// approvals in store; see Config.ApprovalTools.
func (t *turnTools) gate(store tasks.ApprovalStore, tools []string, ttl time.Duration) {
	t.waits, t.approvals, t.ttl = tools, store, ttl
}

// approval returns the approval this run's call asked for under id; nil
// for none.
func (t *turnTools) approval(id int64) *tasks.Approval {
	for i := range t.asked {
		if id != 0 && t.asked[i].ID == id {
			return &t.asked[i]
		}
	}
	return nil
}

func newTurnTools(defs []agent.ToolDef, servers ToolServers, userID string, turn *tasks.Turn, toolTimeout time.Duration, tel *telemetry.Telemetry) *turnTools {
	t := &turnTools{servers: servers, userID: userID, turn: turn, grace: toolTimeout + persistTimeout, tel: tel}
	t.LazyTools = agent.NewLazyTools(defs, func(ctx context.Context) (*mcp.ClientSession, func(bool), error) {
		return servers.Session(ctx, userID)
	})
	return t
}

// Call runs one tool call, observed: its duration by tool, whether it
// failed, and a span (never its arguments or result).
func (t *turnTools) Call(ctx context.Context, call agent.Call) (*mcp.CallToolResult, error) {
	ctx, end := t.tel.StartTool(ctx, call.Tool, call.ID)
	res, err := t.call(ctx, call)
	end(toolErrorType(res, err))
	return res, err
}

// call refuses arguments PostgreSQL could not store, before anything runs:
// a call is never made that could not be recorded as it was asked.
//
// A call that has started is not cancelled with the turn or at the agent's
// tool deadline: its statement, once sent, may commit after its caller gave
// up, and the turn would then report as failed a change that was made (and
// the model might make it again). It runs to its outcome, within grace, and
// the agent takes that outcome even when it comes late.
func (t *turnTools) call(ctx context.Context, call agent.Call) (*mcp.CallToolResult, error) {
	stored, ok := tasks.StorableJSON(call.Arguments)
	if !ok {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(
			"The arguments for %s hold a value that cannot be stored (an unpaired \\u surrogate, or a number out of range); nothing was run. Send them again with plain text and ordinary numbers.", call.Tool)}}}, nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), t.grace)
	defer cancel()
	rec := tasks.CallRecord{
		ConversationID: t.turn.Conversation.ID, TurnID: t.turn.ID(), ClaimToken: t.turn.ClaimToken,
		CallID: call.ID, Tool: call.Tool, Arguments: stored, Round: call.Round, Seq: call.Seq, Started: time.Now(),
	}
	if call.Approved == 0 && slices.Contains(t.waits, call.Tool) {
		return t.ask(ctx, rec)
	}
	meta, forget := t.servers.CallMeta(t.userID, rec)
	defer forget()
	return t.Send(ctx, &mcp.CallToolParams{Name: call.Tool, Arguments: call.Arguments, Meta: meta})
}

// ask records a call that waits for its person instead of running it, and
// answers the model with its placeholder: it has not run, and waits.
func (t *turnTools) ask(ctx context.Context, rec tasks.CallRecord) (*mcp.CallToolResult, error) {
	r := tasks.ApprovalRequest{Record: rec, UserID: t.userID, TTL: t.ttl}
	if id := taskNumber(rec.Arguments); id > 0 {
		var err error
		if r.Title, err = t.approvals.TaskTitle(ctx, t.userID, id); err != nil {
			return nil, err
		}
		if r.Title != "" {
			r.TaskID = id
		}
	}
	r.Summary = tasks.Summarize(rec.Tool, rec.Arguments, r.Title)
	a, err := t.approvals.RequestApproval(ctx, r)
	if err != nil {
		return nil, err
	}
	t.asked = append(t.asked, a)
	return &mcp.CallToolResult{StructuredContent: tasks.AwaitingJSON(a, r)}, nil
}

// taskNumber is the task_id a call's arguments name; 0 for none.
func taskNumber(args json.RawMessage) int64 {
	var a struct {
		TaskID int64 `json:"task_id"`
	}
	_ = json.Unmarshal(args, &a)
	return a.TaskID
}
