package offline

import (
	"strings"

	"github.com/taskchat/taskchat/internal/agent/offline/lexicon"
	"github.com/taskchat/taskchat/internal/agent/offline/words"
)

// This file decides what to do with what the grammar did not read: ask,
// offer it as a task, or say what the tools cannot do.

// unknownStep answers a clause the grammar does not read: a question
// outside the list is told what the assistant does; words that may be a
// task ("buy milk") are offered as one.
func unknownStep(text string, ws []words.Word) step {
	if text, ok := cannotDo(ws); ok {
		return step{act: actReply, text: text}
	}
	switch {
	case len(ws) == 0:
		return step{act: actReply, text: helpText}
	case refersToTask(ws) || namesField(ws):
		// About a task, in words the grammar does not read: never a task
		// of its own ("task 3 to the top", "the bike task's notes …").
		return step{act: actReply, text: "Sorry, I'm not sure what you want done with that task. " + helpText}
	case isQuestion(text, ws):
		return step{act: actReply, text: outOfScopeText}
	case len(ws) <= 8 && mayBeTask(ws):
		return step{act: actSuggest, text: words.CapitalizeFirst(cleanText(text))}
	}
	return step{act: actReply, text: "Sorry, I'm not sure what you mean. " + helpText}
}

// cannotDo answers a request about a task that the tools cannot carry
// out — a priority, a reminder or a time, an order, a task brought back —
// with what can be done instead: "make task 5 high priority", "remind me
// about task 3 tomorrow at 9", "move task 3 to the top", "restore the task
// I deleted". Said of no task, the same words may be a task to add.
func cannotDo(ws []words.Word) (string, bool) {
	if !refersToTask(ws) {
		return "", false
	}
	for _, c := range cannotDoKinds {
		for _, w := range ws {
			if c.words[w.Low] {
				return c.text, true
			}
		}
	}
	return "", false
}

// cannotDoKinds are the words that ask for what the tools cannot do, by kind, the first deciding.
var cannotDoKinds = []struct {
	words map[string]bool
	text  string
}{
	{lexicon.Words("cannot do: dates"), noDatesText},
	{lexicon.Words("cannot do: undo"), noUndoText},
	{lexicon.Words("cannot do: reminders"), noRemindText},
	{lexicon.Words("cannot do: order"), noOrderText},
}

// refersToTask reports words that point at a task of the list: "task 3",
// "#3", "number 3", "the task I deleted", "the bike task tomorrow".
func refersToTask(ws []words.Word) bool {
	for i := range ws {
		if taskRefAt(ws, i) > 0 {
			return true
		}
	}
	return false
}

// taskRefAt returns how many words from ws[i] point at a task, or 0:
// "task 3", "no. 3", "#3", or "the" with one to three words and "task" or
// "one" where the reference plainly ends ("the bike task tomorrow"), or
// "the task" before who did something to it ("the task I deleted"). A
// task with an article before it is a new one: "make a task 5 minute
// plank", and so is "the task to call mom".
func taskRefAt(ws []words.Word, i int) int {
	w := ws[i]
	switch {
	case strings.HasPrefix(w.Text, "#") && words.TaskNumber(w) > 0:
		return 1
	case taskNouns[w.Low] || words.NumberNouns[w.Low]:
		if i+1 < len(ws) && words.TaskNumber(ws[i+1]) > 0 && (i == 0 || !newTaskWords[ws[i-1].Low]) {
			return 2
		}
	case w.Low == "the" && i+2 < len(ws) && ws[i+1].Low == "task" && relativeSubjects[ws[i+2].Low]:
		return 2
	case w.Low == "the":
		for j := i + 2; j < len(ws) && j <= i+4; j++ {
			if (ws[j].Low == "task" || ws[j].Low == "one") && (j+1 == len(ws) || refEnds[ws[j+1].Low]) {
				return j + 1 - i
			}
		}
	}
	return 0
}

var (
	newTaskWords = lexicon.Words("new task words")
	// relativeSubjects say who did something to "the task" before them.
	relativeSubjects = lexicon.Words("relative subjects")
	// refEnds may follow "the ... task" when it is a task of the list, not a title.
	refEnds = lexicon.Words("ref ends")
)

// mayBeTask reports words that could be a task's title: "buy stamps", not
// "lol" or "don't delete task 3".
func mayBeTask(ws []words.Word) bool {
	return len(ws) > 0 && !notATaskStart[ws[0].Low] && !hasNegation(ws)
}

// notATaskStart are first words of things people say that are no task.
var notATaskStart = lexicon.Words("not a task start")

// isQuestion reports a question: a question mark, or a first word that
// asks.
func isQuestion(text string, ws []words.Word) bool {
	if strings.HasSuffix(strings.TrimSpace(text), "?") {
		return true
	}
	return questionStarts[ws[0].Low]
}

var questionStarts = lexicon.Words("question starts")

// asksYesOrNo reports a question that starts with its verb: "are tasks 3
// and 5 done?", "did I call mom and the bank?". Its "and" joins what it
// asks about, so it is never cut into requests.
func asksYesOrNo(ws []words.Word) bool {
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
