package slots

import (
	"slices"
	"strings"

	"github.com/taskchat/taskchat/internal/agent/offline/lexicon"
	"github.com/taskchat/taskchat/internal/agent/offline/words"
)

// The lexicon's sections this file reads; the layers above read those exported.
var (
	ListNouns          = lexicon.Words("list nouns")
	ListFiller         = lexicon.Words("list filler")
	WhenWords          = lexicon.Words("when words")
	NotATaskStart      = lexicon.Words("not a task start")
	whatForWords       = lexicon.Words("what for words")
	obligations        = lexicon.Words("obligations")
	pendingCues        = lexicon.Words("pending cues")
	finishingWords     = lexicon.Words("finishing words")
	statusNegations    = lexicon.Words("status negations")
	everyWords         = lexicon.Words("every words")
	questionStarts     = lexicon.Words("question starts")
	yesOrNoVerbs       = lexicon.Words("yes-or-no verbs")
	yesOrNoAuxiliaries = lexicon.Words("yes-or-no auxiliaries")
	yesOrNoSubjects    = lexicon.Words("yes-or-no subjects")
	negations          = lexicon.Words("negations")
)

// RefersToTask reports words that point at a task: "task 3", "the task I deleted".
func RefersToTask(ws []words.Word) bool {
	for i := range ws {
		if TaskRefAt(ws, i) > 0 {
			return true
		}
	}
	return false
}

// IsQuestion reports a question mark or a first word that asks.
func IsQuestion(text string, ws []words.Word) bool {
	return strings.HasSuffix(strings.TrimSpace(text), "?") || questionStarts[ws[0].Low]
}

// AsksYesOrNo reports a question that starts with its verb, whose "and"
// joins what it asks about: "did I call mom and the bank?".
func AsksYesOrNo(ws []words.Word) bool {
	return len(ws) >= 2 && (yesOrNoVerbs[ws[0].Low] || yesOrNoAuxiliaries[ws[0].Low] && yesOrNoSubjects[ws[1].Low])
}

// HasNegation reports a clause that denies what it says: "task 3 isn't done".
func HasNegation(ws []words.Word) bool {
	return slices.ContainsFunc(ws, func(w words.Word) bool { return negations[w.Low] })
}

// MayBeTask reports words that could be a title: "buy stamps", not "lol".
func MayBeTask(ws []words.Word) bool {
	return len(ws) > 0 && !NotATaskStart[ws[0].Low] && !HasNegation(ws)
}

// AboutTheList reports words of a question that are about the list:
// "what's left?", "what do I have?", not "what should I have for dinner?".
func AboutTheList(ws []words.Word) bool {
	vague, lastVague := false, 0
	for i, w := range ws {
		if ListTopics[w.Low] || words.StatusWord(w.Low) != "" || owesDoing(ws, i) {
			return true
		}
		if VagueTopics[w.Low] {
			vague, lastVague = true, i
		}
	}
	// "what should I have for dinner?" is about something else.
	return vague && len(ws) <= 5 && !saysWhatFor(ws[lastVague+1:])
}

// saysWhatFor reports words that say what a vague question is about: "for dinner".
func saysWhatFor(ws []words.Word) bool {
	for i, w := range ws {
		if whatForWords[w.Low] && i+1 < len(ws) && !ListFiller[ws[i+1].Low] && words.StatusWord(ws[i+1].Low) == "" && !WhenWords[ws[i+1].Low] {
			return true
		}
	}
	return false
}

// owesDoing reports the "do" of "have to do", "need to do" at ws[i]: "what
// do I need to do today?" is about the list, "what is there to do?" not.
func owesDoing(ws []words.Word, i int) bool {
	return i >= 2 && ws[i].Low == "do" && ws[i-1].Low == "to" && obligations[ws[i-2].Low]
}

// StatusOf picks the state a listing asks for: "pending", "still to do",
// "not done"; "completed", "what I did"; or else "all".
func StatusOf(ws []words.Word) string {
	negated := false
	for i, w := range ws {
		switch {
		case pendingCues[w.Low] || owesDoing(ws, i):
			return "pending"
		case finishingWords[w.Low] && !negated:
			return "completed"
		case w.Low == "did" && i > 0 && (ws[i-1].Low == "already" || i == len(ws)-1 && (ws[i-1].Low == "i" || ws[i-1].Low == "we")):
			return "completed" // "the stuff I already did", "what I did"
		case statusNegations[w.Low]:
			negated = true
		}
		switch s := words.StatusWord(w.Low); {
		case s == "completed" && negated:
			return "pending"
		case s != "":
			return s
		}
	}
	return "all"
}

// NamesList reports words that name the list, its tasks or the tasks
// pointed at: "everything", "all my tasks", "all of them", not "all done".
func NamesList(ws []words.Word) bool {
	return slices.ContainsFunc(ws, func(w words.Word) bool { return ListNouns[w.Low] || PronounsMany[w.Low] || everyWords[w.Low] })
}

// frameTypos are the keywords read when mistyped, in the order tried, each
// with the words that must follow it: "remnd me to …", "delet the …".
var frameTypos = []struct {
	keyword string
	next    map[string]bool
}{
	{"remind", lexicon.Words("frame typos: remind")},
	{"remember", lexicon.Words("frame typos: remember")},
	{"create", lexicon.Words("frame typos: create")},
	{"delete", lexicon.Words("frame typos: on a task")},
	{"remove", lexicon.Words("frame typos: on a task")},
	{"complete", lexicon.Words("frame typos: on a task")},
	// "ad buy printer ink": a short keyword only with a letter dropped or
	// doubled ("and", "odd" are words), and only before a task's verb.
	{"add", taskVerbs},
}

// WithFrameSpelled returns ws with a mistyped first word read as the
// keyword it is one edit from, but for a form of it ("deleted"). Only the
// word's Low changes: a title keeps what was written.
func WithFrameSpelled(ws []words.Word) []words.Word {
	if len(ws) < 2 {
		return ws
	}
	for _, f := range frameTypos {
		typed := ws[0].Low
		formOf := typed == f.keyword+"s" || strings.HasSuffix(f.keyword, "e") && typed == f.keyword+"d" // "deleted"; "addd" is a typo
		if typed != f.keyword && f.next[ws[1].Low] && oneEditApart(typed, f.keyword) && !formOf &&
			(len(f.keyword) > 3 || len(typed) != len(f.keyword)) {
			out := append([]words.Word(nil), ws...)
			out[0].Low = f.keyword
			return out
		}
	}
	return ws
}

// oneEditApart reports whether a and b differ by exactly one letter
// added, dropped or changed, or two neighbours swapped.
func oneEditApart(a, b string) bool {
	if a == b || len(a)-len(b) > 1 || len(b)-len(a) > 1 {
		return false
	}
	if len(a) > len(b) {
		a, b = b, a
	}
	i := 0
	for i < len(a) && a[i] == b[i] {
		i++
	}
	switch {
	case len(a) < len(b): // one added
		return a[i:] == b[i+1:]
	case i+1 < len(a) && a[i] == b[i+1] && a[i+1] == b[i]: // two swapped
		return a[i+2:] == b[i+2:]
	}
	return a[i+1:] == b[i+1:] // one changed
}
