package offline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/agent/offline/grammar"
	"github.com/taskchat/taskchat/internal/agent/offline/results"
)

// wantCall is a tool call a test expects: its name and its parsed arguments.
type wantCall struct {
	tool string
	args map[string]any
}

func wantAdd(title string) []wantCall {
	return []wantCall{{"add_task", map[string]any{"title": title}}}
}

// listArgs are the arguments of the model's first call listing the tasks
// with status, as a round records them.
func listArgs(status string) string {
	b, _ := json.Marshal(results.ListCall(status).Args)
	return string(b)
}

func wantList(status string) []wantCall {
	return []wantCall{{"list_tasks", map[string]any{"status": status, "limit": float64(results.ListPage)}}}
}

func wantOnTask(tool string, ids ...int) []wantCall {
	var calls []wantCall
	for _, id := range ids {
		calls = append(calls, wantCall{tool, map[string]any{"task_id": id}})
	}
	return calls
}

// offlineCases are the utterances the offline model understands, with the
// calls it makes in the turn's first round. A nil want means it replies
// (asks or helps) without calling a tool. The table is shared with the
// fuzz target's seeds.
var offlineCases = []struct {
	say  string
	want []wantCall
}{
	// add
	{"Add a task to buy groceries", wantAdd("Buy groceries")},
	{"I need to remember to pay bills", wantAdd("Pay bills")},
	{"add a task to buy groceries please", wantAdd("Buy groceries")},
	{"ADD A TASK TO BUY GROCERIES!", wantAdd("BUY GROCERIES")},
	{"Please remind me to call the dentist.", wantAdd("Call the dentist")},
	{"Create a task: book flights", wantAdd("Book flights")},
	{"add 'Water the plants'", wantAdd("Water the plants")},
	{`Add "renew passport" to my list`, wantAdd("Renew passport")},
	{"new task finish the report", wantAdd("Finish the report")},
	{"Add a new task called Clean garage", wantAdd("Clean garage")},
	{"Remember to delete old emails", wantAdd("Delete old emails")},
	{"add buy milk with description two litres, semi-skimmed", []wantCall{{"add_task", map[string]any{"title": "Buy milk", "description": "two litres, semi-skimmed"}}}},
	{"Add call bob: description about the 3pm meeting", []wantCall{{"add_task", map[string]any{"title": "Call bob", "description": "about the 3pm meeting"}}}},
	{"add a task", nil},
	// list
	{"Show me all my tasks", wantList("all")},
	{"list my tasks", wantList("all")},
	{"What are my tasks?", wantList("all")},
	{"my tasks", wantList("all")},
	{"What's pending?", wantList("pending")},
	{"what do I still have to do", wantList("pending")},
	{"show pending tasks", wantList("pending")},
	{"Which tasks are not done yet?", wantList("pending")},
	{"pending?", wantList("pending")},
	{"anything left to do?", wantList("pending")},
	{"What have I completed?", wantList("completed")},
	{"show completed tasks", wantList("completed")},
	{"Show me my done tasks", wantList("completed")},
	// complete
	{"Mark task 3 as complete", wantOnTask("complete_task", 3)},
	{"complete task 3", wantOnTask("complete_task", 3)},
	{"task 3 is done", wantOnTask("complete_task", 3)},
	{"I finished task 3!", wantOnTask("complete_task", 3)},
	{"done with #3", wantOnTask("complete_task", 3)},
	{"I’m done with task 4", wantOnTask("complete_task", 4)},
	{"mark task three as done", wantOnTask("complete_task", 3)},
	{"Mark tasks 4 and 5 as complete", wantOnTask("complete_task", 4, 5)},
	{"Mark the groceries task as done", wantList("all")},
	{"I'm done", nil},
	// delete
	{"Delete task 2", wantOnTask("delete_task", 2)},
	{"remove task #2", wantOnTask("delete_task", 2)},
	{"cancel task 2, please", wantOnTask("delete_task", 2)},
	{"get rid of #2 and #5", wantOnTask("delete_task", 2, 5)},
	{"Delete the meeting task", wantList("all")},
	{"remove the groceries task", wantList("all")},
	{"delete", nil},
	// update
	{"Change task 1 to 'Call mom tonight'", []wantCall{{"update_task", map[string]any{"task_id": 1, "title": "Call mom tonight"}}}},
	{"rename task 1 to call mom tonight", []wantCall{{"update_task", map[string]any{"task_id": 1, "title": "Call mom tonight"}}}},
	{"edit task 5 to say 'Pick up: keys'", []wantCall{{"update_task", map[string]any{"task_id": 5, "title": "Pick up: keys"}}}},
	{"update task 1 title to Call mom at 5", []wantCall{{"update_task", map[string]any{"task_id": 1, "title": "Call mom at 5"}}}},
	{"update task 1 description to bring the photos", []wantCall{{"update_task", map[string]any{"task_id": 1, "description": "bring the photos"}}}},
	{"Change the description of task #4 to: two dozen", []wantCall{{"update_task", map[string]any{"task_id": 4, "description": "two dozen"}}}},
	{"rename the groceries task to buy fruit", wantList("all")},
	{"rename task 1", nil},
	// anything else
	{"hello", nil},
	{"help", nil},
	{"What can you do?", nil},
	{"what is the meaning of life, the universe and everything, and how do I bake bread", nil},
	{"tell me a joke", nil},
	{"", nil},
}

