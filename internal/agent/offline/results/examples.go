package results

import (
	"fmt"
	"strings"

	"github.com/taskchat/taskchat/internal/agent/offline/grammar"
)

// This file words the examples replies give. An example that names a task
// by its number names one of the person's own; with none known it names no
// number at all, for "Change task 3 to …" would point at a task that may
// not exist.

// FillExamples names known tasks, one after another, in text's examples;
// with none known, it says what goes there.
func FillExamples(text string, known []Task) string {
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
