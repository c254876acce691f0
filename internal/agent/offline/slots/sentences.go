package slots

import (
	"strings"

	"github.com/taskchat/taskchat/internal/agent/offline/lexicon"
	"github.com/taskchat/taskchat/internal/agent/offline/words"
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
	if strings.HasSuffix(strings.TrimSpace(text), "?") {
		return true
	}
	return questionStarts[ws[0].Low]
}

var questionStarts = lexicon.Words("question starts")

// AsksYesOrNo reports a question that starts with its verb, whose "and"
// joins what it asks about: "did I call mom and the bank?".
func AsksYesOrNo(ws []words.Word) bool {
	if len(ws) < 2 {
		return false
	}
	switch ws[0].Low {
	case "is", "are", "was", "were", "has", "does", "am":
		return true
	case "did", "do", "have":
		return ws[1].Low == "i" || ws[1].Low == "we" || ws[1].Low == "you"
	}
	return false
}

// HasNegation reports a clause that denies what it says: "the report
// isn't done" and "mark task 3 as not done" complete nothing.
func HasNegation(ws []words.Word) bool {
	for _, w := range ws {
		if negations[w.Low] {
			return true
		}
	}
	return false
}

var negations = lexicon.Words("negations")

// MayBeTask reports words that could be a task's title: "buy stamps", not
// "lol" or "don't delete task 3".
func MayBeTask(ws []words.Word) bool {
	return len(ws) > 0 && !NotATaskStart[ws[0].Low] && !HasNegation(ws)
}

// NotATaskStart are first words of things people say that are no task.
var NotATaskStart = lexicon.Words("not a task start")