func TestOfflineFirstRound(t *testing.T) {
	for _, tc := range offlineCases {
		t.Run(tc.say, func(t *testing.T) {
			resp, _ := mustStream(t, userSays(tc.say))
			assertCalls(t, resp.ToolCalls, tc.want)
			if tc.want == nil && resp.Text == "" {
				t.Error("no call and no text: the person gets no answer")
			}
			if tc.want != nil && resp.Text != "" {
				t.Errorf("text %q alongside tool calls", resp.Text)
			}
		})
	}
}

func TestOfflineCallIDs(t *testing.T) {
	msgs := []agent.Message{userSays("Mark tasks 4 and 5 as complete")}
	resp, _ := mustStream(t, msgs...)
	msgs = afterRound(msgs, resp, `{"task_id":4,"status":"completed","title":"Pay bills"}`)
	msgs = append(msgs, userSays("Delete the meeting task"))
	listing, _ := mustStream(t, msgs...)
	msgs = afterRound(msgs, listing, `{"tasks":[{"id":7,"title":"Team meeting","completed":false}]}`)
	deletion, _ := mustStream(t, msgs...)

	got := []string{resp.ToolCalls[0].ID, resp.ToolCalls[1].ID, listing.ToolCalls[0].ID, deletion.ToolCalls[0].ID}
	if want := []string{"call_1", "call_2", "call_3", "call_4"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ids = %v, want %v: numbered after the calls already in the conversation", got, want)
	}
}

func TestOfflineActOnTaskByName(t *testing.T) {
	tasksJSON := `{"tasks":[
		{"id":1,"title":"Buy groceries","description":"","completed":false,"created_at":"2026-01-02T10:00:00Z"},
		{"id":4,"title":"Team meeting at 10","description":"room B","completed":false,"created_at":"2026-01-02T10:00:00Z"},
		{"id":6,"title":"Meeting notes","description":"","completed":true,"created_at":"2026-01-02T10:00:00Z"}]}`

	t.Run("one match is deleted, then confirmed", func(t *testing.T) {
		msgs := []agent.Message{userSays("Delete the team meeting task")}
		first, _ := mustStream(t, msgs...)
		assertCalls(t, first.ToolCalls, wantList("all"))

		msgs = afterRound(msgs, first, tasksJSON)
		second, _ := mustStream(t, msgs...)
		assertCalls(t, second.ToolCalls, wantOnTask("delete_task", 4))

		msgs = afterRound(msgs, second, `{"task_id":4,"status":"deleted","title":"Team meeting at 10"}`)
		third, _ := mustStream(t, msgs...)
		assertText(t, third, "Deleted task 4: Team meeting at 10.")
	})
	t.Run("several matches are listed and the person is asked", func(t *testing.T) {
		resp := mustRoundTwo(t, "Delete the meeting task", tasksJSON)
		assertText(t, resp, "2 tasks match \"meeting\":\n- [ ] #4 Team meeting at 10 — room B\n- [x] #6 Meeting notes\n"+
			"Which one should I delete? Tell me its number, like \"Delete task 4\".")
	})
	t.Run("no match is said plainly", func(t *testing.T) {
		resp := mustRoundTwo(t, "remove the dentist task", tasksJSON)
		assertText(t, resp, "I couldn't find a task matching \"dentist\" — want to see your list?")
	})
	t.Run("a plural matches the singular title", func(t *testing.T) {
		resp := mustRoundTwo(t, "remove the groceries task", tasksJSON)
		assertCalls(t, resp.ToolCalls, wantOnTask("delete_task", 1))
	})
	t.Run("completing by name", func(t *testing.T) {
		resp := mustRoundTwo(t, "Mark the groceries task as done", tasksJSON)
		assertCalls(t, resp.ToolCalls, wantOnTask("complete_task", 1))
	})
	t.Run("renaming by name keeps the new title", func(t *testing.T) {
		resp := mustRoundTwo(t, "rename the groceries task to buy fruit", tasksJSON)
		assertCalls(t, resp.ToolCalls, []wantCall{{"update_task", map[string]any{"task_id": 1, "title": "Buy fruit"}}})
	})
	t.Run("a listing error is passed on", func(t *testing.T) {
		resp := mustRoundTwo(t, "Delete the meeting task", `{"error":"The task list is unavailable right now."}`)
		assertText(t, resp, "The task list is unavailable right now.")
	})
}

