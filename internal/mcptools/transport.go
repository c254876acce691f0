package mcptools

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// pipeTransport connects an in-process client and server by handing
// JSON-RPC messages across Go channels. The SDK's InMemoryTransport writes
// and parses newline-delimited JSON over net.Pipe, which costs about half a
// megabyte of allocation per tool call; a chat turn pays that on every call
// and for every session, so we skip the bytes. Parameters and results stay
// json.RawMessage values, marshalled by the sender as over any transport.
type pipeTransport struct {
	in, out chan jsonrpc.Message
	done    chan struct{}
	once    *sync.Once
}

// newPipeTransports returns two transports connected to each other.
func newPipeTransports() (*pipeTransport, *pipeTransport) {
	a, b := make(chan jsonrpc.Message, 8), make(chan jsonrpc.Message, 8)
	done, once := make(chan struct{}), &sync.Once{}
	return &pipeTransport{in: a, out: b, done: done, once: once},
		&pipeTransport{in: b, out: a, done: done, once: once}
}

// Connect implements mcp.Transport.
func (t *pipeTransport) Connect(context.Context) (mcp.Connection, error) { return t, nil }

var errPipeClosed = errors.New("mcp pipe closed")

// Read returns the next message from the peer.
func (t *pipeTransport) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case m := <-t.in:
		return m, nil
	case <-t.done:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Write hands a message to the peer.
func (t *pipeTransport) Write(ctx context.Context, m jsonrpc.Message) error {
	select {
	case <-t.done:
		return errPipeClosed
	default:
	}
	select {
	case t.out <- m:
		return nil
	case <-t.done:
		return errPipeClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close ends both directions; it is safe to call more than once.
func (t *pipeTransport) Close() error {
	t.once.Do(func() { close(t.done) })
	return nil
}

// SessionID implements mcp.Connection; in-process sessions have none.
func (t *pipeTransport) SessionID() string { return "" }
