package mcptools_test

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskchat/taskchat/internal/mcptools"
	"github.com/taskchat/taskchat/internal/store"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/tasks"
)

// TestToolCallAllocations guards the go-sdk patch in third_party/go-sdk.
// Unpatched, the SDK allocates a 32 KiB buffer for every JSON value it
// decodes: about 600 KiB for what a chat turn's first tool call costs (a
// session on the user's cached server, and one add_task), against some
// 60 KiB patched. The bound sits far from both, so it fails only if the
// patch is lost, for instance in an SDK upgrade. It runs alone, as
// TestServerBuildAllocations does: allocatedBytes counts the process's
// allocations, other tests' among them.
func TestToolCallAllocations(t *testing.T) {
	servers := mcptools.NewServers(tasks.NewService(store.NewTasks(storetest.Pool(t))), 4)
	user := storetest.UserID(t)
	ctx := context.Background()
	turn := func(i int) {
		cs, err := servers.Connect(ctx, user)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add_task", Arguments: map[string]any{"title": fmt.Sprintf("task %d", i)}})
		if err != nil || res.IsError {
			t.Fatalf("add_task: %v %v", err, res)
		}
	}
	turn(0) // builds the server and warms the statement cache
	const n = 50
	perTurn := allocatedBytes(func() {
		for i := range n {
			turn(i + 1)
		}
	}) / n
	if perTurn > 200<<10 {
		t.Fatalf("a session and one tool call allocate %d KiB; the go-sdk patch (third_party/go-sdk/README.md) keeps it near 60", perTurn>>10)
	}
}

// allocatedBytes returns the bytes the process allocated while f ran.
func allocatedBytes(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestInProcessSessionsInitializeOnce: an in-process session is lent from
// turn to turn, so it speaks the session-based protocol and is initialized
// once, rather than 2026-07-28's, whose every request repeats the client's
// version, capabilities and identity in _meta for the server to decode.
func TestInProcessSessionsInitializeOnce(t *testing.T) {
	t.Parallel()
	servers := mcptools.NewServers(tasks.NewService(store.NewTasks(storetest.Pool(t))), 4)
	cs, release, err := servers.Session(context.Background(), storetest.UserID(t))
	if err != nil {
		t.Fatal(err)
	}
	defer release(true)
	if got := cs.InitializeResult(); got == nil || got.ProtocolVersion != "2025-11-25" {
		t.Fatalf("in-process session initialized with %+v; want protocol 2025-11-25", got)
	}
}

// TestServerBuildAllocations guards the second go-sdk patch in
// third_party/go-sdk: AddTool read each tool's input schema for x-mcp-header
// annotations by marshalling it to JSON, about 130 µs and 38 KiB for our
// five tools, paid for every user whose server is built; the patch keeps
// what it read in the servers' SchemaCache (a few KiB a server remain).
// It runs alone: allocatedBytes counts the process's allocations.
func TestServerBuildAllocations(t *testing.T) {
	svc := tasks.NewService(store.NewTasks(storetest.Pool(t)))
	mcptools.NewServer("warm-up", svc) // the schema cache
	const n = 50
	perServer := allocatedBytes(func() {
		for range n {
			mcptools.NewServer("user", svc)
		}
	}) / n
	if perServer > 24<<10 {
		t.Fatalf("building a user's server allocates %d KiB; the go-sdk patch (third_party/go-sdk/README.md) keeps it near 5", perServer>>10)
	}
}

// The annotations a server with a SchemaCache takes and refuses, the
// first time a schema is added and when it is added again from the cache
// (see TestServerBuildAllocations), are those a server without one does.
func TestHeaderAnnotationsAreStillChecked(t *testing.T) {
	t.Parallel()
	prop := func(typ string, header any) *jsonschema.Schema {
		s := &jsonschema.Schema{Type: typ}
		if header != nil {
			s.Extra = map[string]any{"x-mcp-header": header}
		}
		return s
	}
	cases := []struct {
		name   string
		props  map[string]*jsonschema.Schema
		refuse bool
	}{
		{"no annotation", map[string]*jsonschema.Schema{"a": prop("string", nil)}, false},
		{"a string header", map[string]*jsonschema.Schema{"a": prop("string", "Region")}, false},
		{"an object header", map[string]*jsonschema.Schema{"a": prop("object", "Region")}, true},
		{"an empty header", map[string]*jsonschema.Schema{"a": prop("string", "")}, true},
		{"a header that is no string", map[string]*jsonschema.Schema{"a": prop("integer", 7)}, true},
		{"a duplicate header", map[string]*jsonschema.Schema{"a": prop("string", "Region"), "b": prop("boolean", "region")}, true},
		{"a nested bad header", map[string]*jsonschema.Schema{"a": {Type: "object", Properties: map[string]*jsonschema.Schema{"b": prop("array", "Region")}}}, true},
		// Through JSON, a list of types makes the SDK read no annotation.
		{"a bad header beside a list of types", map[string]*jsonschema.Schema{"a": prop("object", "Region"), "b": {Types: []string{"null", "string"}}}, false},
	}
	refused := func(cache *mcp.SchemaCache, schema *jsonschema.Schema) (refused bool) {
		s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ServerOptions{SchemaCache: cache})
		defer func() { refused = recover() != nil }()
		s.AddTool(&mcp.Tool{Name: "t", InputSchema: schema},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, nil })
		return false
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			schema, cache := &jsonschema.Schema{Type: "object", Properties: c.props}, mcp.NewSchemaCache()
			for _, try := range []struct {
				name  string
				cache *mcp.SchemaCache
			}{{"without a cache", nil}, {"with a cache", cache}, {"from the cache", cache}} {
				if got := refused(try.cache, schema); got != c.refuse {
					t.Errorf("%s: AddTool refused the tool: %v, want %v", try.name, got, c.refuse)
				}
			}
		})
	}
}