func TestOfflineConfirmations(t *testing.T) {
	cases := []struct {
		name, tool, args, result, want string
	}{
		{"added", "add_task", `{"title":"Buy groceries"}`, `{"task_id":1,"status":"created","title":"Buy groceries"}`, "Added task 1: Buy groceries."},
		{"add refused", "add_task", `{"title":""}`, `{"error":"Title is required."}`, "Title is required."},
		{"listed", "list_tasks", `{"status":"all"}`, `{"tasks":[{"id":1,"title":"Buy groceries","description":"","completed":false,"created_at":"2026-01-02T10:00:00Z"},{"id":2,"title":"Call mom","description":"after 6","completed":true,"created_at":"2026-01-02T10:00:00Z"}]}`,
			"You have 2 tasks:\n- [ ] #1 Buy groceries\n- [x] #2 Call mom — after 6"},
		{"listed pending", "list_tasks", `{"status":"pending"}`, `{"tasks":[{"id":1,"title":"Buy groceries","completed":false}]}`, "You have 1 pending task:\n- [ ] #1 Buy groceries"},
		{"listed completed", "list_tasks", `{"status":"completed"}`, `{"tasks":[{"id":2,"title":"Call mom","completed":true}]}`, "You have completed 1 task:\n- [x] #2 Call mom"},
		{"empty list", "list_tasks", `{"status":"all"}`, `{"tasks":[]}`, `You have no tasks yet. Try "Add a task to buy groceries".`},
		{"nothing pending", "list_tasks", `{"status":"pending"}`, `{"tasks":[]}`, "You have no pending tasks — all caught up!"},
		{"nothing completed", "list_tasks", `{"status":"completed"}`, `{"tasks":null}`, "You haven't completed any tasks yet."},
		{"list refused", "list_tasks", `{"status":"later"}`, `{"error":"Status must be one of all, pending or completed."}`, "Status must be one of all, pending or completed."},
		{"completed", "complete_task", `{"task_id":3}`, `{"task_id":3,"status":"completed","title":"Call mom"}`, "Marked task 3 as complete: Call mom."},
		{"complete not found", "complete_task", `{"task_id":999}`, `{"error":"Task 999 was not found."}`, "I couldn't find task 999 — want to see your list?"},
		{"deleted", "delete_task", `{"task_id":2}`, `{"task_id":2,"status":"deleted","title":"Buy groceries"}`, "Deleted task 2: Buy groceries."},
		{"delete not found", "delete_task", `{"task_id":42}`, `{"error":"Task 42 was not found."}`, "I couldn't find task 42 — want to see your list?"},
		{"updated", "update_task", `{"task_id":1,"title":"Call mom tonight"}`, `{"task_id":1,"status":"updated","title":"Call mom tonight"}`, "Updated task 1: Call mom tonight."},
		{"update not found", "update_task", `{"task_id":8,"title":"X"}`, `{"error":"Task 8 was not found."}`, "I couldn't find task 8 — want to see your list?"},
		{"update refused", "update_task", `{"task_id":1}`, `{"error":"Give a new title, a new description, or both"}`, "Give a new title, a new description, or both."},
		{"unstructured result", "add_task", `{"title":"X"}`, `{"text":"Created task 9"}`, "Created task 9."},
		{"result not JSON", "delete_task", `{"task_id":2}`, `the database is down`, "the database is down."},
		{"title ending a sentence", "add_task", `{"title":"Why?"}`, `{"task_id":5,"status":"created","title":"Why?"}`, "Added task 5: Why?"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			call := agent.ToolCall{ID: "call_1", Name: tc.tool, Arguments: tc.args}
			// "zzz" asks for no call: the round is confirmed as it is.
			msgs := []agent.Message{userSays("zzz"), {Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{call}},
				{Role: agent.RoleTool, ToolCallID: "call_1", Content: tc.result}}
			resp, _ := mustStream(t, msgs...)
			assertText(t, resp, tc.want)
		})
	}
}

func TestOfflineConfirmsEveryCallOfARound(t *testing.T) {
	msgs := []agent.Message{userSays("complete tasks 4 and 5"), {Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{
		{ID: "call_1", Name: "complete_task", Arguments: `{"task_id":4}`},
		{ID: "call_2", Name: "complete_task", Arguments: `{"task_id":5}`},
		{ID: "call_3", Name: "complete_task", Arguments: `{"task_id":6}`},
	}},
		{Role: agent.RoleTool, ToolCallID: "call_2", Content: `{"error":"Task 5 was not found."}`},
		{Role: agent.RoleTool, ToolCallID: "call_1", Content: `{"task_id":4,"status":"completed","title":"Pay bills"}`},
	}
	resp, _ := mustStream(t, msgs...)
	assertText(t, resp, "Marked task 4 as complete: Pay bills.\nI couldn't find task 5 — want to see your list?\n"+
		"I got no answer from complete_task; please try again.")
}

func TestOfflineOutOfScope(t *testing.T) {
	for _, say := range []string{"tell me a joke", "what's the weather?", "who won the game last night?"} {
		resp, _ := mustStream(t, userSays(say))
		if len(resp.ToolCalls) != 0 || !strings.Contains(resp.Text, "I only manage your to-do list") {
			t.Errorf("%q: calls %v, text %q; want no call and the out-of-scope answer", say, resp.ToolCalls, resp.Text)
		}
	}
}

