package offline

import (
	"strings"
	"unicode"
)

// This file reads one user message into an offlinePlan: the tool calls the
// offline model makes first, or the reply it gives instead. It is a small
// word tokenizer plus one function per intent, not a grammar: the first
// word that signals an intent decides, so "add a task to delete old mail"
// adds a task rather than deleting one.

// maxOfflineCalls caps the calls one message can ask for ("delete 1 2 3...").
const maxOfflineCalls = 10

// offlinePlan is what the offline model does with a user message: either
// calls (and, for a task named by its title, the lookup that follows the
// listing), or a reply with no call.
type offlinePlan struct {
	calls  []plannedCall
	lookup *nameLookup
	reply  string
}

// plannedCall is a tool call before it gets an id.
type plannedCall struct {
	tool string
	args map[string]any
}

// nameLookup is an action on a task the person named by words of its title
// rather than by id: the tasks are listed first, then tool is called on the
// single task whose title holds every word.
type nameLookup struct {
	tool  string
	args  map[string]any // besides task_id
	words []string
}

// taskIntent is what a person wants done with their list.
type taskIntent int

const (
	intentNone taskIntent = iota
	intentAdd
	intentList
	intentComplete
	intentDelete
	intentUpdate
)

// intentWords are the words that signal each intent.
var intentWords = map[string]taskIntent{
	"add": intentAdd, "create": intentAdd, "remember": intentAdd, "remind": intentAdd, "new": intentAdd,

	"see": intentList, "show": intentList, "list": intentList, "what": intentList, "which": intentList,
	"display": intentList, "view": intentList,

	"done": intentComplete, "complete": intentComplete, "completed": intentComplete,
	"finish": intentComplete, "finished": intentComplete, "mark": intentComplete,

	"delete": intentDelete, "remove": intentDelete, "cancel": intentDelete, "erase": intentDelete,
	"drop": intentDelete, "rid": intentDelete,

	"change": intentUpdate, "update": intentUpdate, "rename": intentUpdate, "edit": intentUpdate,
	"modify": intentUpdate,
}

// intentTools are the tools that act on one task, by intent.
var intentTools = map[taskIntent]string{
	intentComplete: toolCompleteTask,
	intentDelete:   toolDeleteTask,
	intentUpdate:   toolUpdateTask,
}

// parseUtterance decides what to do with what the person said.
func parseUtterance(text string) offlinePlan {
	s := cleanUtterance(text)
	ws := splitWords(s)
	if asksForHelp(ws) {
		return replyPlan(offlineHelp)
	}
	if status, ok := listShorthand(ws); ok {
		return listPlan(status)
	}
	intent, at := firstIntent(ws)
	switch intent {
	case intentAdd:
		return parseAdd(s[ws[at].end:])
	case intentList:
		return listPlan(statusFromWords(ws))
	case intentComplete, intentDelete:
		return parseTarget(intent, ws)
	case intentUpdate:
		return parseUpdate(s[ws[at].end:])
	}
	if namesTheList(ws) {
		return listPlan(statusFromWords(ws))
	}
	return replyPlan(smallTalk(ws))
}

func replyPlan(text string) offlinePlan { return offlinePlan{reply: text} }

func callPlan(tool string, args map[string]any) offlinePlan {
	return offlinePlan{calls: []plannedCall{{tool: tool, args: args}}}
}

func listPlan(status string) offlinePlan {
	return callPlan(toolListTasks, map[string]any{"status": status})
}

// lookupPlan lists every task first: the title decides, not the state.
func lookupPlan(l nameLookup) offlinePlan {
	p := listPlan("all")
	p.lookup = &l
	return p
}

// utteranceWord is one whitespace-separated word: its text as written, its
// place in the message, and low, its lower-case form with straight
// apostrophes and without surrounding punctuation or a trailing "'s",
// which is what the parser compares.
type utteranceWord struct {
	text       string
	low        string
	start, end int
}

func splitWords(s string) []utteranceWord {
	var ws []utteranceWord
	start := -1
	for i, r := range s + " " {
		switch {
		case !unicode.IsSpace(r) && start < 0:
			start = i
		case unicode.IsSpace(r) && start >= 0:
			ws = append(ws, newWord(s[start:i], start))
			start = -1
		}
	}
	return ws
}

