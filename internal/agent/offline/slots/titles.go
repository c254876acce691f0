package slots

import (
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/taskchat/taskchat/internal/agent/offline/lexicon"
	"github.com/taskchat/taskchat/internal/agent/offline/words"
)

// This file reads the tasks an add request names: spans of what the person
// wrote with their frame ("a task to", "to my list") taken off.

// addLeadIns are taken off what follows an add word, one of each group at most.
var addLeadIns = [][][]string{
	lexicon.Phrases("add lead-ins 1: owed"),
	lexicon.Phrases("add lead-ins 2: articles and counts"),
	lexicon.Phrases("add lead-ins 3: adjectives"),
	lexicon.Phrases("add lead-ins 4: task nouns"),
	lexicon.Phrases("add lead-ins 5: the list"),
	lexicon.Phrases("add lead-ins 6: naming"),
	lexicon.Phrases("add lead-ins 7: for whom"),
	lexicon.Phrases("add lead-ins 8: to"),
}

// The lexicon's sections this file reads, the grammar those exported too.
var (
	PluralLeadIns    = lexicon.Words("plural lead-ins")
	AddTails         = lexicon.Phrases("add tails")
	AddFrameOnly     = lexicon.Words("add frame only")
	TaskNouns        = lexicon.Words("task nouns")
	fieldWords       = lexicon.Words("field words")
	listPrepositions = lexicon.Words("list prepositions")
	listOwners       = lexicon.Words("list owners")
	listKinds        = lexicon.Phrases("@listkind")
	taskCounts       = lexicon.Words("task counts")
	listVerbs        = lexicon.Words("list verbs")
	relationWords    = lexicon.Words("relation words")
	taskVerbs        = lexicon.Words("task verbs")
	nounVerbs        = lexicon.Words("noun verbs")
	determiners      = lexicon.Words("determiners")
	objectPronouns   = lexicon.Words("object pronouns")
	quoteJoins       = lexicon.Words("quote joins")
)

// PointsAtTask reports a task of the list at ws[i], said with its number
// or as "the … task"; "the blue one" may be a thing to add.
func PointsAtTask(ws []words.Word, i int) bool {
	n := TaskRefAt(ws, i)
	return n > 0 && ws[i+n-1].Low != "one"
}

// NamesField reports a task of the list followed by one of its fields, as
// an edit says and words to add never do: "task 2 description".
func NamesField(ws []words.Word) bool {
	for i := range ws {
		if n := TaskRefAt(ws, i); n > 0 && i+n < len(ws) && fieldWords[ws[i+n].Low] {
			return true
		}
		// "the bike task notes": "the", one to three words, "task".
		for j := i + 2; ws[i].Low == "the" && j < len(ws)-1 && j <= i+4; j++ {
			if ws[j].Low == "task" && fieldWords[ws[j+1].Low] {
				return true
			}
		}
	}
	return false
}

// StripListTail takes off a tail that names the list a task goes on, "to
// my shopping list": taskchat keeps one list per person. Only the kinds of
// list people keep tasks in: "put Bob on the guest list" keeps its tail.
func StripListTail(ws []words.Word) []words.Word {
	n := len(ws)
	if n < 4 || ws[n-1].Low != "list" {
		return ws
	}
	for _, kind := range listKinds {
		at := n - 1 - len(kind) // where the kind starts, before "list"
		if at >= 3 && listPrepositions[ws[at-2].Low] && listOwners[ws[at-1].Low] && words.MatchPhrase(kind, ws, at) {
			return words.StripTrailing(ws[:at-2], AddTails)
		}
	}
	return ws
}

// StripAddLeadIns takes the lead-ins off what follows an add word, and
// reports one that says several tasks follow.
func StripAddLeadIns(ws []words.Word) ([]words.Word, bool) {
	plural := false
	for _, group := range addLeadIns {
		for _, ph := range group {
			if len(ph) < len(ws) && words.MatchPhrase(ph, ws, 0) && !countsThings(ws) {
				plural = plural || PluralLeadIns[ws[0].Low]
				ws = ws[len(ph):]
				break
			}
		}
	}
	for len(ws) > 1 && (ws[0].Low == ":" || ws[0].Low == ",") {
		ws = ws[1:]
	}
	return ws, plural
}

