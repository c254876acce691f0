package offline

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/agent/agenttest"
	"github.com/taskchat/taskchat/internal/agent/offline/results"
	"github.com/taskchat/taskchat/internal/mcptools"
	"github.com/taskchat/taskchat/internal/tasks"
	"github.com/taskchat/taskchat/internal/tasks/memstore"
)

// TestOfflineThroughTheLoop runs every utterance of the offline table
// through the loop: the offline model, the agent loop, the real MCP tools
// over an in-memory store (package e2e runs the evaluation on PostgreSQL).
// The first round's calls are the table's, they really run, and the person
// always gets a reply. An empty message is left out: the service refuses
// one before any model runs.
func TestOfflineThroughTheLoop(t *testing.T) {
	for _, tc := range offlineCases {
		if strings.TrimSpace(tc.say) == "" {
			continue
		}
		t.Run(tc.say, func(t *testing.T) {
			res, err := agent.Run(context.Background(), agent.Input{Limits: agenttest.Limits(), Model: New(), Tools: agent.SessionTools(mustTaskTools(t)), Message: tc.say})
			if err != nil || res.Stop != agent.StopCompleted || res.Reply == "" {
				t.Fatalf("err %v, result %+v", err, res)
			}
			var first []agent.ToolCall
			for _, c := range res.Calls {
				if c.Round == 0 {
					first = append(first, agent.ToolCall{ID: c.ID, Name: c.Tool, Arguments: string(c.Arguments)})
				}
			}
			assertCalls(t, first, tc.want)
		})
	}
}

// TestOfflineConversation is a person's session with the offline model:
// each turn sees the stored history, and the database ends as they asked.
func TestOfflineConversation(t *testing.T) {
	ctx := context.Background()
	svc, user := tasks.NewService(memstore.NewTasks()), "ana"
	cs, err := mcptools.Connect(ctx, user, svc)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	say := sayTo(t, cs)
	groceries := say("Add a task to buy groceries")
	say("I need to remember to pay bills")
	say("Add a task to prepare the team meeting")
	if !strings.HasPrefix(groceries.Reply, "Added task ") {
		t.Fatalf("add reply = %q", groceries.Reply)
	}
	list := mustList(t, svc, user)
	if len(list) != 3 || list[0].Title != "Buy groceries" || list[1].Title != "Pay bills" {
		t.Fatalf("tasks = %+v", list)
	}

	done := say(fmt.Sprintf("Mark task %d as complete", list[1].ID))
	if !strings.Contains(done.Reply, "Pay bills") {
		t.Fatalf("complete reply = %q", done.Reply)
	}
	pending := say("What's pending?")
	if !strings.Contains(pending.Reply, "Buy groceries") || strings.Contains(pending.Reply, "Pay bills") {
		t.Fatalf("pending reply = %q", pending.Reply)
	}
	deleted := say("Delete the meeting task")
	if len(deleted.Calls) != 2 || deleted.Calls[0].Tool != "list_tasks" || deleted.Calls[1].Tool != "delete_task" {
		t.Fatalf("delete by name calls = %+v", deleted.Calls)
	}
	say(fmt.Sprintf("Change task %d to 'Call mom tonight'", list[0].ID))
	missing := say("Delete task 999999999")
	if !strings.Contains(missing.Reply, "couldn't find task 999999999") {
		t.Fatalf("not-found reply = %q", missing.Reply)
	}

	list = mustList(t, svc, user)
	if len(list) != 2 || list[0].Title != "Call mom tonight" || !list[1].Completed {
		t.Fatalf("tasks at the end = %+v", list)
	}
}

// sayTo returns a function that runs one message, a turn of its own, on
// cs's tools, and fails the test unless the turn completes.
func sayTo(t *testing.T, cs *mcp.ClientSession) func(string) agent.Result {
	return func(msg string) agent.Result {
		t.Helper()
		res, err := agent.Run(context.Background(), agent.Input{Limits: agenttest.Limits(), Model: New(), Tools: agent.SessionTools(cs), Message: msg})
		if err != nil || res.Stop != agent.StopCompleted {
			t.Fatalf("%q: %v, %+v", msg, err, res)
		}
		return res
	}
}

// mustList returns every task of user's, in order.
func mustList(tb testing.TB, svc *tasks.Service, user string) []tasks.Task {
	tb.Helper()
	page, err := svc.ListPage(context.Background(), user, tasks.Filter{Status: tasks.StatusAll}, 1000, "")
	if err != nil {
		tb.Fatal(err)
	}
	return page.Items
}