func newWord(text string, start int) utteranceWord {
	low := strings.ReplaceAll(strings.ToLower(text), "’", "'")
	low = strings.TrimFunc(low, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	low = strings.TrimSuffix(low, "'s")
	return utteranceWord{text: text, low: low, start: start, end: start + len(text)}
}

// cleanUtterance drops what never changes the meaning: surrounding space,
// closing punctuation, and "please" at either end.
func cleanUtterance(s string) string {
	for {
		before := s
		s = strings.TrimRightFunc(s, func(r rune) bool { return unicode.IsSpace(r) || strings.ContainsRune(".!?…", r) })
		s = strings.TrimLeftFunc(s, unicode.IsSpace)
		s = trimSuffixWord(s, "please")
		if hasPrefixWord(s, "please") {
			s = s[len("please"):]
		}
		s = strings.Trim(s, ", ")
		if s == before {
			return s
		}
	}
}

// hasPrefixWord reports whether s starts with the whole word (ASCII, any case).
func hasPrefixWord(s, word string) bool {
	if len(s) < len(word) || !strings.EqualFold(s[:len(word)], word) {
		return false
	}
	return len(s) == len(word) || strings.ContainsRune(" \t\n,:", rune(s[len(word)]))
}

// trimSuffixWord removes word (ASCII, any case) from the end of s when it
// is a whole word there.
func trimSuffixWord(s, word string) string {
	n := len(s) - len(word)
	if n < 0 || !strings.EqualFold(s[n:], word) {
		return s
	}
	if n > 0 && !strings.ContainsRune(" \t\n,", rune(s[n-1])) {
		return s
	}
	return strings.TrimRight(s[:n], " \t\n,")
}

// helpQuestions are the phrases that ask what the assistant can do; they
// are checked before the intent words, since they contain "what".
var helpQuestions = []string{"what can you do", "what do you do", "what can i say", "what can i ask", "how does this work", "how do you work", "who are you"}

func asksForHelp(ws []utteranceWord) bool {
	joined := " " + joinLows(ws) + " "
	for _, q := range helpQuestions {
		if strings.Contains(joined, " "+q+" ") {
			return true
		}
	}
	return false
}

func joinLows(ws []utteranceWord) string {
	lows := make([]string, len(ws))
	for i, w := range ws {
		lows[i] = w.low
	}
	return strings.Join(lows, " ")
}

func firstIntent(ws []utteranceWord) (taskIntent, int) {
	for i, w := range ws {
		if in, ok := intentWords[w.low]; ok {
			return in, i
		}
	}
	return intentNone, -1
}

// listShorthand reads a message made only of listing words, such as
// "my tasks", "pending?" or "completed tasks", as a listing.
func listShorthand(ws []utteranceWord) (string, bool) {
	named := false
	for _, w := range ws {
		switch w.low {
		case "tasks", "todos", "to-dos", "todo", "to-do", "pending":
			named = true
		case "my", "all", "the", "list", "completed", "done", "finished", "open", "remaining", "left",
			"unfinished", "incomplete", "outstanding", "current":
		default:
			return "", false
		}
	}
	return statusFromWords(ws), named
}

// namesTheList reports a message without an intent word that still asks
// about the list: "anything left?", "check my tasks".
func namesTheList(ws []utteranceWord) bool {
	for _, w := range ws {
		switch w.low {
		case "tasks", "todos", "to-dos", "pending", "left", "remaining", "outstanding":
			return true
		}
	}
	return false
}

// statusFromWords picks the list_tasks status a listing request implies:
// "pending", "still to do" and "not done" mean pending; "completed", "done"
// and "finished" mean completed; anything else means all.
func statusFromWords(ws []utteranceWord) string {
	negated := false
	for i, w := range ws {
		switch w.low {
		case "pending", "left", "remaining", "still", "open", "incomplete", "unfinished", "outstanding", "undone":
			return "pending"
		case "not", "haven't", "havent", "didn't", "didnt", "isn't", "aren't", "yet":
			negated = true
		case "done", "completed", "complete", "finished":
			if negated {
				return "pending"
			}
			return "completed"
		case "do":
			if i >= 2 && ws[i-1].low == "to" && (ws[i-2].low == "have" || ws[i-2].low == "need") {
				return "pending"
			}
		}
	}
	return "all"
}
