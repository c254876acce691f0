package slots

import (
	"slices"
	"strconv"
	"strings"

	"github.com/taskchat/taskchat/internal/agent/offline/lexicon"
	"github.com/taskchat/taskchat/internal/agent/offline/words"
)

// refKind is how a reference points at tasks.
type refKind int

const (
	RefNone    refKind = iota
	RefIDs             // by number: "task 3", "#2 and #5"
	RefFocus           // at what the conversation just showed or did: "it", "them", "both"
	RefOrdinal         // at one of those by place: "the second one", "the last one"
	RefAll             // at every task, or every one in a state: "everything I've completed"
	RefName            // by words of its title: "the dentist task"
	RefOther           // at those being chosen among but Except: "not the bank, the other one"
)

// Ref is a reference to one or more tasks.
type Ref struct {
	Kind   refKind
	IDs    []int64
	Plural bool     // refFocus: "them", not "it"; refName: "all the meeting tasks"
	Count  int      // refFocus: "both" means 2; 0 when unsaid
	Index  int      // refOrdinal: 0 is the first, -1 the last
	Status string   // refAll: "all", "pending" or "completed"
	Words  []string // refName: the words that name it
	// Deed marks a name that starts with what was done ("called mom"):
	// when no title holds the verb, the rest may still name the task.
	Deed    bool
	Except  []Ref // left out of "everything": "all except tasks 3 and 5"
	OfList  bool  // an ordinal said of tasks ("the 3rd task"): with nothing shown yet, a place in the list
	Pointed bool  // refOther with "the other one": the task left is meant, not asked about
	Span    bool  // numbers said as a range ("3-5"), which may hold tasks done
}

// maxRefIDs caps the numbers one reference can name ("delete 1 2 3...").
const maxRefIDs = 20

// The lexicon's sections this file reads; the layers above read those exported.
var (
	PronounsMany     = lexicon.Words("pronouns many")
	IrregularPast    = lexicon.Pairs("irregular past")
	ListTopics       = lexicon.Words("list topics")
	VagueTopics      = lexicon.Words("vague topics")
	refFiller        = lexicon.Words("ref filler")
	refTails         = lexicon.Phrases("ref tails")
	pronounsOne      = lexicon.Words("pronouns one")
	allWords         = lexicon.Words("all words")
	bulkFiller       = lexicon.Words("bulk filler")
	ordinalWords     = lexicon.Numbers[int]("ordinal words")
	topicFiller      = lexicon.Words("topic filler")
	topicWords       = lexicon.Phrases("topic words")
	topicNouns       = lexicon.Words("topic nouns")
	exceptionJoins   = lexicon.Words("exception joins")
	partSeparators   = lexicon.Words("part separators")
	rangeWords       = lexicon.Words("range words")
	titleFiller      = lexicon.Words("title filler")
	notPastTense     = lexicon.Words("not past tense")
	newTaskWords     = lexicon.Words("new task words")
	relativeSubjects = lexicon.Words("relative subjects")
	refEnds          = lexicon.Words("ref ends")
	numberLeads      = lexicon.Words("number leads")
	focusFiller      = lexicon.Words("focus filler")
	bulkNouns        = lexicon.Words("bulk nouns")
	topicNumberNouns = lexicon.Words("topic number nouns")
)

// ParseRef reads a reference by the first reader that reads it, or as a name.
func ParseRef(ws []words.Word) Ref {
	ws = words.StripTrailing(ws, refTails)
	for _, read := range refReaders {
		if r, ok := read(ws); ok {
			return r
		}
	}
	return NameRef(ws)
}

var refReaders = []func([]words.Word) (Ref, bool){idsRef, focusRef, ordinalRef, bulkRef}

