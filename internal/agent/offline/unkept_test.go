package offline

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/taskchat/taskchat/internal/agent"
)

// What a title says that a task cannot keep is found whatever the words:
// a date or a time, a priority, a repeat; and a title that only looks
// like one ("may I", "at home", "march on") holds none.
func TestUnkeptIn(t *testing.T) {
	for title, want := range map[string]string{
		"Pay rent tomorrow at 5":                "date tomorrow at 5",
		"Call mom on friday":                    "date on friday",
		"Submit the report by end of the month": "date by end of the month",
		"Dentist at 3pm":                        "date at 3pm",
		"Book flights next week":                "date next week",
		"Renew passport in 3 days":              "date in 3 days",
		"Pay the bill on the 12th":              "date on the 12th",
		"Send the card may 5":                   "date may 5",
		"Renew passport, high priority":         "priority high priority",
		"Fix the leak asap":                     "priority asap",
		"Take out the bins every monday":        "repeat every monday",
		"Water the plants daily":                "repeat daily",
		"Mow the lawn every other week":         "repeat every other week",
		"Urgent: call the bank tomorrow":        "priority Urgent | date tomorrow",
		"Buy milk":                              "",
		"Ask if I may borrow the car":           "",
		"Work at home":                          "",
		"Read chapter 3":                        "",
		"Buy 2 liters of milk":                  "",
		"March on the capital":                  "",
		"Plan the week":                         "",
	} {
		var got []string
		for _, u := range unkeptIn(title) {
			got = append(got, u.kind+" "+u.said)
		}
		if g := strings.Join(got, " | "); g != want {
			t.Errorf("unkeptIn(%q) = %q, want %q", title, g, want)
		}
	}
}

// An added task whose title holds a date, a priority or a repeat is added
// as written, and the reply says nothing more comes of those words.
func TestOfflineSaysWhatATaskCannotKeep(t *testing.T) {
	for say, want := range map[string]string{
		"add pay rent tomorrow at 5":         `no due dates yet, so "tomorrow at 5" is only part of the title`,
		"add renew passport, high priority":  `no priorities yet, so "high priority" is only part of the title`,
		"add take out the bins every monday": `don't repeat yet, so "every monday" is only part of the title`,
	} {
		msgs := []agent.Message{userSays(say)}
		first, _ := mustStream(t, msgs...)
		if len(first.ToolCalls) != 1 || first.ToolCalls[0].Name != toolAddTask {
			t.Fatalf("%q: calls %v, want one add", say, first.ToolCalls)
		}
		var args struct{ Title string }
		_ = json.Unmarshal([]byte(first.ToolCalls[0].Arguments), &args)
		resp, _ := mustStream(t, afterRound(msgs, first, `{"task_id":2,"status":"created","title":`+strconv.Quote(args.Title)+`}`)...)
		if !strings.Contains(resp.Text, want) {
			t.Errorf("%q: %q, want it to say %q", say, resp.Text, want)
		}
	}
}