// TestOfflineSaysWhatItCannotDo checks that a request the tools cannot
// carry out is answered as such, neither offered as a new task nor read
// as another request.
func TestOfflineSaysWhatItCannotDo(t *testing.T) {
	for say, want := range map[string]string{
		"reopen task 1":                         grammar.NoReopenText,
		"uncomplete task 1":                     grammar.NoReopenText,
		"mark task 2 as not done":               grammar.NoReopenText,
		"put the report back to pending":        grammar.NoReopenText,
		"set the due date of task 2 to friday":  grammar.NoDatesText,
		"change the priority of task 3 to high": grammar.NoDatesText,
		"give the dentist task a deadline":      grammar.NoDatesText,
		"set task 4 priority to high":           grammar.NoDatesText,
		"add a deadline to the report":          grammar.NoDatesText,
	} {
		resp, _ := mustStream(t, userSays(say))
		if want = results.FillExamples(want, nil); len(resp.ToolCalls) != 0 || resp.Text != want {
			t.Errorf("%q: calls %v, text %q; want %q", say, resp.ToolCalls, resp.Text, want)
		}
	}
}

// An example in a reply names one of the person's own tasks when the
// conversation has shown one, and no number at all when it has not:
// "Change task 3 to …" would point at a task that may not exist.
func TestOfflineExamplesNameRealTasks(t *testing.T) {
	resp, _ := mustStream(t, userSays("undo that"))
	if strings.ContainsAny(resp.Text, "0123456789") || !strings.Contains(resp.Text, "task <number>") {
		t.Errorf("undo, with no task known: %q; want an example with no task number", resp.Text)
	}
	listed := []agent.Message{
		userSays("show my tasks"),
		{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "call_1", Name: results.ToolListTasks, Arguments: `{"status":"all"}`}}},
		{Role: agent.RoleTool, ToolCallID: "call_1", Content: `{"tasks":[{"id":7,"title":"Buy milk","completed":false},{"id":9,"title":"Call mom","completed":false}]}`},
		{Role: agent.RoleAssistant, Content: "- [ ] #7 Buy milk\n- [ ] #9 Call mom"},
	}
	for _, say := range []string{"undo that", "what can you do?", "set the due date of task 9 to friday"} {
		resp, _ := mustStream(t, append(listed, userSays(say))...)
		for _, n := range []string{"1", "2", "3"} {
			if strings.Contains(resp.Text, "task "+n) {
				t.Errorf("%q after a list of tasks 7 and 9 names task %s: %q", say, n, resp.Text)
			}
		}
		if !strings.Contains(resp.Text, "task 7") {
			t.Errorf("%q after a list of tasks 7 and 9: %q; want an example naming task 7", say, resp.Text)
		}
	}
}

// TestOfflineReadsFollowUpsFromHistory checks that "it" and "the second
// one" are read from the earlier turns' tool results alone, as stored.
func TestOfflineReadsFollowUpsFromHistory(t *testing.T) {
	added := []agent.Message{
		userSays("add buy milk"),
		{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "call_1", Name: "add_task", Arguments: `{"title": "Buy milk"}`}}},
		{Role: agent.RoleTool, ToolCallID: "call_1", Content: `{"task_id":7,"status":"created","title":"Buy milk"}`},
		{Role: agent.RoleAssistant, Content: "Added task 7: Buy milk."},
	}
	resp, _ := mustStream(t, append(added, userSays("actually, remove it"))...)
	assertCalls(t, resp.ToolCalls, wantOnTask("delete_task", 7))

	listed := []agent.Message{
		userSays("what's pending?"),
		{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "call_1", Name: "list_tasks", Arguments: listArgs("pending")}}},
		{Role: agent.RoleTool, ToolCallID: "call_1", Content: `{"tasks":[{"id":2,"title":"Call mom"},{"id":5,"title":"Pay rent"},{"id":9,"title":"Walk the dog"}]}`},
		{Role: agent.RoleAssistant, Content: "You have 3 pending tasks: …"},
		userSays("thanks"),
		{Role: agent.RoleAssistant, Content: "You're welcome!"},
	}
	resp, _ = mustStream(t, append(listed, userSays("the second one is done"))...)
	assertCalls(t, resp.ToolCalls, wantOnTask("complete_task", 5))
	resp, _ = mustStream(t, append(listed, userSays("delete all of them"))...)
	assertCalls(t, resp.ToolCalls, wantOnTask("delete_task", 2, 5, 9))
	resp, _ = mustStream(t, append(listed, userSays("rename it to call dad"))...)
	if len(resp.ToolCalls) != 0 || !strings.Contains(resp.Text, "Which one") {
		t.Errorf("\"it\" after three tasks: calls %v, text %q; want a question", resp.ToolCalls, resp.Text)
	}
}

// TestOfflineCorrectionSaysWhatStays checks that "no, I meant task 4"
// after a deletion deletes task 4 and says that task 3 cannot come back,
// rather than leaving the person to think it was restored.
func TestOfflineCorrectionSaysWhatStays(t *testing.T) {
	msgs := []agent.Message{
		userSays("delete task 3"),
		{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "call_1", Name: "delete_task", Arguments: `{"task_id":3}`}}},
		{Role: agent.RoleTool, ToolCallID: "call_1", Content: `{"task_id":3,"status":"deleted","title":"Call mom"}`},
		{Role: agent.RoleAssistant, Content: "Deleted task 3: Call mom."},
		userSays("wait no, I meant task 4"),
	}
	first, _ := mustStream(t, msgs...)
	assertCalls(t, first.ToolCalls, wantOnTask("delete_task", 4))
	resp, _ := mustStream(t, afterRound(msgs, first, `{"task_id":4,"status":"deleted","title":"Pay rent"}`)...)
	assertText(t, resp, "Deleted task 4: Pay rent.\n"+
		"Task 3, Call mom, stays deleted: I can't bring a deleted task back, but I can add it again.")
}

