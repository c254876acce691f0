package offline

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file reads the arguments of the intents that take some: the title
// and description of a new task, the ids or title words that name the task
// to complete, delete or change, and the new value a change gives it.

// parseAdd reads what follows an add word: lead-ins such as "a task to"
// and tails such as "to my list" are dropped, and an optional description
// follows "with description" or "description:".
func parseAdd(rest string) offlinePlan {
	title, description := splitDescription(rest)
	title = capitalizeFirst(unquote(stripAddFrame(title)))
	if title == "" {
		return replyPlan(`What should the task say? For example: "Add a task to buy groceries".`)
	}
	args := map[string]any{"title": title}
	if d := unquote(description); d != "" {
		args["description"] = d
	}
	return callPlan(toolAddTask, args)
}

// addLeadIns are dropped from the start of a title, at most one phrase per
// group and in this order: "a new task called", "me to", "to my list:".
var addLeadIns = [][]string{
	{"a new", "an", "a", "new", "the"},
	{"task", "todo", "to-do", "reminder", "item"},
	{"to my list", "to my tasks", "to my task list", "to my todo list", "to my to-do list", "to the list", "on my list"},
	{"called", "named", "titled", "saying", "that says"},
	{"me"},
	{"that i need to", "that i have to", "i need to", "i have to", "to", "that"},
}

// addTails are dropped from the end of a title.
var addTails = []string{"to my list", "to my tasks", "to my task list", "to my todo list", "to my to-do list", "to the list", "on my list"}

func stripAddFrame(s string) string {
	s = strings.TrimSpace(s)
	for _, group := range addLeadIns {
		for _, p := range group {
			if hasPrefixWord(s, p) {
				s = strings.TrimLeft(s[len(p):], " \t\n,:-")
				break
			}
		}
	}
	for _, t := range addTails {
		s = trimSuffixWord(s, t)
	}
	return strings.TrimSpace(s)
}

// descriptionMarker separates a title from its description: "X with
// description Y", "X, notes: Y", "X: description Y", "X description: Y".
var descriptionMarker = regexp.MustCompile(`(?i)(?:\s*[,;:]\s*|\s+-\s+|\s+with\s+(?:a\s+|the\s+)?)(?:description|details|notes?)\b\s*:?\s*` +
	`|\s+(?:description|details|notes?)\s*:\s*`)

func splitDescription(s string) (title, description string) {
	loc := descriptionMarker.FindStringIndex(s)
	if loc == nil {
		return s, ""
	}
	return s[:loc[0]], s[loc[1]:]
}

// quotePairs are the quotes people wrap a title in, opening to closing.
var quotePairs = map[rune]rune{'\'': '\'', '"': '"', '“': '”', '‘': '’', '`': '`', '«': '»'}

// unquote trims s and removes quotes that wrap all of it.
func unquote(s string) string {
	s = strings.TrimSpace(s)
	first, n := utf8.DecodeRuneInString(s)
	last, m := utf8.DecodeLastRuneInString(s)
	if closing, ok := quotePairs[first]; ok && closing == last && len(s) >= n+m {
		return strings.TrimSpace(s[n : len(s)-m])
	}
	return s
}

func capitalizeFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

// parseTarget reads a complete or delete request: by ids ("task 3", "#3",
// "tasks 2 and 3"), else by words of the title ("the meeting task"), else
// it asks which task.
func parseTarget(intent taskIntent, ws []utteranceWord) offlinePlan {
	tool := intentTools[intent]
	if ids := taskIDs(ws); len(ids) > 0 {
		var p offlinePlan
		for _, id := range ids {
			p.calls = append(p.calls, plannedCall{tool: tool, args: map[string]any{"task_id": id}})
		}
		return p
	}
	if words := nameWords(ws, intent); len(words) > 0 {
		return lookupPlan(nameLookup{tool: tool, args: map[string]any{}, words: words})
	}
	return replyPlan(whichTaskQuestion(tool))
}

