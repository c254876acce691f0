package results

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"github.com/taskchat/taskchat/internal/agent/offline/lexicon"
	"github.com/taskchat/taskchat/internal/agent/offline/words"
)

// This file finds what a task cannot keep yet in a title being added: a
// date ("tomorrow at 5"), a priority ("asap"), a repeat ("every monday").
// The words stay in the title; the reply says nothing more comes of them.

var (
	dateWords      = lexicon.Words("date words")
	ambiguousMonth = lexicon.Words("months")
	dateLeads      = lexicon.Words("date leads")
	dateUnits      = lexicon.Words("date units")
	priorityWords  = lexicon.Phrases("priority phrases")
	unitLeads      = lexicon.Words("unit leads")
	repeatWords    = lexicon.Words("repeat words")
	repeatLeads    = lexicon.Words("repeat leads")
)

// clockTime is a time or a day of the month as written: "5pm", "17:30", "12th".
var clockTime = regexp.MustCompile(`^(?:\d{1,2}(?::\d{2})?(?:am|pm)|\d{1,2}:\d{2}|\d{1,2}(?:st|nd|rd|th))$`)

// UnkeptNote says what comes of what title holds that a task cannot keep,
// in the order said: the first of each kind ("date", "priority", "repeat")
// not yet said in this reply, which it then marks said; "" when nothing.
func UnkeptNote(title string, said map[string]bool) string {
	ws := words.Split(title)
	var notes []string
	for i := 0; i < len(ws); {
		kind, end := unkeptAt(ws, i)
		if kind == "" {
			i++
			continue
		}
		if !said[kind] {
			said[kind] = true
			notes = append(notes, fmt.Sprintf(unkeptNotes[kind], words.Span(title, ws, i, end)))
		}
		i = end
	}
	return strings.Join(notes, " ")
}

// unkeptAt reads what is said from ws[i], returning its kind and where it
// ends; "" when nothing a task cannot keep starts there.
func unkeptAt(ws []words.Word, i int) (string, int) {
	low := ws[i].Low
	if i > 0 && partOfName(ws, i) {
		// "watch Friday Night Lights", "cancel the Daily Mail": a name.
		return "", i
	}
	if n := words.LongestPhrase(priorityWords, ws, i); n > 0 {
		return "priority", i + n
	}
	switch {
	case repeatWords[low]:
		return "repeat", i + 1
	case repeatLeads[low] && i+1 < len(ws) && (dateUnits[ws[i+1].Low] || dateWords[ws[i+1].Low] || ws[i+1].Low == "other"):
		end := i + 2
		if ws[i+1].Low == "other" && end < len(ws) {
			end++
		}
		return "repeat", end
	}
	// A date starts at a date word, but for a unit or a number alone, or at
	// leads ("by", "next", "in", "end of the") followed by one.
	if !(isDateWord(ws, i) && !dateUnits[low] && !isNumber(low) || leadsToDate(ws, i)) {
		return "", i
	}
	end := i + 1
	for end < len(ws) && (isDateWord(ws, end) || leadsToDate(ws, end)) {
		end++
	}
	return "date", end
}

// leadsToDate reports up to three leads from ws[i] followed by a date
// word: "by end of the month"; "at" leads only to a time, not "at home".
func leadsToDate(ws []words.Word, i int) bool {
	for j := i; j < len(ws) && j < i+4 && dateLeads[ws[j].Low]; j++ {
		if j+1 < len(ws) && isDateWord(ws, j+1) && (ws[j].Low != "at" || isNumber(ws[j+1].Low) || clockTime.MatchString(ws[j+1].Low)) {
			return true
		}
	}
	return false
}

// isDateWord reports a word that says when: a day, a month, a time, a
// unit after a lead ("next week"), a number next to one of those.
func isDateWord(ws []words.Word, i int) bool {
	low := ws[i].Low
	switch {
	case dateWords[low], clockTime.MatchString(low):
		return true
	case ambiguousMonth[low]:
		return i+1 < len(ws) && isNumber(ws[i+1].Low) || i > 0 && isNumber(ws[i-1].Low)
	case dateUnits[low]: // "next week", "in 3 days", "end of the month"; not "plan the week"
		return i > 0 && (unitLeads[ws[i-1].Low] || isNumber(ws[i-1].Low) || i > 1 && ws[i-1].Low == "the" && ws[i-2].Low == "of")
	case isNumber(low):
		return i > 0 && (ws[i-1].Low == "at" || ws[i-1].Low == "in" || ambiguousMonth[ws[i-1].Low] || dateWords[ws[i-1].Low]) ||
			i+1 < len(ws) && (dateUnits[ws[i+1].Low] || ambiguousMonth[ws[i+1].Low] || dateWords[ws[i+1].Low] || ws[i+1].Low == "am" || ws[i+1].Low == "pm")
	case low == "am" || low == "pm":
		return i > 0 && isNumber(ws[i-1].Low)
	}
	return false
}

// isNumber reports a number as written or spelled out ("3", "two").
func isNumber(low string) bool {
	_, spelled := words.NumberWords[low]
	return spelled || shortNumber.MatchString(low)
}

var shortNumber = regexp.MustCompile(`^\d{1,4}$`)

// unkeptNotes say, by kind, what comes of words a task cannot keep.
var unkeptNotes = map[string]string{
	"date":     "I can't read due dates from a message yet, so %q is only part of the title: nothing will remind you.",
	"priority": "I can't read priorities from a message yet, so %q is only part of the title.",
	"repeat":   "Tasks here don't repeat yet, so %q is only part of the title: it is one task, done once.",
}

// partOfName reports a word written with a capital next to another so
// written, the first word of the title aside: a name ("Friday Night
// Lights", "Top Priority by Sarah Smith"), not a date or a priority.
func partOfName(ws []words.Word, i int) bool {
	capital := func(j int) bool {
		return j > 0 && j < len(ws) && ws[j].Text != "" && unicode.IsUpper([]rune(ws[j].Text)[0])
	}
	return capital(i) && (capital(i-1) || capital(i+1))
}
