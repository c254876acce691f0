package slots

import (
	"slices"
	"strings"

	"github.com/taskchat/taskchat/internal/agent/offline/lexicon"
	"github.com/taskchat/taskchat/internal/agent/offline/words"
)

// The lexicon's sections this file reads, each named as its words are
// used. The grammar and the executor read those exported too.
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

// RefersToTask reports words that point at a task of the list: "task 3",
// "#3", "number 3", "the task I deleted", "the bike task tomorrow".
func RefersToTask(ws []words.Word) bool {
	for i := range ws {
		if TaskRefAt(ws, i) > 0 {
			return true
		}
	}
	return false
}

// IsQuestion reports a question: a question mark, or a first word that
// asks.
func IsQuestion(text string, ws []words.Word) bool {
	return strings.HasSuffix(strings.TrimSpace(text), "?") || questionStarts[ws[0].Low]
}

// AsksYesOrNo reports a question that starts with its verb, whose "and"
// joins what it asks about: "did I call mom and the bank?".
func AsksYesOrNo(ws []words.Word) bool {
	return len(ws) >= 2 && (yesOrNoVerbs[ws[0].Low] || yesOrNoAuxiliaries[ws[0].Low] && yesOrNoSubjects[ws[1].Low])
}

// HasNegation reports a clause that denies what it says: "the report
// isn't done" and "mark task 3 as not done" complete nothing.
func HasNegation(ws []words.Word) bool {
	return slices.ContainsFunc(ws, func(w words.Word) bool { return negations[w.Low] })
}

// MayBeTask reports words that could be a task's title: "buy stamps", not
// "lol" or "don't delete task 3".
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

// saysWhatFor reports words that say what a vague question is about:
// "for dinner", "on TV", "about cooking".
func saysWhatFor(ws []words.Word) bool {
	for i, w := range ws {
		if whatForWords[w.Low] && i+1 < len(ws) && !ListFiller[ws[i+1].Low] && words.StatusWord(ws[i+1].Low) == "" && !WhenWords[ws[i+1].Low] {
			return true
		}
	}
	return false
}

// owesDoing reports whether ws[i] is the "do" of "have to do", "need to
// do": "what do I need to do today?" is about the list, however long, and
// "what is there to do in Paris?" is not.
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
		switch words.StatusWord(w.Low) {
		case "pending":
			return "pending"
		case "completed":
			if negated {
				return "pending"
			}
			return "completed"
		}
	}
	return "all"
}

// NamesList reports words that name the list, its tasks or the tasks
// pointed at: "everything", "all my tasks", "all of them", not "all done".
func NamesList(ws []words.Word) bool {
	return slices.ContainsFunc(ws, func(w words.Word) bool { return ListNouns[w.Low] || PronounsMany[w.Low] || everyWords[w.Low] })
}
