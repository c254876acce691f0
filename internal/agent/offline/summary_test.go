package offline_test

import (
	"strings"
	"testing"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/agent/offline"
)

// exchange is a turn as the model sees it: the person's message, one round
// of calls with their results, and the reply.
func exchange(user string, calls [][3]string, reply string) []agent.Message {
	msgs := []agent.Message{{Role: agent.RoleUser, Content: user}}
	if len(calls) > 0 {
		round := agent.Message{Role: agent.RoleAssistant}
		for i, c := range calls {
			round.ToolCalls = append(round.ToolCalls, agent.ToolCall{ID: c[0] + string(rune('a'+i)), Name: c[0], Arguments: c[1]})
		}
		msgs = append(msgs, round)
		for i, c := range calls {
			msgs = append(msgs, agent.Message{Role: agent.RoleTool, ToolCallID: round.ToolCalls[i].ID, Content: c[2]})
		}
	}
	return append(msgs, agent.Message{Role: agent.RoleAssistant, Content: reply})
}

func TestTheOfflineSummary(t *testing.T) {
	m := offline.New()
	var msgs []agent.Message
	msgs = append(msgs, exchange("Add buy milk and call Ana", [][3]string{
		{"add_task", `{"title":"Buy milk"}`, `{"task_id":1,"status":"created","title":"Buy milk"}`},
		{"add_task", `{"title":"Call Ana"}`, `{"task_id":2,"status":"created","title":"Call Ana"}`},
	}, "Added task 1, Buy milk, and task 2, Call Ana.")...)
	msgs = append(msgs, exchange("Ana is my sister, she lives in Porto", nil, "Noted.")...)
	msgs = append(msgs, exchange("rename 1 to buy oat milk and finish 2", [][3]string{
		{"update_task", `{"task_id":1,"title":"Buy oat milk"}`, `{"task_id":1,"status":"updated","title":"Buy oat milk"}`},
		{"complete_task", `{"task_id":2}`, `{"task_id":2,"status":"completed","title":"Call Ana"}`},
	}, "Done.")...)
	msgs = append(msgs, exchange("delete the meeting task", [][3]string{
		{"list_tasks", `{"status":"all"}`, `{"tasks":[{"id":3,"title":"Team meeting"},{"id":4,"title":"Meeting notes"}]}`},
	}, "Two tasks match. Which one do you mean: task 3 or task 4?")...)

	got := m.Summarize("", msgs)
	want := `Tasks added:
- #1 Buy milk
- #2 Call Ana
Tasks changed:
- #1 Buy oat milk
Tasks completed:
- #2 Call Ana
Still open:
- "delete the meeting task" (asked: "Which one do you mean: task 3 or task 4?")
The person said:
- "Ana is my sister, she lives in Porto"`
	if got != want {
		t.Fatalf("summary:\n%s\nwant:\n%s", got, want)
	}

	t.Run("it carries on the summary before it, and an answer closes what was open", func(t *testing.T) {
		next := exchange("the first one", [][3]string{
			{"delete_task", `{"task_id":3}`, `{"task_id":3,"status":"deleted","title":"Team meeting"}`},
		}, "Deleted task 3, Team meeting.")
		got := m.Summarize(want, next)
		if strings.Contains(got, "Still open") || !strings.Contains(got, "Tasks deleted:\n- #3 Team meeting") ||
			!strings.HasPrefix(got, "Tasks added:\n- #1 Buy milk\n- #2 Call Ana\n") || !strings.Contains(got, "Ana is my sister") {
			t.Fatalf("summary:\n%s", got)
		}
	})
	t.Run("a summary it did not write is kept as said", func(t *testing.T) {
		got := m.Summarize("They planned a trip to Porto.", nil)
		if got != "The person said:\n- They planned a trip to Porto." {
			t.Fatalf("summary:\n%s", got)
		}
	})
	t.Run("a long conversation keeps its first tasks and its last", func(t *testing.T) {
		var long []agent.Message
		for i := 1; i <= 100; i++ {
			id := string(rune('0'+i/100)) + string(rune('0'+i/10%10)) + string(rune('0'+i%10))
			long = append(long, exchange("add task "+id, [][3]string{
				{"add_task", `{}`, `{"task_id":` + strings.TrimLeft(id, "0") + `,"status":"created","title":"Task ` + id + `"}`},
			}, "Added.")...)
		}
		got := m.Summarize("", long)
		if !strings.Contains(got, "#1 Task 001") || !strings.Contains(got, "#100 Task 100") || strings.Contains(got, "#50 Task") {
			t.Fatalf("summary:\n%s", got)
		}
	})
}
