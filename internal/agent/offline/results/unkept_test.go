package results

import (
	"fmt"
	"strings"
	"testing"
)

// What a title says that a task cannot keep is found whatever the words:
// a date or a time, a priority, a repeat; and a title that only looks
// like one ("may I", "at home", "march on") holds none.
func TestUnkeptNote(t *testing.T) {
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
		"Renew passport in two weeks":           "date in two weeks",
		"Watch Friday Night Lights":             "",
		"Cancel the Daily Mail subscription":    "",
		"Read Top Priority by Sarah Smith":      "",
		"Ask if I may borrow the car":           "",
		"Work at home":                          "",
		"Read chapter 3":                        "",
		"Buy 2 liters of milk":                  "",
		"March on the capital":                  "",
		"Plan the week":                         "",
	} {
		var notes []string // want is each kind, then the words said
		for _, kindSaid := range strings.Split(want, " | ") {
			if kind, said, ok := strings.Cut(kindSaid, " "); ok {
				notes = append(notes, fmt.Sprintf(unkeptNotes[kind], said))
			}
		}
		if got := UnkeptNote(title, map[string]bool{}); got != strings.Join(notes, " ") {
			t.Errorf("UnkeptNote(%q, {}) = %q, want the notes of %q", title, got, want)
		}
	}
}
