package offline

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/taskchat/taskchat/internal/agent/offline/evaltest"
	"github.com/taskchat/taskchat/internal/agent/offline/results"
	"github.com/taskchat/taskchat/internal/tasks"
)

// A reply to "show me my tasks" with a thousand long tasks shows the
// first page and says how to see more; what it says works, and a later
// message that refers to a task shown ("the second one") still finds it,
// through the history as the chat engine stores it (a listing's summary).
func TestALongListShowsItsFirstPage(t *testing.T) {
	chat := evaltest.NewMemory(New())
	ctx, user := context.Background(), chat.NewUser(t)
	for i := range tasks.MaxTaskPage {
		title := fmt.Sprintf("Task %d %s", i+1, strings.Repeat("long title ", 15))
		if _, err := chat.Tasks().Add(ctx, user, tasks.NewTask{Title: title, Description: strings.Repeat("a long description ", 50)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	say := func(conversation int64, message string) evaltest.Turn {
		t.Helper()
		turn, err := chat.Say(ctx, user, conversation, message)
		if err != nil {
			t.Fatalf("%q: %v", message, err)
		}
		return turn
	}

	listed := say(0, "show me my tasks")
	lines := strings.Split(listed.Reply, "\n")
	if len(lines) != results.ShownTasks+2 || !strings.Contains(lines[0], "1000 tasks") || !strings.HasPrefix(lines[results.ShownTasks], "- [ ] #50 ") {
		t.Fatalf("the reply to a listing of 1000 tasks is %d lines, %d bytes, starting %q; want the first %d and how to see more",
			len(lines), len(listed.Reply), lines[0], results.ShownTasks)
	}
	if strings.Contains(listed.Reply, "a long description") {
		t.Errorf("a page of a long listing shows the tasks' descriptions:\n%s", listed.Reply)
	}
	more := lines[len(lines)-1]
	if !strings.Contains(more, `"show me tasks 51 to 70"`) {
		t.Fatalf("how to see more: %q", more)
	}

	next := say(listed.ConversationID, "show me tasks 51 to 70")
	if !strings.Contains(next.Reply, "- [ ] #51 Task 51 ") || !strings.Contains(next.Reply, "- [ ] #70 Task 70 ") || strings.Contains(next.Reply, "#71 ") {
		t.Errorf("what the reply said to do showed\n%s", next.Reply)
	}

	found := say(0, "anything about a long title?")
	if lines := strings.Split(found.Reply, "\n"); len(lines) != results.ShownTasks+2 || !strings.Contains(lines[0], "1000 tasks matching") {
		t.Errorf("a search that matches every task replied %d lines, %d bytes, starting %q", len(lines), len(found.Reply), lines[0])
	}

	again := say(0, "what's on my list?")
	done := say(again.ConversationID, "the second one is done")
	if len(done.Calls) != 1 || done.Calls[0].Tool != "complete_task" || string(done.Calls[0].Arguments) != `{"task_id":2}` {
		t.Errorf(`"the second one is done" after the listing called %+v, want complete_task of task 2: %s`, done.Calls, done.Reply)
	}
}
