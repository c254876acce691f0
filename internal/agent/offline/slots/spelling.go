package slots

import (
	"strings"

	"github.com/taskchat/taskchat/internal/agent/offline/lexicon"
	"github.com/taskchat/taskchat/internal/agent/offline/words"
)

// frameTypos are the keywords of a request that are read when mistyped,
// each with the words that must follow it ("remnd me to …", "delet the
// passport one"), in the order they are tried.
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
	// "ad buy printer ink": a short keyword only with a letter dropped
	// or doubled ("and", "odd" are words), and only before a verb a task
	// starts with.
	{"add", taskVerbs},
}

// WithFrameSpelled returns ws with a mistyped first frame word read as
// the keyword it differs from by one letter (one added, dropped, changed
// or two swapped), but for a form of it ("deleted", "reminds"). Only the
// word's low changes: a title keeps what was written.
func WithFrameSpelled(ws []words.Word) []words.Word {
	if len(ws) < 2 {
		return ws
	}
	for _, f := range frameTypos {
		typed := ws[0].Low
		if typed != f.keyword && f.next[ws[1].Low] && oneEditApart(typed, f.keyword) && !isFormOf(typed, f.keyword) &&
			(len(f.keyword) > 3 || len(typed) != len(f.keyword)) {
			out := append([]words.Word(nil), ws...)
			out[0].Low = f.keyword
			return out
		}
	}
	return ws
}

// isFormOf reports a word that is keyword with the letter of an ending:
// "reminds", "deletes", "deleted" ("addd" is a typo).
func isFormOf(typed, keyword string) bool {
	return typed == keyword+"s" || strings.HasSuffix(keyword, "e") && typed == keyword+"d"
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
