package words

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/taskchat/taskchat/internal/agent/offline/lexicon"
)

// The lexicon's sections this package reads. NumberWords are the task
// numbers people spell out, NumberNouns the words said before one ("no. 3").
var (
	NumberWords   = lexicon.Numbers[int64]("number words")
	NumberNouns   = lexicon.Words("number nouns")
	chatSpellings = lexicon.Pairs("chat spellings")
	abbreviations = lexicon.Words("abbreviations")
	states        = lexicon.Pairs("states")
)

// Word is one word or one punctuation mark (",", ":" and ";" stand alone).
// Low is what the grammar compares: lower case, straight apostrophes, no
// surrounding punctuation, no trailing "'s" but in "let's" (the grammar
// writes "that's right" as that_right).
type Word struct {
	Text       string
	Low        string
	Start, End int // byte offsets in the text it was cut from
}

// quotePairs are the quotes people wrap a title in, opening to closing.
var quotePairs = map[rune]rune{'"': '"', '“': '”', '‘': '’', '`': '`', '«': '»', '\'': '\''}

// Split cuts s into words. Inside quotes nothing is cut off as
// punctuation, so "Pick up: keys" stays one title.
func Split(s string) []Word {
	var ws []Word
	start, closing := -1, rune(0)
	closers := closerIndex{}
	flush := func(end int) {
		if start >= 0 {
			ws = appendWord(ws, s, start, end, closing == 0)
			start = -1
		}
	}
	for i, r := range s {
		switch {
		case closing != 0 && r == closing && endsQuote(s, i+utf8.RuneLen(r)):
			closing = 0
		case closing == 0 && closers.opens(s, i, r):
			closing = quotePairs[r]
			if start < 0 {
				start = i
			}
		case closing == 0 && unicode.IsSpace(r):
			flush(i)
		case start < 0:
			start = i
		}
	}
	flush(len(s))
	return withCheckMarks(ws)
}

// withCheckMarks reads a check mark as "done" ("task 2 ✅", unless a word
// for done comes just before it) and a mark that says a task is not done
// ("❌ 5") as "not". Other emoji are decoration ("delete 3, 4 👍 and 5"),
// but one of doubt ("delete 5 🤔 7"), or any inside a sentence with marks
// ("✅ 1 🙂 5"), stands for a word no pattern holds: no list runs across it.
func withCheckMarks(ws []Word) []Word {
	marked := slices.ContainsFunc(ws, func(w Word) bool { return w.Low == "" && strings.ContainsAny(w.Text, notDoneMarks+doneMarks) })
	for i, w := range ws {
		switch {
		case w.Low != "":
		case strings.ContainsAny(w.Text, notDoneMarks):
			ws[i].Low = "not"
		case strings.ContainsAny(w.Text, doneMarks):
			if i == 0 || StatusWord(ws[i-1].Low) != "completed" {
				ws[i].Low = "done"
			}
		case strings.ContainsAny(w.Text, doubtMarks), marked && i > 0 && i+1 < len(ws) && isSymbols(w.Text):
			ws[i].Low = w.Text // a word no pattern holds
		}
	}
	return ws
}

// Marks that say a task is done, that it is not (yet), and doubt.
const (
	doneMarks    = "✅✔☑✓"
	notDoneMarks = "❌✖✗✘🚫⏳⌛⛔"
	doubtMarks   = "🙅👎🤔⚠❓❔🛑"
)

// isSymbols reports a word made only of symbols, an emoji, not punctuation.
func isSymbols(text string) bool {
	return !strings.ContainsFunc(text, func(r rune) bool { return !unicode.IsSymbol(r) && r != '\ufe0f' && r != '\u200d' })
}

// closerIndex remembers, for each closing quote, where the next one that
// ends a quote stands, so quotes left open ("it's, 'a, 'b …") are looked
// past once and cutting a text stays linear.
type closerIndex map[rune]closerAt

type closerAt struct {
	from, at int // searched from byte from: found at at, or -1 for none
}

// opens reports whether r at i opens a quote: a quote character at the
// start of a word ("don't" holds none) that is closed later in s.
func (ci closerIndex) opens(s string, i int, r rune) bool {
	closing, ok := quotePairs[r]
	if !ok {
		return false
	}
	if i > 0 {
		prev, _ := utf8.DecodeLastRuneInString(s[:i])
		if !unicode.IsSpace(prev) && !strings.ContainsRune("(:", prev) {
			return false
		}
	}
	from := i + utf8.RuneLen(r)
	if c, ok := ci[closing]; ok && c.from <= from && (c.at < 0 || c.at >= from) {
		return c.at >= 0
	}
	at := -1
	for j, c := range s[from:] {
		if c == closing && endsQuote(s, from+j+utf8.RuneLen(c)) {
			at = from + j
			break
		}
	}
	ci[closing] = closerAt{from: from, at: at}
	return at >= 0
}