// TestToolHandlersReuseTheirGoroutines guards the third go-sdk patch: a
// connection runs its handlers on goroutines it keeps, whose stacks have
// grown already, rather than on a new goroutine each. The runtime never
// gives two goroutines the same number, so a handler that runs on a
// goroutine an earlier handler ran on ran on a reused one.
func TestToolHandlersReuseTheirGoroutines(t *testing.T) {
	t.Parallel()
	call := probeSession(t)
	// The goroutine that ran a handler waits for the next only once it has
	// sent the answer and returned; a call that comes sooner gets a new one.
	// Calls a moment apart, as a turn's are, find it waiting.
	seen := map[uint64]bool{}
	for range 50 {
		id := call()
		if seen[id] {
			return
		}
		seen[id] = true
		time.Sleep(time.Millisecond)
	}
	t.Errorf("50 calls' handlers ran on 50 goroutines: each handler has a new goroutine again, and grows its stack again (third_party/go-sdk/README.md)")
}

// A handler goroutine left waiting for 30 s exits: a cached session idle
// between turns holds none for long.
func TestIdleHandlerGoroutinesExit(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		call := probeSession(t)
		// Connecting ran handlers too; each waiting goroutine takes the
		// next call in turn, so a few calls have run on all of them.
		seen := map[uint64]bool{}
		for range 10 {
			seen[call()] = true
			synctest.Wait()
		}
		time.Sleep(29 * time.Second)
		if id := call(); !seen[id] {
			t.Fatalf("a call 29 s after the last ran on a new goroutine, %d", id)
		}
		synctest.Wait()
		time.Sleep(31 * time.Second)
		if id := call(); seen[id] {
			t.Errorf("a call 31 s after the last ran on goroutine %d, which ran one before: idle handler goroutines no longer exit", id)
		}
	})
}

// probeSession connects a client to a server whose one tool reports the
// goroutine it ran on, and returns a call of that tool.
func probeSession(t *testing.T) (call func() uint64) {
	t.Helper()
	ctx := context.Background()
	server := mcp.NewServer(&mcp.Implementation{Name: "probe", Version: "1.0.0"}, nil)
	ran := make(chan uint64, 1)
	mcp.AddTool(server, &mcp.Tool{Name: "where"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, struct{}, error) {
		ran <- goroutineID()
		return &mcp.CallToolResult{}, struct{}{}, nil
	})
	serverT, clientT := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, serverT, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1.0.0"}, nil).Connect(ctx, clientT, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return func() uint64 {
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "where"}); err != nil {
			t.Fatal(err)
		}
		return <-ran
	}
}

// goroutineID is the number runtime.Stack prints for the calling goroutine.
func goroutineID() uint64 {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	id, _, _ := strings.Cut(strings.TrimPrefix(string(buf), "goroutine "), " ")
	n, err := strconv.ParseUint(id, 10, 64)
	if err != nil {
		panic("goroutineID: " + string(buf))
	}
	return n
}
