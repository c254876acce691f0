package words

import (
	"sort"
	"strings"

	"github.com/taskchat/taskchat/internal/agent/offline/lexicon"
)

// This file is the small pattern language the grammar is written in. A
// pattern is a line of elements separated by spaces, matched against all
// the words of a clause:
//
//	mark          the word "mark"
//	as|to         either word
//	get_rid_of    several words in a row ("_" stands for a space)
//	the?          an optional element
//	@done         any phrase of the lexicon's section [@done]
//	@done|over    either, and sets and words mix
//	{task}        a slot: one or more words, captured as written
//
// Slots take as few words as they can: in "rename {task} to {title}" the
// task ends at the first "to" after which the rest still matches.

type element struct {
	phrases  [][]string // alternatives, each a sequence of words; nil for a slot
	slot     string
	optional bool
}

// Pattern is one compiled line of the pattern language.
type Pattern struct {
	elems []element
	// starts are the words a clause it matches can start with, nil for any
	// (a slot comes first): most lines are ruled out by the first word.
	starts map[string]bool
}

// Captures are the spans a match gave its slots: words [i, j) of the clause.
type Captures map[string][2]int

func (c *Captures) set(slot string, i, j int) {
	if *c == nil {
		*c = Captures{}
	}
	(*c)[slot] = [2]int{i, j}
}

// CompilePattern reads a pattern written in the notation above.
func CompilePattern(src string) Pattern {
	var p Pattern
	for _, field := range strings.Fields(src) {
		var e element
		if strings.HasSuffix(field, "?") && len(field) > 1 {
			e.optional, field = true, strings.TrimSuffix(field, "?")
		}
		if strings.HasPrefix(field, "{") && strings.HasSuffix(field, "}") {
			e.slot = field[1 : len(field)-1]
		} else {
			e.phrases = expandPhrases(field)
		}
		p.elems = append(p.elems, e)
	}
	p.starts = startWords(p.elems)
	return p
}

// startWords returns the words a match of elems can start with; nil for any.
func startWords(elems []element) map[string]bool {
	starts := map[string]bool{}
	for _, e := range elems {
		if e.slot != "" {
			return nil
		}
		for _, ph := range e.phrases {
			starts[ph[0]] = true
		}
		if !e.optional {
			return starts
		}
	}
	return starts
}

// expandPhrases reads alternatives that may name sets: "@delete|clear_out",
// longest first ("clear out" is tried before "clear").
func expandPhrases(alts string) [][]string {
	var out [][]string
	for _, alt := range strings.Split(alts, "|") {
		if strings.HasPrefix(alt, "@") {
			out = append(out, lexicon.Phrases(alt)...)
		} else {
			out = append(out, strings.Split(alt, "_"))
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// Match matches all of ws, returning the slots' spans.
func (p Pattern) Match(ws []Word) (Captures, bool) {
	if p.starts != nil && (len(ws) == 0 || !p.starts[ws[0].Low]) {
		return nil, false
	}
	var caps Captures // made only on a match's way back: most lines match no clause
	ok := matchFrom(p.elems, ws, 0, &caps)
	return caps, ok
}

func matchFrom(elems []element, ws []Word, at int, caps *Captures) bool {
	if len(elems) == 0 {
		return at == len(ws)
	}
	e, rest := elems[0], elems[1:]
	if e.slot != "" {
		if len(rest) == 0 && at < len(ws) { // a slot that ends the line takes the rest
			caps.set(e.slot, at, len(ws))
			return true
		}
		for end := at + 1; end <= len(ws) && len(rest) > 0; end++ {
			if matchFrom(rest, ws, end, caps) {
				caps.set(e.slot, at, end)
				return true
			}
		}
	} else {
		for _, ph := range e.phrases {
			if MatchPhrase(ph, ws, at) && matchFrom(rest, ws, at+len(ph), caps) {
				return true
			}
		}
	}
	// An optional element is skipped only when it cannot match.
	return e.optional && matchFrom(rest, ws, at, caps)
}

// MatchPhrase reports whether the phrase ph stands at ws[at].
func MatchPhrase(ph []string, ws []Word, at int) bool {
	if at < 0 || at+len(ph) > len(ws) {
		return false
	}
	for i, w := range ph {
		if ws[at+i].Low != w {
			return false
		}
	}
	return true
}

// LongestPhrase returns how many words of ws, from at, the longest phrase
// of set that stands there covers; 0 when none does.
func LongestPhrase(set [][]string, ws []Word, at int) int {
	n := 0
	for _, ph := range set {
		if len(ph) > n && MatchPhrase(ph, ws, at) {
			n = len(ph)
		}
	}
	return n
}

// StripLeading removes any of the phrases from the start of ws, as often
// as they follow one another, never leaving it empty.
func StripLeading(ws []Word, set [][]string) []Word {
	for len(ws) > 1 {
		n := LongestPhrase(set, ws[:len(ws)-1], 0) // never the last word
		if n == 0 {
			break
		}
		ws = ws[n:]
	}
	return ws
}

// StripTrailing is StripLeading at the end of ws.
func StripTrailing(ws []Word, set [][]string) []Word {
	for {
		n := 0
		for _, ph := range set {
			if len(ph) > n && len(ph) < len(ws) && MatchPhrase(ph, ws, len(ws)-len(ph)) {
				n = len(ph)
			}
		}
		if n == 0 {
			return ws
		}
		ws = ws[:len(ws)-n]
	}
}