// endsQuote reports whether the end of s, a space or punctuation follows end.
func endsQuote(s string, end int) bool {
	next, _ := utf8.DecodeRuneInString(s[end:])
	return end == len(s) || unicode.IsSpace(next) || strings.ContainsRune(",.;:!?)", next)
}

// appendWord appends s[start:end], with a trailing ",", ":" or ";" as a word
// of its own when split is set.
func appendWord(ws []Word, s string, start, end int, split bool) []Word {
	var punct []Word
	for split && end > start {
		r, n := utf8.DecodeLastRuneInString(s[start:end])
		if !strings.ContainsRune(",:;", r) {
			break
		}
		punct = append([]Word{{Text: string(r), Low: string(r), Start: end - n, End: end}}, punct...)
		end -= n
	}
	if end > start {
		ws = append(ws, newWord(s, start, end))
	}
	return append(ws, punct...)
}

func newWord(s string, start, end int) Word {
	text := s[start:end]
	low := strings.ReplaceAll(strings.ToLower(text), "’", "'")
	low = strings.TrimFunc(low, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	if low == "" && (text == "-" || text == "–" || text == "—") {
		low = "-" // a dash between words, as patterns write it
	}
	if low != "let's" { // the one "'s" that is never "is", "has" or a possessive
		low = strings.TrimSuffix(low, "'s")
	}
	if full, ok := chatSpellings[low]; ok {
		low = full
	}
	return Word{Text: text, Low: low, Start: start, End: end}
}

// Sentences cuts a message at sentence ends (".", "!", "?" before a
// space) and line breaks, outside quotes.
func Sentences(s string) []string {
	var out []string
	ws := Split(s)
	from := 0
	for i, w := range ws {
		last := i == len(ws)-1
		cut := !last && strings.Contains(s[w.End:ws[i+1].Start], "\n")
		if r, _ := utf8.DecodeLastRuneInString(w.Text); strings.ContainsRune(".!?…", r) && !IsQuoted(w.Text) && !abbreviations[w.Low] &&
			!(NumberNouns[w.Low] && !last && TaskNumber(ws[i+1]) > 0) { // "task no. 4"
			cut = true
		}
		if cut || last {
			out = append(out, s[from:w.End])
			if !last {
				from = ws[i+1].Start
			}
		}
	}
	return out
}

// IsQuoted reports a word that is one quoted span: no sentence ends in it.
func IsQuoted(text string) bool {
	r, _ := utf8.DecodeRuneInString(text)
	_, ok := quotePairs[r]
	return ok && r != '\'' && len(text) > 1
}

// Span returns the text the words ws[i:j] cover in s, as it was written,
// and the emoji right after them: a clause is trimmed of those as of
// punctuation, but a title keeps every character ("Buy café au lait ☕").
func Span(s string, ws []Word, i, j int) string {
	if i >= j {
		return ""
	}
	return s[ws[i].Start : ws[j-1].End+len(emojiAfter.FindString(s[ws[j-1].End:]))]
}

// emojiAfter matches the words made of symbols only (isSymbols) that start a text.
var emojiAfter = regexp.MustCompile(`^(?:\s+[\p{S}\x{FE0F}\x{200D}]+)*`)

// Unquote trims s and removes quotes that wrap all of it.
func Unquote(s string) string {
	s = strings.TrimSpace(s)
	first, n := utf8.DecodeRuneInString(s)
	last, m := utf8.DecodeLastRuneInString(s)
	if closing, ok := quotePairs[first]; ok && closing == last && len(s) >= n+m {
		return strings.TrimSpace(s[n : len(s)-m])
	}
	return s
}

// CapitalizeFirst writes s with its first letter in upper case.
func CapitalizeFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

// TrimPunctuation drops words that are only punctuation at either end.
func TrimPunctuation(ws []Word) []Word {
	punct := func(w Word) bool { return w.Low == "" || w.Low == "," || w.Low == ":" }
	for len(ws) > 0 && punct(ws[0]) {
		ws = ws[1:]
	}
	for len(ws) > 0 && punct(ws[len(ws)-1]) {
		ws = ws[:len(ws)-1]
	}
	return ws
}

// StatusWord maps a word to the state it names, "completed" or
// "pending", or "".
func StatusWord(low string) string { return states[low] }

// TaskNumber returns the task number a word says ("5", "#5", "five"), or 0.
func TaskNumber(w Word) int64 {
	if n, ok := NumberWords[w.Low]; ok {
		return n
	}
	if n, err := strconv.ParseInt(NumberText(w.Low), 10, 64); err == nil && n > 0 {
		return n
	}
	return 0
}

// NumberText takes "#", "no.", "nr." or "num." off the front of a number.
func NumberText(low string) string {
	for _, prefix := range []string{"#", "no.", "nr.", "num."} {
		if rest, ok := strings.CutPrefix(low, prefix); ok {
			return rest
		}
	}
	return low
}
