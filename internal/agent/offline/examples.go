package offline

import (
	"fmt"
	"strings"

	"github.com/taskchat/taskchat/internal/agent/offline/grammar"
)

// This file words the examples replies give. An example that names a task
// by its number names one of the person's own, one the conversation has
// shown; with none known it names no number at all, for "Change task 3 to
// …" would point at a task that may not exist.

// example is the example of asking for act on task id, or on whichever
// task the reply can name when id is 0.
func example(a grammar.Action, id int64) string {
	number := grammar.AnyTask
	if id > 0 {
		number = fmt.Sprint(id)
	}
	return strings.Replace(actionExamples[a], "%d", number, 1)
}

// fill names tasks the conversation knows in text's examples.
func (e *executor) fill(text string) string {
	if !strings.Contains(text, grammar.AnyTask) {
		return text
	}
	return fillExamples(text, e.known())
}

// known are the tasks a reply may name: those this turn listed, or else
// those the conversation showed or is about, that are still there.
func (e *executor) known() []listedTask {
	for _, tasks := range [][]listedTask{e.listing, e.shown, e.focus, e.mem.focus} {
		if known := withoutDeleted(tasks); len(known) > 0 {
			return known
		}
	}
	return nil
}

// fillExamples names known tasks, one after another, in text's examples;
// with none known, it says what goes there.
func fillExamples(text string, known []listedTask) string {
	var b strings.Builder
	for i, part := range strings.Split(text, grammar.AnyTask) {
		if i > 0 {
			if len(known) == 0 {
				b.WriteString("<number>")
			} else {
				b.WriteString(fmt.Sprint(known[(i-1)%len(known)].ID))
			}
		}
		b.WriteString(part)
	}
	return b.String()
}
