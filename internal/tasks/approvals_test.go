package tasks

import (
	"encoding/json"
	"testing"
)

func TestSummarizeSaysWhatACallDoes(t *testing.T) {
	for _, tc := range []struct {
		tool, args, title, want string
	}{
		{"delete_task", `{"task_id":3}`, "Buy milk", "Delete task 3, Buy milk"},
		{"delete_task", `{"task_id":9}`, "", "Delete task 9"},
		{"complete_task", `{"task_id":2}`, "Pay rent", "Complete task 2, Pay rent"},
		{"update_task", `{"task_id":2,"title":"Pay the rent"}`, "Pay rent", `Update task 2, Pay rent: rename it to "Pay the rent"`},
		{"update_task", `{"task_id":2,"title":"x","description":"y"}`, "", `Update task 2: rename it to "x" and set its description`},
		// What an update does that no approval may hide: completing or
		// reopening, and setting or removing a due date or a priority.
		{"update_task", `{"task_id":2,"completed":true}`, "Pay rent", "Update task 2, Pay rent: mark it completed"},
		{"update_task", `{"task_id":2,"completed":false}`, "Pay rent", "Update task 2, Pay rent: reopen it"},
		{"update_task", `{"task_id":2,"due":"2026-12-04","priority":""}`, "", "Update task 2: set its due date to 2026-12-04 and remove its priority"},
		{"update_task", `{"task_id":2,"due":null,"priority":"high"}`, "", "Update task 2: remove its due date and set its priority to high"},
		{"add_task", `{"title":"Call mom"}`, "", "Add a task, Call mom"},
		{"list_tasks", `{}`, "", "List your tasks"},
	} {
		if got := Summarize(tc.tool, json.RawMessage(tc.args), tc.title); got != tc.want {
			t.Errorf("Summarize(%s, %s) = %q, want %q", tc.tool, tc.args, got, tc.want)
		}
	}
}

func TestResolvedShowsAResolutionInItsPlaceholdersStead(t *testing.T) {
	calls := []ToolCall{
		{CallID: "a", Awaiting: 7},
		{CallID: "b"},
		{CallID: "c", Awaiting: 8}, // still waits: no call of its id follows
		{CallID: "a"},              // a's resolution
	}
	got := Resolved(calls)
	if len(got) != 3 || got[0].CallID != "b" || got[1].CallID != "c" || got[2].CallID != "a" || got[2].Awaiting != 0 {
		t.Fatalf("Resolved = %+v", got)
	}
	plain := []ToolCall{{CallID: "x"}, {CallID: "x"}} // no placeholder: nothing goes
	if got := Resolved(plain); len(got) != 2 {
		t.Fatalf("Resolved dropped a call that waited for nothing: %+v", got)
	}
}

func TestAwaitingIDReadsOnlyAPlaceholder(t *testing.T) {
	a := Approval{ID: 42, Summary: "Delete task 1"}
	if id := AwaitingID(AwaitingJSON(a, ApprovalRequest{})); id != 42 {
		t.Fatalf("AwaitingID = %d", id)
	}
	for _, r := range []string{`{"task_id":1,"status":"deleted"}`, `{"error":"awaiting_approval"}`, `not json awaiting_approval`} {
		if id := AwaitingID(json.RawMessage(r)); id != 0 {
			t.Errorf("AwaitingID(%s) = %d", r, id)
		}
	}
}
