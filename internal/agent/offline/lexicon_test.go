package offline

import (
	"testing"

	"github.com/taskchat/taskchat/internal/agent/offline/lexicon"
)

// TestEveryLexiconSectionIsRead: the package asks for its lexicon's
// sections as it starts, so a section nothing asked for by now is words
// the model no longer reads, which would mislead whoever extends them.
func TestEveryLexiconSectionIsRead(t *testing.T) {
	if unused := lexicon.Unused(); len(unused) > 0 {
		t.Errorf("no variable of the offline package reads the lexicon's sections %q: read them, or delete them", unused)
	}
}