// TestOfflineAnswersAboutOneTopic checks that a question about some
// tasks answers with those alone, not the whole list.
func TestOfflineAnswersAboutOneTopic(t *testing.T) {
	listing := `{"tasks":[{"id":1,"title":"Buy groceries"},{"id":3,"title":"Dentist appointment on Tuesday"},{"id":4,"title":"Call mom","completed":true}]}`
	for say, want := range map[string]string{
		"do I have anything about the dentist?": "You have 1 task matching \"dentist\":\n- [ ] #3 Dentist appointment on Tuesday",
		"show me task 4":                        "Here is task 4:\n- [x] #4 Call mom",
		"what was task 9 again?":                "I couldn't find task 9 — want to see your list?",
		"anything about yoga?":                  "You have no task matching \"yoga\".",
	} {
		assertText(t, mustRoundTwo(t, say, listing), want)
	}
}

// TestOfflineAsksWhatToDoWithABareReference checks that a reference said
// alone, with no question open, changes nothing: it names the tasks and
// asks, and the next message acts on them.
func TestOfflineAsksWhatToDoWithABareReference(t *testing.T) {
	history := []agent.Message{userSays("3"), {Role: agent.RoleAssistant, Content: "What should I do with task 3?"}}
	resp, _ := mustStream(t, append(history, userSays("it"))...)
	if len(resp.ToolCalls) != 0 || !strings.Contains(resp.Text, "task 3") {
		t.Errorf("\"it\" after \"3\": calls %v, text %q; want a question about task 3", resp.ToolCalls, resp.Text)
	}
	history = append(history, userSays("it"), agent.Message{Role: agent.RoleAssistant, Content: resp.Text})
	resp, _ = mustStream(t, append(history, userSays("delete it"))...)
	assertCalls(t, resp.ToolCalls, wantOnTask("delete_task", 3))
}

// BenchmarkOfflineLongConversation reads the longest messages taskchat
// accepts, as each model call does: the current one and those before it
// (cost_test.go counts that this work is linear in the text and bounded
// as a conversation grows).
func BenchmarkOfflineLongConversation(b *testing.B) {
	commas := strings.Repeat("a, ", 1333)
	var msgs []agent.Message
	for range 4 {
		msgs = append(msgs, userSays("why "+commas[:3990]+"?"), agent.Message{Role: agent.RoleAssistant, Content: "I only manage your to-do list."})
	}
	msgs = append(msgs, userSays("add these tasks: "+commas[:3980]))
	m := New()
	for b.Loop() {
		if _, err := m.Stream(context.Background(), agent.Request{Messages: msgs}, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// A conversation recorded before list_tasks answered a page holds
// listings without a limit, which answered every task: read again, they
// still say which question is open, and "the second one" answers it.
func TestOfflineReadsListingsRecordedBeforePages(t *testing.T) {
	history := []agent.Message{
		userSays("Delete the meeting task"),
		{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "call_1", Name: "list_tasks", Arguments: `{"status":"all"}`}}},
		{Role: agent.RoleTool, ToolCallID: "call_1", Content: `{"tasks":[{"id":4,"title":"Team meeting at 10"},{"id":6,"title":"Meeting notes"},{"id":8,"title":"Book the meeting room"}]}`},
		{Role: agent.RoleAssistant, Content: "3 tasks match \"meeting\": … Which one should I delete?"},
		userSays("the second one"),
	}
	resp, _ := mustStream(t, history...)
	assertCalls(t, resp.ToolCalls, wantOnTask("delete_task", 6))
}

// A list shown is its first results.ShownTasks tasks, said to be a part; a list the steps read
// from is read to its last page; and one listing serves both when a
// message shows the list and then acts on a task named by its title.
func TestOfflinePagesOfAList(t *testing.T) {
	page := func(from, to int, next string) string {
		var items []string
		for i := from; i <= to; i++ {
			title := fmt.Sprintf("task %d", i)
			if i == 1500 {
				title = "Call the dentist"
			}
			items = append(items, fmt.Sprintf(`{"id":%d,"title":%q}`, i, title))
		}
		if next != "" {
			return fmt.Sprintf(`{"tasks":[%s],"next_cursor":%q}`, strings.Join(items, ","), next)
		}
		return fmt.Sprintf(`{"tasks":[%s]}`, strings.Join(items, ","))
	}
	first, second := page(1, results.ListPage, "c1"), page(results.ListPage+1, 1600, "")
	nextCall := []wantCall{{"list_tasks", map[string]any{"status": "all", "limit": float64(results.ListPage), "cursor": "c1"}}}

	t.Run("shown", func(t *testing.T) {
		resp := mustRoundTwo(t, "show my tasks", first)
		if !strings.HasPrefix(resp.Text, fmt.Sprintf("You have more than %d tasks; here are the first %d:\n- [ ] #1 task 1\n", results.ListPage, results.ShownTasks)) ||
			strings.Count(resp.Text, "\n") != results.ShownTasks+1 || len(resp.ToolCalls) != 0 {
			t.Fatalf("reply %q…, calls %v", resp.Text[:min(len(resp.Text), 120)], resp.ToolCalls)
		}
	})
	deleted := `{"task_id":1500,"status":"deleted","title":"Call the dentist"}`
	for _, c := range []struct{ say, start string }{
		{"delete the dentist task", "Deleted task 1500"},
		{"show my tasks and delete the dentist task", fmt.Sprintf("You have 1600 tasks; here are the first %d:\n- [ ] #1 task 1\n", results.ShownTasks)},
	} {
		t.Run(c.say, func(t *testing.T) {
			msgs := []agent.Message{userSays(c.say)}
			for _, round := range []struct {
				want   []wantCall
				result string
			}{{wantList("all"), first}, {nextCall, second}, {wantOnTask("delete_task", 1500), deleted}} {
				resp, _ := mustStream(t, msgs...)
				assertCalls(t, resp.ToolCalls, round.want)
				msgs = afterRound(msgs, resp, round.result)
			}
			resp, _ := mustStream(t, msgs...)
			if !strings.HasPrefix(resp.Text, c.start) || !strings.HasSuffix(resp.Text, "Deleted task 1500: Call the dentist.") {
				t.Fatalf("reply %q … %q", resp.Text[:min(len(resp.Text), 60)], resp.Text[max(0, len(resp.Text)-60):])
			}
		})
	}
}

func TestOfflineNumbersCallsAfterTheHistory(t *testing.T) {
	history := []agent.Message{
		userSays("Delete the meeting task"),
		{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "call_1", Name: "list_tasks", Arguments: listArgs("all")}}},
		{Role: agent.RoleTool, ToolCallID: "call_1", Content: `{"tasks":[]}`},
		{Role: agent.RoleAssistant, Content: `I couldn't find a task matching "meeting" — want to see your list?`},
		userSays("yes, show me all my tasks"),
	}
	resp, _ := mustStream(t, history...)
	assertCalls(t, resp.ToolCalls, wantList("all"))
	if resp.ToolCalls[0].ID != "call_2" {
		t.Errorf("id = %q, want call_2 after the history's call_1", resp.ToolCalls[0].ID)
	}
}