// TopicRef reads the tasks a listing asks about, if any: "show me task 5",
// "anything about the dentist?", where "about" follows a word for tasks or
// starts the question ("what do you know about cooking?" names none).
func TopicRef(ws []words.Word) Ref {
	// Numbers are tasks' when said so, "task 5", "#5": "what's 15% of 80" names no task.
	numbered := slices.ContainsFunc(ws, func(w words.Word) bool { return topicNumberNouns[w.Low] || strings.HasPrefix(w.Text, "#") })
	rest := slices.DeleteFunc(slices.Clone(ws), func(w words.Word) bool { return topicFiller[w.Low] })
	if r, ok := idsRef(rest); ok && numbered {
		return r
	}
	for i := 0; i+1 < len(ws); i++ {
		n := words.LongestPhrase(topicWords, ws, i)
		if n == 0 || i > 0 && !(ListTopics[ws[i-1].Low] || VagueTopics[ws[i-1].Low] || topicNouns[ws[i-1].Low] || words.StatusWord(ws[i-1].Low) != "") {
			continue
		}
		if r := NameRef(words.StripTrailing(ws[i+n:], refTails)); r.Kind == RefName {
			return r
		}
	}
	return Ref{}
}

// ExceptionRefs reads what follows "except" in "everything except the
// dentist and the gym": task numbers, or names joined by "and", "or", ",".
func ExceptionRefs(ws []words.Word) []Ref {
	ws = words.TrimPunctuation(words.StripTrailing(ws, refTails))
	if r := ParseRef(ws); r.Kind == RefIDs {
		return []Ref{r}
	}
	return refsBetween(ws, exceptionJoins)
}

// RefParts reads "the report and the dentist" as two references, or nil.
func RefParts(ws []words.Word) []Ref {
	if parts := refsBetween(ws, partSeparators); len(parts) > 1 {
		return parts
	}
	return nil
}

// refsBetween reads the references between the words of joins.
func refsBetween(ws []words.Word, joins map[string]bool) []Ref {
	var out []Ref
	start := 0
	for i := 0; i <= len(ws); i++ {
		if i < len(ws) && !joins[ws[i].Low] {
			continue
		}
		if r := ParseRef(ws[start:i]); r.Kind != RefNone {
			out = append(out, r)
		}
		start = i + 1
	}
	return out
}

// idsRef reads a reference made of task numbers and filler only: "task 3",
// "#2 and #5", "tasks two and three", "3 through 5", "4-6"; not "the 2
// reports".
func idsRef(ws []words.Word) (Ref, bool) {
	var ids []int64
	span := false
	add := func(id int64) {
		if !slices.Contains(ids, id) && len(ids) < maxRefIDs {
			ids = append(ids, id)
		}
	}
	for i, w := range ws {
		id, ok := words.NumberWords[w.Low]
		if ok && (i > 0 && (numberLeads[ws[i-1].Low] || words.NumberNouns[ws[i-1].Low] || isRangeWord(ws[i-1])) || listsNumbers(ws, i)) {
			add(id)
			continue
		}
		if nums, ok := numberList(w.Low); ok {
			for _, n := range nums {
				add(n)
			}
			span = span || strings.ContainsAny(w.Low, "-–")
			continue
		}
		switch {
		case isRangeWord(w) && len(ids) > 0 && i+1 < len(ws):
			// "3 through 5": the numbers between; the last is read next.
			between, ok := numbersBetween(ids[len(ids)-1], words.TaskNumber(ws[i+1]))
			if !ok {
				return Ref{}, false
			}
			for _, n := range between[1 : len(between)-1] {
				add(n)
			}
			span = true
		case words.NumberNouns[w.Low] && i+1 < len(ws) && words.TaskNumber(ws[i+1]) > 0:
			// "no. 4", "nr 4": the number follows.
		case !refFiller[w.Low] && w.Low != "both" && w.Low != "":
			return Ref{}, false
		}
	}
	return Ref{Kind: RefIDs, IDs: ids, Span: span}, len(ids) > 0
}