// parseUpdate reads a change request: the task before "to" or ":", the new
// value after it; "description" before the separator changes that field.
func parseUpdate(rest string) offlinePlan {
	target, value, found := cutUpdateValue(rest)
	field := "title"
	if !found {
		if t, d := splitDescription(rest); d != "" {
			target, value, found, field = t, d, true, "description"
		}
	}
	tws := splitWords(target)
	if mentionsDescription(tws) {
		field = "description"
	}
	ids, words := taskIDs(tws), nameWords(tws, intentUpdate)
	args := updateArgs(field, value)
	switch {
	case len(ids) == 0 && len(words) == 0:
		return replyPlan(whichTaskQuestion(toolUpdateTask))
	case !found || len(args) == 0:
		return replyPlan(`What should it say instead? For example: "Change task 1 to 'Call mom tonight'".`)
	case len(ids) > 0:
		args["task_id"] = ids[0]
		return callPlan(toolUpdateTask, args)
	}
	return lookupPlan(nameLookup{tool: toolUpdateTask, args: args, words: words})
}

// cutUpdateValue splits at the first "to" word or colon.
func cutUpdateValue(rest string) (target, value string, found bool) {
	for _, w := range splitWords(rest) {
		if i := strings.IndexByte(w.text, ':'); i >= 0 {
			return rest[:w.start+i], rest[w.start+i+1:], true
		}
		if strings.EqualFold(w.text, "to") {
			return rest[:w.start], rest[w.end:], true
		}
	}
	return rest, "", false
}

func mentionsDescription(ws []utteranceWord) bool {
	for _, w := range ws {
		switch w.low {
		case "description", "details", "notes", "note":
			return true
		}
	}
	return false
}

// updateArgs holds the new title (capitalized, with an optional "with
// description" part) or the new description; it is empty when there is none.
func updateArgs(field, value string) map[string]any {
	args := map[string]any{}
	if field == "description" {
		if d := unquote(value); d != "" {
			args["description"] = d
		}
		return args
	}
	title, description := splitDescription(value)
	if t := capitalizeFirst(unquote(dropSay(title))); t != "" {
		args["title"] = t
	}
	if d := unquote(description); d != "" {
		args["description"] = d
	}
	return args
}

// dropSay reads "to say 'X'" and "to read 'X'" as "to 'X'": only before a
// quote, since "read the book" is a title.
func dropSay(value string) string {
	value = strings.TrimSpace(value)
	for _, verb := range []string{"say", "read"} {
		if !hasPrefixWord(value, verb) {
			continue
		}
		if rest := strings.TrimSpace(value[len(verb):]); unquote(rest) != rest {
			return rest
		}
	}
	return value
}

// numberWords are the task numbers people spell out after "task".
var numberWords = map[string]int64{
	"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
	"eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17,
	"eighteen": 18, "nineteen": 19, "twenty": 20,
}

// taskIDs returns the task numbers in ws, in order and without repeats: any
// word of digits ("3", "#3", "3,"), or a spelled number after "task".
func taskIDs(ws []utteranceWord) []int64 {
	var ids []int64
	seen := map[int64]bool{}
	for i, w := range ws {
		id, ok := numberWords[w.low]
		ok = ok && i > 0 && (ws[i-1].low == "task" || ws[i-1].low == "number")
		if n, err := strconv.ParseInt(w.low, 10, 64); err == nil {
			id, ok = n, true
		}
		if !ok || seen[id] {
			continue
		}
		seen[id] = true
		if ids = append(ids, id); len(ids) == maxOfflineCalls {
			break
		}
	}
	return ids
}

// nameStopWords never identify a task by its title.
var nameStopWords = wordSet("the a an my task tasks todo to-do item one called named titled about with " +
	"is are as i i'm im i've ive have has been can you could would will it that this off me from list " +
	"be just now already was all of to please for get")

// updateFieldWords name a field, not a task.
var updateFieldWords = wordSet("title name description details note notes text")

// nameWords are the words that name a task by its title: what remains once
// stop words and the words of the intent itself are gone.
func nameWords(ws []utteranceWord, intent taskIntent) []string {
	var words []string
	for _, w := range ws {
		skip := w.low == "" || nameStopWords[w.low] || intentWords[w.low] == intent ||
			(intent == intentUpdate && updateFieldWords[w.low])
		if !skip {
			words = append(words, w.low)
		}
	}
	return words
}

func wordSet(words string) map[string]bool {
	set := map[string]bool{}
	for _, w := range strings.Fields(words) {
		set[w] = true
	}
	return set
}