func TestOfflineStreamsText(t *testing.T) {
	msgs := []agent.Message{userSays("show my tasks"), {Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "call_1", Name: "list_tasks", Arguments: listArgs("all")}}},
		{Role: agent.RoleTool, ToolCallID: "call_1", Content: `{"tasks":[{"id":1,"title":"Buy groceries and milk for the week"},{"id":2,"title":"Call mom"}]}`}}
	for _, m := range [][]agent.Message{msgs, {userSays("hello")}, {userSays("tell me a joke")}} {
		resp, chunks := mustStream(t, m...)
		if len(chunks) < 3 {
			t.Errorf("%d chunks for %q, want the text in several pieces", len(chunks), resp.Text)
		}
		if joined := strings.Join(chunks, ""); joined != resp.Text {
			t.Errorf("chunks join to %q, want Response.Text %q", joined, resp.Text)
		}
	}
	resp, chunks := mustStream(t, userSays("Delete task 2"))
	if len(chunks) != 0 || resp.Text != "" {
		t.Errorf("a tool-call round streamed %q", chunks)
	}
}

func TestOfflineHelp(t *testing.T) {
	for _, say := range []string{"hi", "help", "What can you do?", ""} {
		resp, _ := mustStream(t, userSays(say))
		if len(resp.ToolCalls) != 0 {
			t.Errorf("%q called %v", say, resp.ToolCalls)
		}
		for _, example := range []string{"Add a task to buy groceries", "What's pending?", "Mark task <number> as complete", `"delete" and a word from its title`} {
			if !strings.Contains(resp.Text, example) {
				t.Errorf("help for %q lacks the example %q:\n%s", say, example, resp.Text)
			}
		}
	}
	resp, _ := mustStream(t)
	if !strings.Contains(resp.Text, "Add a task") {
		t.Errorf("no messages at all: %q, want the help text", resp.Text)
	}
}

func TestOfflineIsDeterministicAndStateless(t *testing.T) {
	shared := New()
	answers := func(m agent.Model) []agent.Response {
		var out []agent.Response
		for _, tc := range offlineCases {
			resp, err := m.Stream(context.Background(), agent.Request{Messages: []agent.Message{userSays(tc.say)}}, nil)
			if err != nil {
				t.Fatalf("Stream(%q): %v", tc.say, err)
			}
			out = append(out, resp)
		}
		return out
	}
	first, again, fresh := answers(shared), answers(shared), answers(New())
	if !reflect.DeepEqual(first, again) || !reflect.DeepEqual(first, fresh) {
		t.Error("the same requests got different answers")
	}
	if shared.Name() != "offline" {
		t.Errorf("Name() = %q, want offline", shared.Name())
	}
}