// countsThings reports a title that starts with a count of things, "3
// eggs", not of tasks, "3 tasks: a, b, c".
func countsThings(ws []words.Word) bool {
	return taskCounts[ws[0].Low] && !slices.ContainsFunc(ws[1:min(3, len(ws))], func(w words.Word) bool { return TaskNouns[w.Low] })
}

// SplitItems cuts a list of titles at commas, semicolons and "and" when
// the request said it holds several; otherwise where an infinitive repeats
// ("call mom and to pay rent") or what follows starts a task (startsTask).
func SplitItems(text string, plural bool) []string {
	if parts, ok := enumerated(text); ok {
		return parts
	}
	if plural {
		return cutAt(text, itemSeparator, nil)
	}
	if parts, ok := thingsListed(text); ok {
		return parts
	}
	var out []string
	for _, part := range cutAt(text, repeatedInfinitive, nil) {
		out = append(out, cutAt(part, itemSeparator, startsTask)...)
	}
	return out
}

// thingsListed cuts a list of things, "bread, eggs, jam and tea": three or
// more short parts with commas between, no verb in front ("buy bread, eggs
// and jam"), and none that says more ("dinner with Tom, Anna and Jo").
func thingsListed(text string) ([]string, bool) {
	if !strings.Contains(text, ",") || strings.ContainsAny(text, ":;") {
		return nil, false
	}
	parts := cutAt(text, itemSeparator, nil)
	if len(parts) < 3 {
		return nil, false
	}
	for _, part := range parts {
		ws := words.Split(part)
		if len(ws) == 0 || len(ws) > maxThingWords || slices.ContainsFunc(ws, saysMore) {
			return nil, false
		}
	}
	first := words.Split(parts[0])[0].Low
	return parts, !taskVerbs[first] && !nounVerbs[first] && !listVerbs[first]
}

// maxThingWords is the most words a thing of a list of things is called.
const maxThingWords = 4

// saysMore reports a word that says more than what a thing is called: "with", "2".
func saysMore(w words.Word) bool {
	return relationWords[w.Low] || w.Low != "" && w.Low[0] >= '0' && w.Low[0] <= '9'
}

// enumerated cuts a list numbered in its text, "1) call the bank 2) email
// HR", at its numbers, which must start the text and count 1, 2, 3.
func enumerated(text string) ([]string, bool) {
	locs := enumerator.FindAllStringSubmatchIndex(text, -1)
	if len(locs) < 2 || strings.TrimSpace(text[:locs[0][0]]) != "" {
		return nil, false
	}
	var out []string
	quoted := quotedSpans(words.Split(text))
	for i, loc := range locs {
		if n, _ := strconv.Atoi(text[loc[2]:loc[3]]); n != i+1 || inside(quoted, loc[0]) {
			return nil, false
		}
		end := len(text)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		part := strings.TrimSpace(text[loc[1]:end])
		part = strings.TrimSpace(strings.TrimSuffix(strings.TrimRight(part, ",; "), " and"))
		out = append(out, strings.TrimRight(part, ",; "))
	}
	return out, true
}

// enumerator is a number that starts an item of a list: "1)", "(2)", "3.".
var enumerator = regexp.MustCompile(`(?:^|\s)\(?(\d{1,2})[.)]\s+`)

// startsTask reports whether b and a, either side of an "and" or a comma,
// are two tasks: a starts with a task's verb and its object ("book a
// table"), b is more than a verb; "buy a book and read it" is one.
func startsTask(b, a []words.Word) bool {
	if len(b) < 2 || len(a) < 2 || objectPronouns[a[1].Low] {
		return false
	}
	return taskVerbs[a[0].Low] || nounVerbs[a[0].Low] && determiners[a[1].Low]
}