// listsNumbers reports a spelled number that begins a list of task
// numbers, "one and three": alone, "one" is rather "that one".
func listsNumbers(ws []words.Word, i int) bool {
	return i+2 < len(ws) && (exceptionJoins[ws[i+1].Low] || isRangeWord(ws[i+1])) && words.TaskNumber(ws[i+2]) != 0
}

// isRangeWord reports a word that joins the ends of a range of numbers.
func isRangeWord(w words.Word) bool {
	return rangeWords[w.Low] || w.Text == "-" || w.Text == "–"
}

// numbersBetween returns a to b, both included, when one reference may name that many.
func numbersBetween(a, b int64) ([]int64, bool) {
	if a <= 0 || b <= a || b-a >= maxRefIDs {
		return nil, false
	}
	out := make([]int64, 0, b-a+1)
	for n := a; n <= b; n++ {
		out = append(out, n)
	}
	return out, true
}

// numberList reads a word made of task numbers: "3", "#3,#4", "4-6".
func numberList(low string) ([]int64, bool) {
	if from, to, ok := strings.Cut(strings.ReplaceAll(low, "–", "-"), "-"); ok {
		a, errA := strconv.ParseInt(strings.TrimPrefix(from, "#"), 10, 64)
		b, errB := strconv.ParseInt(strings.TrimPrefix(to, "#"), 10, 64)
		if errA != nil || errB != nil {
			return nil, false
		}
		return numbersBetween(a, b)
	}
	var out []int64
	for _, part := range strings.Split(low, ",") {
		n, err := strconv.ParseInt(words.NumberText(part), 10, 64)
		if err != nil || n <= 0 {
			return nil, false
		}
		out = append(out, n)
	}
	return out, true
}

// focusRef reads a pronoun: "it", "that one", "both of them".
func focusRef(ws []words.Word) (Ref, bool) {
	r := Ref{Kind: RefFocus}
	pronoun := false
	for _, w := range ws {
		switch {
		case pronounsOne[w.Low]:
			pronoun = true
		case PronounsMany[w.Low]:
			pronoun, r.Plural = true, true
		case w.Low == "both" || w.Low == "two":
			r.Plural, r.Count = true, 2
		case allWords[w.Low]:
			r.Plural = true
		case focusFiller[w.Low]:
		default:
			return Ref{}, false
		}
	}
	// "both" and "the two" point at the focus without a pronoun.
	return r, pronoun || r.Count == 2
}

// ordinalRef reads "the second one", "the last task", "the first two".
func ordinalRef(ws []words.Word) (Ref, bool) {
	r := Ref{Kind: RefOrdinal}
	found := false
	for _, w := range ws {
		if i, ok := ordinalWords[w.Low]; ok && !found {
			r.Index, found = i, true
			continue
		}
		if n, ok := words.NumberWords[w.Low]; ok && found && n > 1 {
			r.Count, r.Plural = int(n), true
			continue
		}
		r.OfList = r.OfList || TaskNouns[w.Low]
		if !refFiller[w.Low] && w.Low != "" && w.Low != "both" {
			return Ref{}, false
		}
	}
	return r, found
}

// bulkRef reads "everything", "all my tasks", "the completed ones".
func bulkRef(ws []words.Word) (Ref, bool) {
	r := Ref{Kind: RefAll, Status: "all"}
	all, state := false, false
	for _, w := range ws {
		switch s := words.StatusWord(w.Low); {
		case s != "":
			r.Status, state = s, true
		case allWords[w.Low]:
			all = true
		case bulkNouns[w.Low]:
			all = all || len(ws) <= 3 // "my list", "my tasks", "the whole list"
		case !bulkFiller[w.Low] && w.Low != "":
			return Ref{}, false
		}
	}
	return r, all || state
}

// NameRef reads the words that name a task by its title, up to a "not":
// "the call task, not the bank" is named by "call" alone.
func NameRef(ws []words.Word) Ref {
	r := Ref{Kind: RefName}
	negated := false
	for _, w := range ws {
		switch {
		case negated:
		case w.Low == "not":
			negated = true
		case allWords[w.Low] || w.Low == "both":
			r.Plural = true
		case !refFiller[w.Low] && w.Low != "" && w.Low != "," && w.Low != ":":
			r.Words = append(r.Words, w.Low)
		}
	}
	if len(r.Words) == 0 {
		return Ref{}
	}
	return r
}