func TestOfflineStopsWhenContextIsDone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := New().Stream(ctx, agent.Request{Messages: []agent.Message{userSays("hello")}}, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled before the call: err = %v, want context.Canceled", err)
	}

	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	chunks := 0
	_, err := New().Stream(ctx, agent.Request{Messages: []agent.Message{userSays("hello")}}, func(string) { chunks++; cancel() })
	if !errors.Is(err, context.Canceled) || chunks != 1 {
		t.Errorf("cancelled while streaming: err = %v after %d chunks, want context.Canceled after 1", err, chunks)
	}
}

// A paced model writes the same reply, piece by piece, and stops between
// two pieces when its turn is stopped: what a person watching one sees.
func TestOfflinePacedWritesTheSameReplyAndStops(t *testing.T) {
	req := agent.Request{Messages: []agent.Message{userSays("hello")}}
	var fast, paced strings.Builder
	want, err := New().Stream(context.Background(), req, func(s string) { fast.WriteString(s) })
	if err != nil {
		t.Fatal(err)
	}
	got, err := NewPaced(time.Millisecond).Stream(context.Background(), req, func(s string) { paced.WriteString(s) })
	if err != nil || got.Text != want.Text || paced.String() != fast.String() {
		t.Fatalf("paced: %q (streamed %q), %v; want %q", got.Text, paced.String(), err, want.Text)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	chunks := 0
	// An hour between pieces: only the stop ends the wait for the second.
	_, err = NewPaced(time.Hour).Stream(ctx, req, func(string) { chunks++; cancel() })
	if !errors.Is(err, context.Canceled) || chunks != 1 {
		t.Errorf("stopped while paced: err = %v after %d chunks, want context.Canceled after 1", err, chunks)
	}
}

func TestOfflineUsage(t *testing.T) {
	short, _ := mustStream(t, userSays("list my tasks"))
	long, _ := mustStream(t, userSays("list my tasks"+strings.Repeat(" and", 400)))
	u := short.Usage
	if u.PromptTokens <= 0 || u.CompletionTokens <= 0 || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
		t.Errorf("usage = %+v, want positive counts that add up", u)
	}
	if long.Usage.PromptTokens < u.PromptTokens+400 {
		t.Errorf("1600 more characters raised the prompt from %d to %d tokens, want at least 400 more",
			u.PromptTokens, long.Usage.PromptTokens)
	}
	usage := func(system string) int {
		resp, err := New().Stream(context.Background(), agent.Request{System: system, Messages: []agent.Message{userSays("list my tasks")}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Usage.PromptTokens
	}
	if without, with := usage(""), usage(strings.Repeat("x", 400)); with != without+100 {
		t.Errorf("a 400-character system prompt: %d tokens, want %d", with, without+100)
	}
}

// FuzzOfflineParse checks that no message makes the offline model panic or
// emit a call the loop could not run.
func FuzzOfflineParse(f *testing.F) {
	for _, tc := range offlineCases {
		f.Add(tc.say)
	}
	known := map[string]bool{"add_task": true, "list_tasks": true, "complete_task": true, "delete_task": true, "update_task": true}
	// Each message is also said after a listing, so follow-ups resolve.
	listed := []agent.Message{
		userSays("what's pending?"),
		{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "call_1", Name: "list_tasks", Arguments: listArgs("pending")}}},
		{Role: agent.RoleTool, ToolCallID: "call_1", Content: `{"tasks":[{"id":2,"title":"Call mom"},{"id":5,"title":"Pay rent"}]}`},
		{Role: agent.RoleAssistant, Content: "You have 2 pending tasks."},
	}
	f.Fuzz(func(t *testing.T, say string) {
		for _, history := range [][]agent.Message{nil, listed} {
			msgs := append(append([]agent.Message{}, history...), userSays(say))
			resp, err := New().Stream(context.Background(), agent.Request{Messages: msgs}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.ToolCalls) == 0 && resp.Text == "" {
				t.Fatalf("%q: no call and no text", say)
			}
			for _, c := range resp.ToolCalls {
				var args map[string]any
				if !known[c.Name] || json.Unmarshal([]byte(c.Arguments), &args) != nil {
					t.Fatalf("%q: bad call %s(%s)", say, c.Name, c.Arguments)
				}
			}
		}
	})
}

// BenchmarkOfflineFirstRound reads each message of the table once per
// iteration: the cost of understanding a message.
func BenchmarkOfflineFirstRound(b *testing.B) {
	var reqs []agent.Request
	for _, tc := range offlineCases {
		reqs = append(reqs, agent.Request{Messages: []agent.Message{userSays(tc.say)}})
	}
	m := New()
	b.ReportAllocs()
	for b.Loop() {
		for _, r := range reqs {
			if _, err := m.Stream(context.Background(), r, nil); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(reqs)), "ns/message")
}

func userSays(text string) agent.Message { return agent.Message{Role: agent.RoleUser, Content: text} }

// afterRound returns msgs followed by resp's calls and one result for each.
func afterRound(msgs []agent.Message, resp agent.Response, results ...string) []agent.Message {
	out := append(append([]agent.Message{}, msgs...), agent.Message{Role: agent.RoleAssistant, Content: resp.Text, ToolCalls: resp.ToolCalls})
	for i, c := range resp.ToolCalls {
		out = append(out, agent.Message{Role: agent.RoleTool, ToolCallID: c.ID, Content: results[i%len(results)]})
	}
	return out
}

