package grammar

import (
	"github.com/taskchat/taskchat/internal/agent/offline/lexicon"
	"github.com/taskchat/taskchat/internal/agent/offline/slots"
	"github.com/taskchat/taskchat/internal/agent/offline/words"
)

// unknownStep answers a clause the grammar does not read: what the tools
// cannot do is said, a question outside the list is told what the
// assistant does, and words that may be a task ("buy milk") are offered.
func unknownStep(text string, ws []words.Word) Step {
	if text := cannotDo(ws); text != "" {
		return Step{Act: ActReply, Text: text}
	}
	switch {
	case len(ws) == 0:
		return Step{Act: ActReply, Text: HelpText}
	case slots.RefersToTask(ws) || slots.NamesField(ws):
		// About a task in words the grammar does not read ("task 3 to the
		// top"): never a task of its own.
		return Step{Act: ActReply, Text: "Sorry, I'm not sure what you want done with that task. " + HelpText}
	case slots.IsQuestion(text, ws):
		return Step{Act: ActReply, Text: outOfScopeText}
	case len(ws) <= 8 && slots.MayBeTask(ws):
		return Step{Act: ActSuggest, Text: words.CapitalizeFirst(slots.CleanText(text))}
	}
	return Step{Act: ActReply, Text: "Sorry, I'm not sure what you mean. " + HelpText}
}

// cannotDo answers a request about a task that the tools cannot carry out
// ("make task 5 high priority", "move task 3 to the top") with what can
// be done instead, or "". Said of no task, the same words may be a task.
func cannotDo(ws []words.Word) string {
	if !slots.RefersToTask(ws) {
		return ""
	}
	for _, c := range cannotDoKinds {
		if anyIn(ws, c.words) {
			return c.text
		}
	}
	return ""
}

// cannotDoKinds are the words that ask for what the tools cannot do, by
// kind, the first deciding.
var cannotDoKinds = []struct {
	words map[string]bool
	text  string
}{
	{lexicon.Words("cannot do: dates"), NoDatesText},
	{lexicon.Words("cannot do: undo"), noUndoText},
	{lexicon.Words("cannot do: reminders"), noRemindText},
	{lexicon.Words("cannot do: order"), noOrderText},
}
