package grammar

import (
	"regexp"
	"slices"
	"strings"

	"github.com/taskchat/taskchat/internal/agent/offline/slots"
	"github.com/taskchat/taskchat/internal/agent/offline/words"
)

// A list pasted in: lines that start with a number ("1.", "a)") or a
// bullet ("-", "•"), or every line after one that asks to add ("add
// these:"). Each line is one item, whatever it holds; its number is its
// place in the list, never a task's ("2. bread" is bread).

// itemMark is what starts a line of a pasted list.
var itemMark = regexp.MustCompile(`^\s*(?:\(?(?:\d{1,3}|[a-zA-Z])[.)]|\d{1,3}\s*[-–—:]|[-*•·▪‣◦–—+]|\[[ xX]?\])\s+`)

// inlineMark is a number that starts another item inside a line: "1) call
// the bank 2) email HR" is one line holding two (see slots.SplitItems).
var inlineMark = regexp.MustCompile(`\s\(?\d{1,2}[.)]\s`)

// pasted is a message read as a list.
type pasted struct {
	header string   // the lines before the items; "" when none
	lines  []string // the items, without their marks
	after  []string // the lines after the items that are no items
}

// readPasted reads text as a pasted list: one line that starts with a
// mark, two or more marked lines, or lines after one that asks to add.
func readPasted(text string) (pasted, bool) {
	var lines []string // those that hold anything
	for _, line := range strings.Split(text, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			lines = append(lines, line)
		}
	}
	var p pasted
	first, last := -1, -1 // the first and the last marked line
	for i, line := range lines {
		if itemMark.MatchString(line) {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	switch {
	case len(lines) == 1 && first == 0 && inlineMark.MatchString(" "+unmark(lines[0])):
		return pasted{}, false // one line holding several items
	case first >= 0 && (first != last || len(lines) == 1 || introduces(strings.Join(lines[:first], "\n"))):
		p.header = strings.Join(lines[:first], "\n")
		for _, line := range lines[first : last+1] {
			p.lines = append(p.lines, unmark(line))
		}
		p.after = lines[last+1:]
	case len(lines) > 1 && first < 0 && addsWhatFollows(lines[0]):
		p.header, p.lines = lines[0], lines[1:]
		for len(p.lines) > 0 && !isItem(p.lines[len(p.lines)-1]) {
			p.after = append([]string{p.lines[len(p.lines)-1]}, p.after...)
			p.lines = p.lines[:len(p.lines)-1]
		}
	default:
		return pasted{}, false
	}
	return p, len(p.lines) > 0
}

// unmark takes a line's mark off; itemMark matches at its start only.
func unmark(line string) string {
	return strings.TrimSpace(itemMark.ReplaceAllString(line, ""))
}

// readAlone reads text as a message of its own.
func readAlone(line string) (Step, bool) {
	return parseWords(line, words.Split(line), true)
}

// isItem reports a line, after one that asks to add, that is a thing to
// add: not thanks, nor a request of its own ("thing 2" is a thing too).
func isItem(line string) bool {
	s, ok := readAlone(line)
	return !ok || s.Act == ActAnswer || s.Act == ActSuggest
}

// introduces reports lines before a marked one that ask to add what
// follows ("can you add these for me?") or only head it ("Things I need:").
func introduces(header string) bool {
	if header == "" || adds(header) {
		return header != ""
	}
	sentences := words.Sentences(header)
	heading := sentences[len(sentences)-1]
	if !strings.HasSuffix(strings.TrimSpace(heading), ":") {
		return false
	}
	s, ok := readAlone(heading)
	return !ok || s.Act == ActAnswer || s.Act == ActSuggest || s.Act == ActReply || s.Act == ActChatter
}

// adds reports a header one of whose sentences or parts between commas
// asks to add what follows.
func adds(header string) bool {
	return slices.ContainsFunc(words.Sentences(header), func(sentence string) bool {
		return slices.ContainsFunc(strings.Split(sentence, ","), addsWhatFollows)
	})
}

// addsWhatFollows reports a line that asks to add and names no task, only
// that some follow: "add these:", "please add the following".
func addsWhatFollows(line string) bool {
	ws := trimClause(words.Split(line))
	if n := words.LongestPhrase(addVerbs, ws, 0); n > 0 && onlyFollowing(ws[n:]) {
		return true
	}
	s, ok := parseWords(line, ws, true)
	return ok && s.Act == ActAdd && !slices.ContainsFunc(s.Items, func(it Item) bool {
		return !onlyFollowing(words.Split(it.Title + " " + it.Description))
	})
}

// onlyFollowing reports words that name no task, only that some follow.
func onlyFollowing(ws []words.Word) bool {
	return !slices.ContainsFunc(ws, func(w words.Word) bool {
		return !slots.PluralLeadIns[w.Low] && !followingWords[w.Low] && w.Low != "" && w.Low != ":"
	})
}

// steps reads the list: after lines that ask to add, one add of every
// item; after none, or a heading, the items are offered; the lines after
// the list are read as said. A list that holds requests is not read here:
// each line is then a message of its own.
func (p pasted) steps() ([]Step, bool) {
	var steps []Step
	switch {
	case adds(p.header):
		steps = []Step{{Act: ActAdd, Items: items(p.lines)}}
	case (p.header == "" || introduces(p.header)) && !p.asks():
		for _, it := range items(p.lines) {
			steps = append(steps, Step{Act: ActSuggest, Text: it.Title})
		}
	default:
		return nil, false
	}
	if len(p.after) > 0 {
		steps = withoutChatter(append(steps, Parse(strings.Join(p.after, "\n"))...))
	}
	return steps, len(steps) > 0
}

// asks reports a list a line of which, read alone, asks for more than
// words that may be a task.
func (p pasted) asks() bool {
	return slices.ContainsFunc(p.lines, func(line string) bool {
		s, ok := readAlone(line)
		return ok && !(s.Act == ActAnswer && s.Ref.Kind == slots.RefName)
	})
}

// text is the list as lines without their marks.
func (p pasted) text() string {
	lines := append(append([]string(nil), p.lines...), p.after...)
	if p.header != "" {
		lines = append([]string{p.header}, lines...)
	}
	return strings.Join(lines, "\n")
}