// AllQuoted reports a text of quoted titles and joins only: "'Call mom' and 'Pay rent'".
func AllQuoted(text string) bool {
	n := 0
	for _, w := range words.Split(text) {
		switch {
		case words.IsQuoted(w.Text) || (len(w.Text) > 1 && w.Text[0] == '\'' && w.Text[len(w.Text)-1] == '\''):
			n++
		case quoteJoins[w.Low]:
		default:
			return false
		}
	}
	return n > 1
}

var (
	itemSeparator      = regexp.MustCompile(`(?i)\s*(?:[,;]\s*(?:and\s+|then\s+)?|\s+and\s+(?:also\s+)?|\s+&\s+|\s+plus\s+)(?:to\s+)?`)
	repeatedInfinitive = regexp.MustCompile(`(?i)\s*(?:,\s*and|,|\s+and|\s+and\s+also|;)\s+to\s+`)
)

// cutAt splits s at the matches of sep outside quotes: at every one, or
// where two says the words either side, from the last cut on, are two parts.
func cutAt(s string, sep *regexp.Regexp, two func(before, after []words.Word) bool) []string {
	var out []string
	ws := words.Split(s)
	quoted := quotedSpans(ws)
	from, fromWord := 0, 0
	for _, loc := range sep.FindAllStringIndex(s, -1) {
		if inside(quoted, loc[0]) {
			continue
		}
		end := sort.Search(len(ws), func(i int) bool { return ws[i].End > loc[0] })
		next := sort.Search(len(ws), func(i int) bool { return ws[i].Start >= loc[1] })
		if two != nil && !two(ws[fromWord:max(end, fromWord)], ws[next:]) {
			continue
		}
		out = append(out, s[from:loc[0]])
		from, fromWord = loc[1], next
	}
	return append(out, s[from:])
}

// quotedSpans returns the byte ranges of the quoted words of ws.
func quotedSpans(ws []words.Word) [][2]int {
	var out [][2]int
	for _, w := range ws {
		if words.IsQuoted(w.Text) {
			out = append(out, [2]int{w.Start, w.End})
		}
	}
	return out
}

// inside reports whether byte i is inside one of the spans.
func inside(spans [][2]int, i int) bool {
	return slices.ContainsFunc(spans, func(sp [2]int) bool { return sp[0] < i && i < sp[1] })
}

// StripInfinitive takes a leading "to" off an item: "to pay rent".
func StripInfinitive(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 3 && strings.EqualFold(s[:3], "to ") {
		return s[3:]
	}
	return s
}

// descriptionMarker separates a title from its description: "X with
// description Y", "X, notes: Y", "X description: Y".
var descriptionMarker = regexp.MustCompile(`(?i)(?:\s*[,;:]\s*|\s+-\s+|\s+with\s+(?:a\s+|the\s+)?)(?:description|details|notes?)\b\s*:?\s*` +
	`|\s+(?:description|details|notes?)\s*:\s*`)

// SplitDescription cuts s at a description marker, if any.
func SplitDescription(s string) (title, description string) {
	loc := descriptionMarker.FindStringIndex(s)
	if loc == nil || inside(quotedSpans(words.Split(s)), loc[0]) {
		return s, ""
	}
	return s[:loc[0]], s[loc[1]:]
}

// WithoutFieldWords drops "title" and "name" from "task 1 title".
func WithoutFieldWords(ws []words.Word) []words.Word {
	return slices.DeleteFunc(slices.Clone(ws), func(w words.Word) bool { return w.Low == "title" || w.Low == "name" })
}

// CleanText trims space, wrapping quotes, a leading colon and a sentence's end off s.
func CleanText(s string) string {
	s = strings.TrimSpace(s)
	s = strings.TrimLeft(s, ":-– ")
	s = strings.TrimRight(s, " .!?…,;")
	return words.Unquote(s)
}
