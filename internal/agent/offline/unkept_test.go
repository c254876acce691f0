package offline

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/agent/offline/results"
)

// A task added or renamed with a title that holds a date, a priority or a
// repeat keeps those words as written, and the reply says nothing more
// comes of them.
func TestOfflineSaysWhatATaskCannotKeep(t *testing.T) {
	for say, want := range map[string]string{
		"add pay rent tomorrow at 5":             `read due dates from a message yet, so "tomorrow at 5" is only part of the title`,
		"add renew passport, high priority":      `read priorities from a message yet, so "high priority" is only part of the title`,
		"add take out the bins every monday":     `don't repeat yet, so "every monday" is only part of the title`,
		"rename task 2 to call mom every sunday": `don't repeat yet, so "every sunday" is only part of the title`,
	} {
		msgs := []agent.Message{userSays(say)}
		first, _ := mustStream(t, msgs...)
		if len(first.ToolCalls) != 1 || first.ToolCalls[0].Name != results.ToolAddTask && first.ToolCalls[0].Name != results.ToolUpdateTask {
			t.Fatalf("%q: calls %v, want one add or update", say, first.ToolCalls)
		}
		var args struct{ Title string }
		_ = json.Unmarshal([]byte(first.ToolCalls[0].Arguments), &args)
		resp, _ := mustStream(t, afterRound(msgs, first, `{"task_id":2,"status":"created","title":`+strconv.Quote(args.Title)+`}`)...)
		if !strings.Contains(resp.Text, want) {
			t.Errorf("%q: %q, want it to say %q", say, resp.Text, want)
		}
	}
}
