package tasks_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/taskchat/taskchat/internal/tasks"
)

// Arguments or a result of any size are kept within MaxStoredJSON: as they
// are when they fit, else cut, as valid JSON that says so; a character is
// never cut in two, and text that escapes long still fits.
func TestStoredJSON(t *testing.T) {
	small := json.RawMessage(`{"title":"Buy café au lait ☕"}`)
	if got := tasks.StoredJSON(small); string(got) != string(small) {
		t.Errorf("a small value became %s", got)
	}
	for name, raw := range map[string]string{
		"long text":    fmt.Sprintf(`{"text":%q}`, strings.Repeat("x", 1<<20)),
		"emoji":        fmt.Sprintf(`{"text":%q}`, strings.Repeat("☕", 1<<18)),
		"escaped text": fmt.Sprintf(`{"text":%q}`, strings.Repeat(`"\`, 1<<18)),
	} {
		t.Run(name, func(t *testing.T) {
			got := tasks.StoredJSON(json.RawMessage(raw))
			var cut tasks.TruncatedJSON
			if err := json.Unmarshal(got, &cut); err != nil || len(got) > tasks.MaxStoredJSON {
				t.Fatalf("a value of %d bytes is kept in %d (%v)", len(raw), len(got), err)
			}
			if cut.Bytes != len(raw) || !strings.HasPrefix(raw, cut.Head) || len(cut.Head) < tasks.MaxStoredJSON/3 ||
				!strings.Contains(cut.Truncated, fmt.Sprintf("only its first %d are kept", len(cut.Head))) {
				t.Errorf("kept %d of %d bytes: %q", len(cut.Head), cut.Bytes, cut.Truncated)
			}
		})
	}
}

// A listing is kept as its count and every id, the first tasks with their
// titles, and its cursor, within MaxStoredJSON however long its titles.
func TestStoredResultOfAListing(t *testing.T) {
	list := tasks.ListResult{NextCursor: "c1"}
	for i := range tasks.MaxTaskPage {
		list.Tasks = append(list.Tasks, tasks.ListItem{ID: int64(1_000_000 + i), Title: strings.Repeat("☕", tasks.MaxTitleLen),
			Description: strings.Repeat("d", tasks.MaxDescriptionLen), Completed: i == 1})
	}
	raw, _ := json.Marshal(list)
	got := tasks.StoredResult("list_tasks", raw)
	var sum tasks.ListSummary
	if err := json.Unmarshal(got, &sum); err != nil || len(got) > tasks.MaxStoredJSON {
		t.Fatalf("a listing of %d bytes is kept in %d (%v)", len(raw), len(got), err)
	}
	if sum.Count != len(list.Tasks) || len(sum.IDs) != sum.Count || sum.IDs[999] != 1_000_999 || sum.NextCursor != "c1" {
		t.Errorf("kept %d tasks, %d ids, cursor %q", sum.Count, len(sum.IDs), sum.NextCursor)
	}
	if len(sum.Tasks) == 0 || len(sum.Tasks) > tasks.SummaryTasks || !sum.Tasks[1].Completed || sum.Tasks[1].Title != list.Tasks[1].Title ||
		!strings.Contains(sum.Note, fmt.Sprintf("A listing of 1000 tasks as they were then, kept as their ids and the first %d with their titles", len(sum.Tasks))) {
		t.Errorf("kept %d titles, noted %q", len(sum.Tasks), sum.Note)
	}
	if other := tasks.StoredResult("add_task", raw); strings.Contains(string(other), `"ids"`) {
		t.Errorf("another tool's result was kept as a listing: %.80s", other)
	}
}