// mustTaskTools connects a user's real task tools over an empty store.
func mustTaskTools(tb testing.TB) *mcp.ClientSession {
	tb.Helper()
	svc := tasks.NewService(memstore.NewTasks())
	cs, err := mcptools.Connect(context.Background(), "ana", svc)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cs.Close() })
	return cs
}

// TestOfflineReadsALongListWhole: list_tasks answers a page at a time.
// The offline model shows the first tasks of a long list (results.ShownTasks)
// and says there is more and how to see it, and follows next_cursor to the end to find a task named by its
// title, however far down the list it is, within the turn's default limits.
func TestOfflineReadsALongListWhole(t *testing.T) {
	ctx := context.Background()
	svc, user := tasks.NewService(memstore.NewTasks()), "ana"
	const n, dentist = results.ListPage + 100, results.ListPage + 50
	for i := 1; i <= n; i++ {
		title := fmt.Sprintf("Water the plants, round %d", i)
		if i == dentist {
			title = "Call the dentist"
		}
		if _, err := svc.Add(ctx, user, tasks.NewTask{Title: title, Description: ""}, nil); err != nil {
			t.Fatal(err)
		}
	}
	cs, err := mcptools.Connect(ctx, user, svc)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	say := sayTo(t, cs)
	calls := func(res agent.Result) string {
		var out []string
		for _, c := range res.Calls {
			out = append(out, c.Tool+string(c.Arguments))
		}
		return strings.Join(out, " ")
	}

	shown := say("show my tasks")
	if len(shown.Calls) != 1 || strings.Count(shown.Reply, "\n- [ ] #") != results.ShownTasks || !strings.HasPrefix(shown.Reply, "You have more than") ||
		!strings.Contains(shown.Reply, "To see more") {
		t.Fatalf("show my tasks: calls %s, a reply of %d lines starting %q", calls(shown), strings.Count(shown.Reply, "\n"), shown.Reply[:min(len(shown.Reply), 80)])
	}
	deleted := say("delete the dentist task")
	if len(deleted.Calls) != 3 || deleted.Calls[2].Tool != "delete_task" || !strings.Contains(deleted.Reply, "Call the dentist") {
		t.Fatalf("delete the dentist task: calls %s, reply %q", calls(deleted), deleted.Reply)
	}
	page, err := svc.ListPage(ctx, user, tasks.Filter{Query: "dentist"}, 10, "")
	if err != nil || len(page.Items) != 0 {
		t.Fatalf("the dentist task is still there: %+v, %v", page.Items, err)
	}
}

// A question about a task said by its number looks it up on the first
// page of the list only: in a list longer than a page, a task further down
// is asked about by its number, for reading on would cost more than
// asking (every later model call reads each page again).
func TestOfflineLooksUpANumberOnTheFirstPageOnly(t *testing.T) {
	ctx := context.Background()
	svc, user := tasks.NewService(memstore.NewTasks()), "ana"
	for i := 1; i <= results.ListPage+100; i++ {
		if _, err := svc.Add(ctx, user, tasks.NewTask{Title: fmt.Sprintf("Water the plants, round %d", i), Description: ""}, nil); err != nil {
			t.Fatal(err)
		}
	}
	cs, err := mcptools.Connect(ctx, user, svc)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	say := sayTo(t, cs)
	near := say("I need to finish task 7")
	if len(near.Calls) != 1 || !strings.Contains(near.Reply, "task 7, Water the plants, round 7,") {
		t.Errorf("task 7 of %d: %d calls, reply %q; want one page read and the task named", results.ListPage+100, len(near.Calls), near.Reply)
	}
	if _, err := svc.Delete(ctx, user, 9, nil); err != nil {
		t.Fatal(err)
	}
	gone := say("I need to finish task 9")
	if len(gone.Calls) != 1 || !strings.Contains(gone.Reply, "couldn't find task 9") {
		t.Errorf("task 9, deleted, of a list longer than a page: %d calls, reply %q; want one page read and the task said to be gone", len(gone.Calls), gone.Reply)
	}
	far := say(fmt.Sprintf("I need to finish task %d", results.ListPage+50))
	if len(far.Calls) != 1 || !strings.Contains(far.Reply, fmt.Sprintf("Should I mark task %d as complete?", results.ListPage+50)) {
		t.Errorf("task %d of %d: %d calls, reply %q; want one page read and the task asked about by number", results.ListPage+50, results.ListPage+100, len(far.Calls), far.Reply)
	}
}
