package http

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/agent/offline"
	"github.com/taskchat/taskchat/internal/agent/offline/results"
	"github.com/taskchat/taskchat/internal/agent/openaitest"
	"github.com/taskchat/taskchat/internal/store"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/tasks"
)

// What a call's record keeps is bounded: a listing of a thousand long tasks,
// over /mcp or in a chat turn, is answered whole but stored as its count,
// its ids and its first titles (tasks.ListSummary), a row of kilobytes
// rather than megabytes, from which the audit still reads what was listed.
func TestAListingIsStoredAsItsSummary(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New())
	user := storetest.UserID(t)
	ids := mustLongTasks(t, user, tasks.MaxTaskPage)

	t.Run("over /mcp", func(t *testing.T) {
		c := mustMCPClient(t, s, mustToken(t, user))
		told := c.mustCall(t, "list_tasks", map[string]any{"limit": tasks.MaxTaskPage})
		if n := len(told["tasks"].([]any)); n != len(ids) {
			t.Fatalf("the client was told %d tasks, want all %d", n, len(ids))
		}
		mustStoredSummary(t, user, "mcp", ids)
	})
	t.Run("in a chat turn", func(t *testing.T) {
		turn := s.chatTurn(t, user, 0, "show me my tasks")
		if len(turn.ToolCalls) != 1 || turn.ToolCalls[0].Tool != "list_tasks" {
			t.Fatalf("the turn called %+v, want list_tasks", turn.ToolCalls)
		}
		var told tasks.ListResult
		if err := json.Unmarshal(turn.ToolCalls[0].Result, &told); err != nil || len(told.Tasks) != len(ids) {
			t.Fatalf("the turn's answer holds %d tasks (%v), want all %d", len(told.Tasks), err, len(ids))
		}
		if lines := strings.Count(turn.Response, "\n- [ ] #"); lines != results.ShownTasks {
			t.Errorf("the reply lists %d tasks, want the first %d", lines, results.ShownTasks)
		}
		mustStoredSummary(t, user, "chat", ids)
	})
}

// mustLongTasks gives user n tasks of the longest title and description,
// and returns their ids in order.
func mustLongTasks(tb testing.TB, user string, n int) []int64 {
	tb.Helper()
	svc, ctx := tasks.NewService(store.NewTasks(storetest.Pool(tb))), context.Background()
	ids := make([]int64, n)
	for i := range ids {
		title := fmt.Sprintf("%04d %s", i+1, strings.Repeat("a long title ", tasks.MaxTitleLen/13))[:tasks.MaxTitleLen]
		task, err := svc.Add(ctx, user, tasks.NewTask{Title: title, Description: strings.Repeat("d", tasks.MaxDescriptionLen)}, nil)
		if err != nil {
			tb.Fatal(err)
		}
		ids[i] = task.ID
	}
	return ids
}

// mustStoredSummary checks the one list_tasks row of user's calls from
// source: at most tasks.MaxStoredJSON bytes, a summary naming every task
// listed, in order, and the first of them with their titles.
func mustStoredSummary(tb testing.TB, user, source string, ids []int64) {
	tb.Helper()
	var (
		size int
		raw  json.RawMessage
	)
	mustQuery(tb.(*testing.T), `SELECT octet_length(result::text), result FROM tool_calls WHERE user_id = $1 AND source = $2 AND tool = 'list_tasks'`,
		[]any{user, source}, &size, &raw)
	if size > tasks.MaxStoredJSON {
		tb.Errorf("the stored listing is %d bytes, want at most %d", size, tasks.MaxStoredJSON)
	}
	var got tasks.ListSummary
	if err := json.Unmarshal(raw, &got); err != nil || got.Count != len(ids) || !slices.Equal(got.IDs, ids) {
		tb.Fatalf("the stored listing says %d tasks, ids %v… (%v), want %d from %d", got.Count, got.IDs[:min(len(got.IDs), 3)], err, len(ids), ids[0])
	}
	tb.Logf("%s: the listing of %d tasks is stored in %d bytes, the first %d with their titles", source, len(ids), size, len(got.Tasks))
	if len(got.Tasks) < 2 || got.Tasks[1].ID != ids[1] || !strings.HasPrefix(got.Tasks[1].Title, "0002 a long title") {
		tb.Errorf("the stored listing's first tasks are %+v", got.Tasks[:min(len(got.Tasks), 2)])
	}
	if !strings.Contains(got.Note, "list_tasks shows the tasks as they are now") {
		tb.Errorf("the stored listing's note says %q", got.Note)
	}
}

// Whatever a model writes as arguments is kept within the bound too, cut
// and marked so: here a megabyte the tools' schemas refuse. (A call that
// changes a task has arguments its schema bounds, kilobytes at most.)
func TestLongArgumentsAreStoredCut(t *testing.T) {
	t.Parallel()
	padding := strings.Repeat("padding ", 1<<17) // 1 MiB
	fake := newFakeOpenAI(t,
		openaitest.Step{Calls: []agent.ToolCall{
			{ID: "call_add", Name: "add_task", Arguments: fmt.Sprintf(`{"title":"Buy milk","padding":%q}`, padding)},
			{ID: "call_list", Name: "list_tasks", Arguments: fmt.Sprintf(`{"query":%q}`, padding)},
		}},
		openaitest.Step{Text: "Done."},
	)
	s := mustServer(t, fake.Model())
	user := storetest.UserID(t)
	s.chatTurn(t, user, 0, "Add milk")
	for _, id := range []string{"call_add", "call_list"} {
		var (
			size int
			raw  json.RawMessage
		)
		mustQuery(t, `SELECT octet_length(arguments::text), arguments FROM tool_calls WHERE user_id = $1 AND call_id = $2`, []any{user, id}, &size, &raw)
		var cut tasks.TruncatedJSON
		if err := json.Unmarshal(raw, &cut); err != nil || size > tasks.MaxStoredJSON || cut.Bytes < len(padding) || !strings.Contains(cut.Truncated, "are kept") {
			t.Errorf("%s: arguments of more than %d bytes stored in %d: %.120s", id, len(padding), size, raw)
		}
	}
}

// A later turn's model reads an old listing in its history as what was
// stored: the summary, which says what it is and how to see the tasks now.
func TestAnOldListingReachesTheModelAsItsSummary(t *testing.T) {
	t.Parallel()
	fake := newFakeOpenAI(t,
		openaitest.Step{Calls: []agent.ToolCall{{ID: "call_list", Name: "list_tasks", Arguments: `{"limit":1000}`}}},
		openaitest.Step{Text: "Here they are."},
		openaitest.Step{Text: "Task 2."},
	)
	s := mustServer(t, fake.Model())
	user := storetest.UserID(t)
	ids := mustLongTasks(t, user, tasks.MaxTaskPage)
	first := s.chatTurn(t, user, 0, "List my tasks")
	s.chatTurn(t, user, first.ConversationID, "Which was the second one?")

	var listing string
	for _, m := range fake.Request(2)["messages"].([]any) {
		if m := m.(map[string]any); m["role"] == "tool" && m["tool_call_id"] == "call_list" {
			listing, _ = m["content"].(string)
		}
	}
	var got tasks.ListSummary
	if err := json.Unmarshal([]byte(listing), &got); err != nil || len(listing) > tasks.MaxStoredJSON || got.Count != len(ids) ||
		got.Tasks[1].ID != ids[1] || !strings.Contains(got.Note, "list_tasks shows the tasks as they are now") {
		t.Fatalf("the next turn's model read the listing as %d bytes: %.300s", len(listing), listing)
	}
}