// mustRoundTwo runs a turn's first round, checks it lists the tasks, and
// returns the second round given listing as the result.
func mustRoundTwo(tb testing.TB, say, listing string) agent.Response {
	tb.Helper()
	msgs := []agent.Message{userSays(say)}
	first, _ := mustStream(tb, msgs...)
	assertCalls(tb, first.ToolCalls, wantList("all"))
	resp, _ := mustStream(tb, afterRound(msgs, first, listing)...)
	return resp
}

func mustStream(tb testing.TB, msgs ...agent.Message) (agent.Response, []string) {
	tb.Helper()
	var chunks []string
	resp, err := New().Stream(context.Background(), agent.Request{System: "You manage todo lists.", Messages: msgs},
		func(s string) { chunks = append(chunks, s) })
	if err != nil {
		tb.Fatalf("Stream: %v", err)
	}
	return resp, chunks
}

func assertText(tb testing.TB, resp agent.Response, want string) {
	tb.Helper()
	if len(resp.ToolCalls) != 0 {
		tb.Errorf("calls %v, want the text %q", resp.ToolCalls, want)
	}
	if resp.Text != want {
		tb.Errorf("text =\n%s\nwant\n%s", resp.Text, want)
	}
}

func assertCalls(tb testing.TB, got []agent.ToolCall, want []wantCall) {
	tb.Helper()
	if len(got) != len(want) {
		tb.Fatalf("calls = %v, want %d: %v", got, len(want), want)
	}
	for i, w := range want {
		var args map[string]any
		if err := json.Unmarshal([]byte(got[i].Arguments), &args); err != nil {
			tb.Fatalf("call %d arguments %q: %v", i, got[i].Arguments, err)
		}
		if got[i].Name != w.tool || !reflect.DeepEqual(args, asJSON(tb, w.args)) {
			tb.Errorf("call %d = %s(%s), want %s(%v)", i, got[i].Name, got[i].Arguments, w.tool, w.args)
		}
	}
}

// asJSON returns v as encoding/json decodes it, numbers as float64.
func asJSON(tb testing.TB, v map[string]any) map[string]any {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		tb.Fatal(fmt.Errorf("round trip of %v: %w", v, err))
	}
	return out
}

// A task known by its number only (in a turn recorded before questions
// looked tasks up) is named by its number: no empty title in a sentence
// or a list line.
func TestOfflineNamesATaskKnownByNumber(t *testing.T) {
	msgs := []agent.Message{userSays("need to finish task 3"),
		{Role: agent.RoleAssistant, Content: `Should I mark task 3 as complete? Say "yes" if it's done; otherwise I'll leave it open.`},
		userSays("yes I have to")}
	resp, _ := mustStream(t, msgs...)
	assertText(t, resp, "Okay, I'll leave task 3 open.")
	if got := results.TaskLines([]results.Task{{ID: 4}}); got != "- [ ] #4" {
		t.Errorf("results.TaskLines = %q", got)
	}
}

// Only a turn stopped at a limit is carried on: after another model's turn
// that did less than the offline model would read into its message, or a
// turn the person stopped, "ok" or "yes" makes no call.
func TestOfflineCarriesOnOnlyATurnStoppedAtALimit(t *testing.T) {
	history := []agent.Message{
		userSays("delete task 3 and task 4"),
		{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "call_1", Name: results.ToolDeleteTask, Arguments: `{"task_id":3}`}}},
		{Role: agent.RoleTool, ToolCallID: "call_1", Content: `{"task_id":3,"status":"deleted","title":"Buy milk"}`},
		{Role: agent.RoleAssistant, Content: "I deleted task 3. I left task 4, Renew passport, as it is."},
	}
	for _, say := range []string{"ok", "yes", "continue"} {
		resp, _ := mustStream(t, append(history, userSays(say))...)
		if len(resp.ToolCalls) != 0 {
			t.Errorf("%q after a turn that was not stopped at a limit: calls %v, want none", say, resp.ToolCalls)
		}
	}
	stopped := append(append([]agent.Message(nil), history[:3]...),
		agent.Message{Role: agent.RoleAssistant, Content: "I stopped because this request needed more tool calls than I'm allowed in one message. " + agent.StoppedNote + ": I deleted 1 task (Buy milk); tell me how you'd like to continue."})
	resp, _ := mustStream(t, append(stopped, userSays("continue"))...)
	assertCalls(t, resp.ToolCalls, wantOnTask("delete_task", 4))
}

// TestOfflineCorrectionWithNothingBefore checks that "no, I meant keep it"
// when nothing was changed before is heard as a plain no: the list stays
// as it was, and the reply says so, rather than the help text.
func TestOfflineCorrectionWithNothingBefore(t *testing.T) {
	for _, say := range []string{"no, I meant keep it", "sorry, I meant leave it"} {
		resp, _ := mustStream(t, userSays(say))
		if len(resp.ToolCalls) != 0 || !strings.Contains(resp.Text, "left your list as it was") {
			t.Errorf("%q with nothing before: calls %v, text %q; want the list left as it was", say, resp.ToolCalls, resp.Text)
		}
	}
}
