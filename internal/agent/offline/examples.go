package offline

import (
	"strings"

	"github.com/taskchat/taskchat/internal/agent/offline/grammar"
	"github.com/taskchat/taskchat/internal/agent/offline/results"
)

// This file words the examples replies give. An example that names a task
// by its number names one of the person's own, one the conversation has
// shown; with none known it names no number at all, for "Change task 3 to
// …" would point at a task that may not exist.

// fill names tasks the conversation knows in text's examples.
func (e *executor) fill(text string) string {
	if !strings.Contains(text, grammar.AnyTask) {
		return text
	}
	return results.FillExamples(text, e.known())
}

// known are the tasks a reply may name: those this turn listed, or else
// those the conversation showed or is about, that are still there.
func (e *executor) known() []results.Task {
	for _, tasks := range [][]results.Task{e.listing, e.shown, e.focus, e.mem.focus} {
		if known := results.WithoutDeleted(tasks); len(known) > 0 {
			return known
		}
	}
	return nil
}