// TitleStems are the stems of the meaningful words of a title.
func TitleStems(title string) []string {
	var out []string
	for _, w := range words.Split(title) {
		if w.Low != "" && !refFiller[w.Low] && !titleFiller[w.Low] {
			out = append(out, w.Low)
		}
	}
	return Stems(out)
}

// ContainsAll reports whether each stem of want is in have, or starts one
// of have or is its start, when both are four letters or more.
func ContainsAll(have, want []string) bool {
	for _, w := range want {
		if !slices.ContainsFunc(have, func(h string) bool {
			return h == w || len(h) >= 4 && len(w) >= 4 && (strings.HasPrefix(h, w) || strings.HasPrefix(w, h))
		}) {
			return false
		}
	}
	return true
}

// Stems are the stems of words, but for filler.
func Stems(words []string) []string {
	var out []string
	for _, w := range words {
		if s := stem(w); s != "" && !refFiller[s] && !titleFiller[w] {
			out = append(out, s)
		}
	}
	return out
}

// stem reduces a word to a form its other forms share, for matching only:
// "bought" and "buy", "groceries" and "grocery", "baking" and "bake" meet.
func stem(w string) string {
	w = strings.Trim(strings.ToLower(w), "'")
	if base, ok := IrregularPast[w]; ok {
		w = base
	}
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"), len(w) > 4 && strings.HasSuffix(w, "ied"):
		w = w[:len(w)-3] + "y"
	case len(w) > 5 && strings.HasSuffix(w, "ing"):
		w = undouble(w[:len(w)-3])
	case len(w) > 4 && strings.HasSuffix(w, "ed"):
		w = undouble(w[:len(w)-2])
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us"):
		w = strings.TrimSuffix(strings.TrimSuffix(w, "s"), "e")
	}
	if len(w) > 3 {
		w = strings.TrimSuffix(w, "e")
	}
	return w
}

// undouble turns "stopp" into "stop" but leaves "call".
func undouble(w string) string {
	n := len(w)
	if n >= 3 && w[n-1] == w[n-2] && !strings.ContainsRune("aeioulsz", rune(w[n-1])) {
		return w[:n-1]
	}
	return w
}

// IsPastTense reports a verb in the past tense: "I called mom".
func IsPastTense(low string) bool {
	_, irregular := IrregularPast[low]
	return irregular || len(low) > 3 && strings.HasSuffix(low, "ed") && !notPastTense[low]
}

// TaskRefAt returns how many words from ws[i] point at a task, or 0:
// "task 3", "#3", "the task I deleted", "the" with one to three words and
// "task" or "one" where a reference plainly ends ("the bike task
// tomorrow"); not "make a task 5 minute plank", "the task to call mom".
func TaskRefAt(ws []words.Word, i int) int {
	w := ws[i]
	switch {
	case strings.HasPrefix(w.Text, "#") && words.TaskNumber(w) > 0:
		return 1
	case TaskNouns[w.Low] || words.NumberNouns[w.Low]:
		if i+1 < len(ws) && words.TaskNumber(ws[i+1]) > 0 && (i == 0 || !newTaskWords[ws[i-1].Low]) {
			return 2
		}
	case w.Low == "the" && i+2 < len(ws) && ws[i+1].Low == "task" && relativeSubjects[ws[i+2].Low]:
		return 2
	case w.Low == "the":
		for j := i + 2; j < len(ws) && j <= i+4; j++ {
			if (ws[j].Low == "task" || ws[j].Low == "one") && (j+1 == len(ws) || refEnds[ws[j+1].Low]) {
				return j + 1 - i
			}
		}
	}
	return 0
}
