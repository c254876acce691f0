package mcptools_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskchat/taskchat/internal/store/storetest"
)

var toolNames = []string{"add_task", "list_tasks", "complete_task", "delete_task", "update_task"}

// FuzzToolArguments sends arbitrary JSON arguments to every tool through a
// real MCP session on PostgreSQL. A tool may refuse them, as a tool error;
// it must never fail at the protocol level, panic, or act for another user.
func FuzzToolArguments(f *testing.F) {
	for _, seed := range []struct {
		tool uint8
		args string
	}{
		{0, `{"title":"Buy groceries"}`},
		{0, `{"title":"  ","description":"x"}`},
		{0, `{"title":"x","user_id":"victim"}`},
		{1, `{"status":"pending"}`},
		{1, `{"status":7}`},
		{2, `{"task_id":1}`},
		{2, `{"task_id":"1"}`},
		{3, `{"task_id":-5}`},
		{3, `{"task_id":1e30}`},
		{4, `{"task_id":1,"title":null}`},
		{4, `{"task_id":1,"description":"` + "\u0000" + `"}`},
		{4, `[]`},
	} {
		f.Add(seed.tool, seed.args)
	}
	cs := mustSession(f, storetest.UserID(f))
	victim := mustSession(f, storetest.UserID(f))
	target := mustCall(f, victim, "add_task", map[string]any{"title": "victim's task"})
	f.Fuzz(func(t *testing.T, tool uint8, args string) {
		if !json.Valid([]byte(args)) {
			return // the client cannot even send it
		}
		name := toolNames[int(tool)%len(toolNames)]
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
		if err != nil {
			t.Fatalf("%s(%s): protocol error %v", name, args, err)
		}
		if !res.IsError && res.StructuredContent == nil {
			t.Fatalf("%s(%s): success without a result", name, args)
		}
		list := mustCall(t, victim, "list_tasks", nil)["tasks"].([]any)
		if len(list) != 1 || list[0].(map[string]any)["title"] != "victim's task" || list[0].(map[string]any)["id"] != target["task_id"] {
			t.Fatalf("%s(%s) reached another user's task: %v", name, args, list)
		}
	})
}
