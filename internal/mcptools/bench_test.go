package mcptools_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskchat/taskchat/internal/mcptools"
	"github.com/taskchat/taskchat/internal/store"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/tasks"
)

// BenchmarkAddTask measures one add_task through an in-memory MCP session
// on real PostgreSQL: schema validation, the service, one INSERT.
func BenchmarkAddTask(b *testing.B) {
	cs := mustSession(b, storetest.UserID(b))
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add_task", Arguments: map[string]any{"title": fmt.Sprintf("task %d", i)}})
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}

// BenchmarkListTasks measures one list_tasks of 20 tasks.
func BenchmarkListTasks(b *testing.B) {
	cs := mustSession(b, storetest.UserID(b))
	ctx := context.Background()
	for i := range 20 {
		mustCall(b, cs, "add_task", map[string]any{"title": fmt.Sprintf("task %d", i)})
	}
	b.ReportAllocs()
	for b.Loop() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "list_tasks", Arguments: map[string]any{"status": "all"}})
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}

// BenchmarkConnect measures what every chat turn pays before its first tool
// call: building the user's server and connecting a client session to it.
func BenchmarkConnect(b *testing.B) {
	svc := tasks.NewService(store.NewTasks(storetest.Pool(b)))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		cs, err := mcptools.Connect(ctx, "bench-user", svc)
		if err != nil {
			b.Fatal(err)
		}
		cs.Close()
	}
}

// BenchmarkConnectCached measures what a turn pays for its first tool call
// when the user's server is already built: a fresh session.
func BenchmarkConnectCached(b *testing.B) {
	servers := mcptools.NewServers(tasks.NewService(store.NewTasks(storetest.Pool(b))), 16)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		cs, err := servers.Connect(ctx, "bench-user")
		if err != nil {
			b.Fatal(err)
		}
		cs.Close()
	}
}

// BenchmarkSessionLent measures what a turn pays for its first tool call
// when its user's idle session is lent to it, as in a busy replica.
func BenchmarkSessionLent(b *testing.B) {
	servers := mcptools.NewServers(tasks.NewService(store.NewTasks(storetest.Pool(b))), 16)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, release, err := servers.Session(ctx, "bench-user")
		if err != nil {
			b.Fatal(err)
		}
		release(true)
	}
}
