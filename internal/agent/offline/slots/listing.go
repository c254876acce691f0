package slots

import (
	"github.com/taskchat/taskchat/internal/agent/offline/lexicon"
	"github.com/taskchat/taskchat/internal/agent/offline/words"
)

// ListNouns name the list, and ListFiller may go with its name in a
// message that only asks for it.
var (
	ListNouns  = lexicon.Words("list nouns")
	ListFiller = lexicon.Words("list filler")
)

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

var whatForWords = lexicon.Words("what for words")

// WhenWords keep a question about the list: "what do I have on today?".
var WhenWords = lexicon.Words("when words")

// owesDoing reports whether ws[i] is the "do" of "have to do", "need to
// do": "what do I need to do today?" is about the list, however long, and
// "what is there to do in Paris?" is not.
func owesDoing(ws []words.Word, i int) bool {
	return i >= 2 && ws[i].Low == "do" && ws[i-1].Low == "to" && obligations[ws[i-2].Low]
}

var obligations = lexicon.Words("obligations")

// StatusOf picks the state a listing asks for: "pending", "still to do",
// "not done"; "completed", "what I did"; or else "all".
func StatusOf(ws []words.Word) string {
	negated := false
	for i, w := range ws {
		switch w.Low {
		case "still", "yet", "left", "next", "plate", "today", "due":
			return "pending"
		case "did":
			// "the stuff I already did", "what I did": what was done.
			if i > 0 && (ws[i-1].Low == "already" || i == len(ws)-1 && (ws[i-1].Low == "i" || ws[i-1].Low == "we")) {
				return "completed"
			}
		case "finish", "accomplish", "accomplished":
			if !negated {
				return "completed"
			}
		case "not", "haven't", "havent", "didn't", "didnt", "isn't", "aren't", "un":
			negated = true
		case "do":
			if owesDoing(ws, i) {
				return "pending"
			}
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
// pointed at: "everything", "all my tasks", "all of them". A bare "all"
// does not: "all done" may say no more than that the person is.
func NamesList(ws []words.Word) bool {
	for _, w := range ws {
		if ListNouns[w.Low] || PronounsMany[w.Low] || w.Low == "everything" || w.Low == "every" || w.Low == "each" {
			return true
		}
	}
	return false
}
