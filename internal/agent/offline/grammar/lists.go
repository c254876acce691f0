package grammar

import (
	"regexp"
	"strings"

	"github.com/taskchat/taskchat/internal/agent/offline/lexicon"
	"github.com/taskchat/taskchat/internal/agent/offline/slots"
	"github.com/taskchat/taskchat/internal/agent/offline/words"
)

// This file reads a list pasted in: lines that each start with a number
// ("1.", "2)") or a bullet ("-", "*", "•"), or every line after a first one
// that asks to add ("add these:"). Each line is one item, whatever it holds
// ("fix the fence and paint the shed" is one task), and its number is its
// place in the list, never a task of the list: "2. bread" is bread.

// itemMark is what starts a line of a pasted list.
var itemMark = regexp.MustCompile(`^\s*(?:\(?\d{1,3}[.)]|[-*•·▪‣◦–—+]|\[[ xX]?\])\s+`)

// pasted is a message read as a list.
type pasted struct {
	header string   // the line before the items; "" when none
	lines  []string // the items, without their marks
}

// readPasted reads text as a pasted list: at least two marked lines, or
// any lines after a first one that asks to add. ok is false for a message
// written as sentences.
func readPasted(text string) (pasted, bool) {
	lines := nonEmptyLines(text)
	if len(lines) < 2 {
		return pasted{}, false
	}
	var p pasted
	marked := 0
	for i, line := range lines {
		loc := itemMark.FindStringIndex(line)
		switch {
		case loc != nil:
			marked++
			p.lines = append(p.lines, strings.TrimSpace(line[loc[1]:]))
		case i == 0:
			p.header = line
		default:
			p.lines = append(p.lines, line)
		}
	}
	if marked >= 2 || p.header != "" && addsWhatFollows(p.header) {
		return p, true
	}
	return pasted{}, false
}

func nonEmptyLines(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, line)
		}
	}
	return out
}

// addsWhatFollows reports a line that asks to add and names no task of
// its own, only that some follow: "add these:", "add:", "please add the
// following", "put these on my list".
func addsWhatFollows(line string) bool {
	ws := trimClause(words.Split(line))
	if n := words.LongestPhrase(addVerbs, ws, 0); n > 0 && onlyFollowing(ws[n:]) {
		return true // "add:", "add these", "add the following"
	}
	s, ok := parseWords(line, ws, true)
	if !ok || s.Act != ActAdd {
		return false
	}
	for _, it := range s.Items {
		if !onlyFollowing(words.Split(it.Title + " " + it.Description)) {
			return false
		}
	}
	return true
}

// onlyFollowing reports words that name no task, only that some follow.
func onlyFollowing(ws []words.Word) bool {
	for _, w := range ws {
		if !slots.PluralLeadIns[w.Low] && !followingWords[w.Low] && w.Low != "" && w.Low != ":" {
			return false
		}
	}
	return true
}

// addVerbs are the words a request to add starts with.
var addVerbs = words.Phrases(words.PhraseSets["add"])

// followingWords: see the lexicon.
var followingWords = lexicon.Words("following words")

// steps reads the list: after a line that asks to add, one add of every
// item; otherwise each line as a message of its own, so that a list of
// requests is carried out in order and a list of things is offered.
func (p pasted) steps() ([]Step, bool) {
	switch {
	case p.header != "" && addsWhatFollows(p.header):
		return []Step{{Act: ActAdd, Items: p.items()}}, true
	case p.header == "" && !p.asks():
		// Things, listed with nothing said of them: offered, one question
		// for all, whatever question was open before.
		var steps []Step
		for _, it := range p.items() {
			steps = append(steps, Step{Act: ActSuggest, Text: it.Title})
		}
		return steps, len(steps) > 0
	}
	return nil, false
}

// items are the lines as tasks to add.
func (p pasted) items() []Item {
	var items []Item
	for _, line := range p.lines {
		title, desc := slots.SplitDescription(line)
		if t := words.CapitalizeFirst(cleanText(slots.StripInfinitive(title))); t != "" {
			items = append(items, Item{Title: t, Description: cleanText(desc)})
		}
	}
	return items
}

// asks reports a list that holds a request: read alone, a line asks for
// something more than words that may be a task.
func (p pasted) asks() bool {
	for _, line := range p.lines {
		ws := words.TrimPunctuation(words.Split(line))
		if s, ok := parseWords(line, ws, true); ok && !(s.Act == ActAnswer && s.Ref.Kind == slots.RefName) {
			return true
		}
	}
	return false
}

// text is the list as lines without their marks.
func (p pasted) text() string {
	lines := p.lines
	if p.header != "" {
		lines = append([]string{p.header}, lines...)
	}
	return strings.Join(lines, "\n")
}
