package mcptools

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskchat/taskchat/internal/tasks"
)

// NewRemoteServer returns an MCP server whose five task tools act for
// userID only, for outside clients (MCP over HTTP). Its tools and their
// results are NewServer's; what differs is what it trusts and records:
//
//   - It never reads a call's _meta. An outside client could write a chat
//     turn's record there (CallMetaKey, with a turn id and claim token it
//     has seen or guessed) and have its change recorded as that turn's.
//   - Every request must come with the bearer token's auth.TokenInfo
//     naming userID (the HTTP front sets it). Any other is refused, so a
//     server handed to the wrong request acts for nobody.
//   - Every tools/call is recorded as a call of tasks.SourceMCP, with no
//     turn and no conversation: a change in the statement that makes it,
//     anything else (a listing, a refused call, an unknown tool) right
//     after, with what the client was told.
//
// It holds userID and svc and nothing else, so one server may serve all of
// its user's requests at once.
func NewRemoteServer(userID string, svc *tasks.Service) *mcp.Server {
	return newRemoteServer(userID, svc, nil)
}

// newRemoteServer is NewRemoteServer's server, which logs to log (nil:
// slog's default logger).
func newRemoteServer(userID string, svc *tasks.Service, log *slog.Logger) *mcp.Server {
	s := newServer(&tools{userID: userID, svc: svc, recordOf: remoteRecord}, log)
	s.AddReceivingMiddleware(requireUser(userID), recordCalls(userID, svc))
	return s
}

// errOtherUser refuses a request whose token is not the server's user's.
var errOtherUser = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "this request's bearer token is not for this server's user"}

// requireUser refuses every message whose token does not name userID.
func requireUser(userID string) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if extra := req.GetExtra(); extra == nil || extra.TokenInfo == nil || extra.TokenInfo.UserID != userID {
				return nil, errOtherUser
			}
			return next(ctx, method, req)
		}
	}
}

// remoteCall is an outside client's tool call while it runs: its record,
// and whether a change recorded it already.
type remoteCall struct {
	rec      tasks.CallRecord
	storable bool // whether the audit can hold its arguments
	recorded bool
}

type remoteCallKey struct{}

// callTimeout bounds an outside client's tool call and its record. The SDK
// does not cancel a call whose client left (so a change and its record are
// never cut apart by a client), and a call takes a statement or two: this
// only frees a request from a database that stopped answering.
const callTimeout = 10 * time.Second

// recordCalls records every tools/call of userID's server (see
// NewRemoteServer).
func recordCalls(userID string, svc *tasks.Service) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			call, ok := req.(*mcp.CallToolRequest)
			if !ok || call.Params == nil {
				return next(ctx, method, req)
			}
			ctx, cancel := context.WithTimeout(ctx, callTimeout)
			defer cancel()
			rc := newRemoteCall(ctx, call.Params)
			res, err := rc.run(ctx, next, method, req)
			if rc.recorded {
				return res, err
			}
			result, isError := auditResult(res, err)
			if rerr := svc.RecordCall(ctx, userID, rc.rec, result, isError); rerr != nil {
				// The answer is withheld: every call has its record.
				return errorResult(toolError(rerr).Error()), nil
			}
			return res, err
		}
	}
}

func newRemoteCall(ctx context.Context, p *mcp.CallToolParamsRaw) *remoteCall {
	rc := &remoteCall{rec: tasks.CallRecord{Source: tasks.SourceMCP, CallID: callID(ctx), Tool: p.Name, Started: time.Now()}}
	rc.rec.Arguments, rc.storable = tasks.StorableJSON(argumentsOf(p))
	return rc
}

// run runs the call with its record in ctx (see remoteRecord). A call whose
// arguments the audit could not hold is refused before it runs, as the
// chat refuses it.
func (rc *remoteCall) run(ctx context.Context, next mcp.MethodHandler, method string, req mcp.Request) (mcp.Result, error) {
	if !rc.storable {
		return errorResult("The arguments hold a value that cannot be stored (an unpaired \\u surrogate, or a number out of range); nothing was run."), nil
	}
	return next(context.WithValue(ctx, remoteCallKey{}, rc), method, req)
}

// remoteRecord is the record recordCalls made for the call. A change is
// never made without it.
func remoteRecord(ctx context.Context, _ *mcp.CallToolRequest) (*tasks.CallRecord, error) {
	rc, ok := ctx.Value(remoteCallKey{}).(*remoteCall)
	if !ok {
		return nil, errBadRecord
	}
	return &rc.rec, nil
}

// markRecorded notes that the running call's change recorded it; it does
// nothing for a chat turn's call, whose reply records it.
func markRecorded(ctx context.Context) {
	if rc, ok := ctx.Value(remoteCallKey{}).(*remoteCall); ok {
		rc.recorded = true
	}
}

// argumentsOf is a call's arguments as sent, {} when it sent none.
func argumentsOf(p *mcp.CallToolParamsRaw) json.RawMessage {
	if len(p.Arguments) == 0 || string(p.Arguments) == "null" {
		return json.RawMessage(`{}`)
	}
	return p.Arguments
}

// auditResult is what a call's audit row holds as its result, as the chat
// records its calls: the structured result, its text (tasks.TextResult),
// or a tasks.ErrorResult.
func auditResult(res mcp.Result, err error) (json.RawMessage, bool) {
	ctr, _ := res.(*mcp.CallToolResult)
	switch {
	case err != nil:
		return tasks.ErrorJSON(err.Error()), true
	case ctr == nil:
		return tasks.ErrorJSON("no result"), true
	case ctr.IsError:
		return tasks.ErrorJSON(text(ctr)), true
	case ctr.StructuredContent != nil:
		if b, err := json.Marshal(ctr.StructuredContent); err == nil {
			return b, false
		}
	}
	return tasks.TextJSON(text(ctr)), false
}

func errorResult(message string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: message}}}
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// NewHTTPHandler serves the servers of servers (NewRemoteServers') over
// MCP Streamable HTTP, stateless: every request gets a session of its own
// on the server of the user its auth.TokenInfo names, so any replica
// serves any request and nothing is kept between them. Only POST is
// served (GET and DELETE are 405), with a JSON answer. auth's
// RequireBearerToken must run first: a request without TokenInfo gets no
// server (400).
//
// The SDK's protection against DNS rebinding is off: it refuses a request
// that reached a loopback address under another host name, which is what
// a reverse proxy on the same machine forwards, and it guards nothing
// here. Rebinding lets a web page reach a local server, not send it a
// bearer token, and no request gets this far without one; nor can the
// page get one from the development login, which answers only requests
// addressed to a loopback name (internal/auth's AddressedToLoopback).
func NewHTTPHandler(servers *Servers, log *slog.Logger) http.Handler {
	return mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		if ti := auth.TokenInfoFromContext(r.Context()); ti != nil && ti.UserID != "" {
			return servers.Server(ti.UserID)
		}
		return nil
	}, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: log, DisableLocalhostProtection: true})
}

type callIDKey struct{}

// WithCallID returns ctx carrying the id under which a remote server
// records the call of one request. It must be the server's own, one per
// call: the HTTP front makes it, and its access log carries it next to the
// client's X-Request-Id, so an audit row leads to its log line and the
// client's id without trusting a client to keep ids apart.
func WithCallID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, callIDKey{}, id)
}

// callID is the id WithCallID gave, or a new one.
func callID(ctx context.Context) string {
	if id, ok := ctx.Value(callIDKey{}).(string); ok && id != "" {
		return id
	}
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "mcp-" + hex.EncodeToString(b)
}
