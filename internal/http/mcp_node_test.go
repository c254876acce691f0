package http

import (
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/taskchat/taskchat/internal/nodetest"

	"github.com/taskchat/taskchat/internal/agent/offline"
	"github.com/taskchat/taskchat/internal/store/storetest"
)

// mustMCPNodeClient returns node and the path of clients/<script>, which
// imports the MCP TypeScript SDK.
func mustMCPNodeClient(tb testing.TB, script string) (node, path string) {
	tb.Helper()
	return nodetest.MustScript(tb, "@modelcontextprotocol/sdk", "the MCP TypeScript SDK", script)
}

// nodeMCPRun is what clients/mcp-client.mjs prints.
type nodeMCPRun struct {
	Server struct{ Name string }
	Tools  []struct {
		Name                      string
		InputSchema, OutputSchema json.RawMessage
		Annotations               map[string]any
	}
	Added, Listed struct {
		IsError           bool
		StructuredContent map[string]any
		Content           []struct{ Type, Text string }
	}
}

// The official TypeScript SDK's client, as Claude Desktop's bridge and the
// MCP Inspector use it, manages the token's user's list over /mcp.
func TestMCPWithTheTypeScriptSDK(t *testing.T) {
	t.Parallel()
	node, script := mustMCPNodeClient(t, "mcp-client.mjs")
	s := mustServer(t, offline.New())
	user := storetest.UserID(t)
	s.chat(t, user, 0, "Add a task to buy groceries") // the user's task 1

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, node, script, s.URL+"/mcp", mustToken(t, user)).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("%s: %v\n%s", script, err, ee.Stderr)
		}
		t.Fatal(err)
	}
	var run nodeMCPRun
	if err := json.Unmarshal(out, &run); err != nil {
		t.Fatalf("%s printed %q: %v", script, out, err)
	}

	if run.Server.Name != "taskchat-tasks" || len(run.Tools) != 5 {
		t.Fatalf("server %q with %d tools, want taskchat-tasks with 5: %s", run.Server.Name, len(run.Tools), out)
	}
	// The hints a client shows its person before a call: what only reads,
	// what cannot be undone, what may be sent twice (MCP's defaults, when
	// a hint is absent, are the cautious ones: destructive, not idempotent).
	hints := map[string]map[string]any{
		"add_task":      {"readOnlyHint": false, "destructiveHint": false, "idempotentHint": false},
		"list_tasks":    {"readOnlyHint": true},
		"complete_task": {"readOnlyHint": false, "destructiveHint": false, "idempotentHint": true},
		"delete_task":   {"readOnlyHint": false, "destructiveHint": true, "idempotentHint": true},
		"update_task":   {"readOnlyHint": false, "destructiveHint": false, "idempotentHint": true},
	}
	for _, tool := range run.Tools {
		if strings.Contains(strings.ToLower(string(tool.InputSchema)), "user") {
			t.Errorf("%s's schema mentions a user: %s", tool.Name, tool.InputSchema)
		}
		for hint, want := range hints[tool.Name] {
			if got := tool.Annotations[hint]; got != want {
				t.Errorf("%s: %s = %v, want %v", tool.Name, hint, got, want)
			}
		}
	}
	wantAdded := map[string]any{"task_id": 2.0, "status": "created", "title": "Water the plants"}
	if run.Added.IsError || !reflect.DeepEqual(run.Added.StructuredContent, wantAdded) {
		t.Fatalf("add_task = %+v, want %v", run.Added, wantAdded)
	}
	pending, _ := run.Listed.StructuredContent["tasks"].([]any)
	if run.Listed.IsError || len(pending) != 2 || pending[1].(map[string]any)["title"] != "Water the plants" ||
		pending[1].(map[string]any)["description"] != "the ferns too" {
		t.Fatalf("list_tasks = %+v, want the chat's task and the new one", run.Listed)
	}

	// The database says the same: the task is the user's task 2, seen by
	// the REST API, and both calls are recorded with no conversation.
	if list := mustRESTTasks(t, s, user); len(list) != 2 || list[1].(map[string]any)["id"] != 2.0 {
		t.Fatalf("REST tasks = %v", list)
	}
	rows := mustMCPAudit(t, user)
	if len(rows) != 2 || rows[0].Tool != "add_task" || rows[1].Tool != "list_tasks" || rows[0].ConvID != nil ||
		!jsonSame(t, rows[0].Result, []byte(jsonOf(t, wantAdded))) {
		t.Fatalf("MCP audit rows = %+v", rows)
	}
}
