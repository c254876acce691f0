package mcptools

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskchat/taskchat/internal/tasks"
)

// schemas caches the tools' JSON schemas across the per-user servers, so
// building one costs no reflection after the first.
var schemas = mcp.NewSchemaCache()

// NewServer returns an MCP server whose five task tools act for userID
// only, in process, that reads no turn's record: a call whose _meta names
// one fails, as a call whose record cannot be read does, and a change is
// made unrecorded. The chat engine's servers come from NewServers instead,
// whose table of records each of them reads (see Servers.CallMeta);
// outside clients get NewRemoteServer's.
func NewServer(userID string, svc *tasks.Service) *mcp.Server {
	return newTurnServer(userID, svc, nil, nil)
}

// newTurnServer returns userID's server for the chat engine, which takes
// each call's record from records (nil: none) and logs to log.
func newTurnServer(userID string, svc *tasks.Service, records *callRecords, log *slog.Logger) *mcp.Server {
	return newServer(&tools{userID: userID, svc: svc, recordOf: func(_ context.Context, req *mcp.CallToolRequest) (*tasks.CallRecord, error) {
		return records.take(userID, req)
	}}, log)
}

// newServer builds a server with t's five tools, which logs a handler's
// panic to log (nil: slog's default logger).
func newServer(t *tools, log *slog.Logger) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "taskchat-tasks", Version: "1.0.0"}, &mcp.ServerOptions{
		SchemaCache:  schemas,
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
		Instructions: "Tools to manage the current user's todo list. Refer to tasks by their number, as list_tasks shows it: each user's tasks are numbered 1, 2, 3…",
	})
	s.AddReceivingMiddleware(recoverPanics(log)) // the innermost: a remote server records the call's answer
	mcp.AddTool(s, addTaskTool, t.addTask)
	mcp.AddTool(s, listTasksTool, t.listTasks)
	mcp.AddTool(s, completeTaskTool, t.completeTask)
	mcp.AddTool(s, deleteTaskTool, t.deleteTask)
	mcp.AddTool(s, updateTaskTool, t.updateTask)
	return s
}

// errPanicked answers a request whose handler panicked, but a tool call.
var errPanicked = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error"}

// recoverPanics answers a handler's panic as a failed call, and logs it
// with its stack: a tool call gets the tool error of an unexpected failure,
// any other request an internal error. The SDK runs handlers on goroutines
// of its own, with no recover, where a panic would end the process and
// every turn and request it serves. The panic goes to log, the server's
// own (Servers.Log), or to slog's default logger when log is nil.
func recoverPanics(log *slog.Logger) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
			defer func() {
				v := recover()
				if v == nil {
					return
				}
				l := log
				if l == nil {
					l = slog.Default()
				}
				l.ErrorContext(ctx, "MCP handler panicked", "method", method, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				res, err = nil, errPanicked
				if _, ok := req.(*mcp.CallToolRequest); ok {
					res, err = errorResult(toolError(fmt.Errorf("panic: %v", v)).Error()), nil
				}
			}()
			return next(ctx, method, req)
		}
	}
}

// Connect builds userID's server (NewServer's) and returns a client session
// connected to it in process. Closing the session ends the server side too.
func Connect(ctx context.Context, userID string, svc *tasks.Service) (*mcp.ClientSession, error) {
	return connect(ctx, NewServer(userID, svc))
}

// toolError turns a domain error into a sentence a model can pass on. The
// SDK reports it as a tool result with isError set, not a protocol failure.
func toolError(err error) error {
	var nf *tasks.NotFoundError
	var fe *tasks.FieldError
	switch {
	case errors.As(err, &nf):
		//lint:ignore ST1005 the model reads this as a sentence and may repeat it to the user.
		return fmt.Errorf("Task %d was not found.", nf.ID)
	case errors.Is(err, tasks.ErrTurnEnded):
		//lint:ignore ST1005 the model reads this as a sentence and may repeat it to the user.
		return errors.New("Nothing was changed: this conversation was deleted, or this turn ended, while the call ran.")
	case errors.As(err, &fe):
		//lint:ignore ST1005 the model reads this as a sentence and may repeat it to the user.
		return fmt.Errorf("Invalid %s: %s.", fe.Field, fe.Message)
	case errors.Is(err, tasks.ErrInvalid):
		//lint:ignore ST1005 the model reads this as a sentence and may repeat it to the user.
		return errors.New("The task data was refused as invalid.")
	case errors.Is(err, tasks.ErrUnavailable):
		//lint:ignore ST1005 the model reads this as a sentence and may repeat it to the user.
		return errors.New("The task list is unavailable right now; ask the user to try again shortly.")
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		//lint:ignore ST1005 the model reads this as a sentence and may repeat it to the user.
		return errors.New("The task operation timed out.")
	}
	//lint:ignore ST1005 the model reads this as a sentence and may repeat it to the user.
	return errors.New("The task operation failed unexpectedly.")
}
