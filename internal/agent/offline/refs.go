package offline

import (
	"strconv"
	"strings"

	"github.com/taskchat/taskchat/internal/agent/offline/lexicon"
	"github.com/taskchat/taskchat/internal/agent/offline/words"
)

// This file reads how a person points at tasks — "task 3", "#2 and #5",
// "it", "the second one", "both", "all of them", "everything I've
// completed", "the dentist task" — and finds the tasks they point at.

// refKind is how a reference points at tasks.
type refKind int

const (
	refNone    refKind = iota
	refIDs             // by number: "task 3", "#2 and #5"
	refFocus           // at what the conversation just showed or did: "it", "them", "both"
	refOrdinal         // at one of those by place: "the second one", "the last one"
	refAll             // at every task, or every one in a state: "everything I've completed"
	refName            // by words of its title: "the dentist task"
	// refOther points at the tasks being chosen among but those its
	// except names: "not the bank, the other one".
	refOther
)

// ref is a reference to one or more tasks.
type ref struct {
	kind   refKind
	ids    []int64
	plural bool     // refFocus: "them", not "it"; refName: "all the meeting tasks"
	count  int      // refFocus: "both" means 2; 0 when unsaid
	index  int      // refOrdinal: 0 is the first, -1 the last
	status string   // refAll: "all", "pending" or "completed"
	words  []string // refName: the words that name it
	// deed marks a name that starts with what was done ("called mom"):
	// when no title holds the verb, the rest may still name the task.
	deed bool
	// except are the tasks left out of "everything" or "all of them":
	// "everything but the dentist", "all except tasks 3 and 5".
	except []ref
	// ofList marks an ordinal said of tasks ("the 3rd task", not "the
	// 3rd one"): with nothing shown or done yet, a place in the list.
	ofList bool
	// pointed marks refOther said with "the other one": the task left is
	// meant. With "not the bank" alone, the one left is asked about.
	pointed bool
	// span marks numbers said as a range ("1 thru 4", "3-5"): a stretch
	// of the list, which may hold tasks done already.
	span bool
}

// maxRefIDs caps the numbers one reference can name ("delete 1 2 3...").
const maxRefIDs = 20

// Words that carry no meaning in a reference.
var (
	refFiller    = lexicon.Words("ref filler")
	refTails     = lexicon.Phrases("ref tails")
	pronounsOne  = lexicon.Words("pronouns one")
	pronounsMany = lexicon.Words("pronouns many")
	allWords     = lexicon.Words("all words")
	bulkFiller   = lexicon.Words("bulk filler")
	ordinalWords = lexicon.Numbers[int]("ordinal words")
)

// parseRef reads the words of a reference.
func parseRef(ws []words.Word) ref {
	ws = words.StripTrailing(ws, refTails)
	if r, ok := idsRef(ws); ok {
		return r
	}
	if r, ok := focusRef(ws); ok {
		return r
	}
	if r, ok := ordinalRef(ws); ok {
		return r
	}
	if r, ok := bulkRef(ws); ok {
		return r
	}
	return nameRef(ws)
}

// topicRef reads the tasks a listing asks about, if any: "task 5" in
// "show me task 5" and "what was task 4 again?", "the dentist" in "do I
// have anything about the dentist?". A topic follows a word for tasks
// ("anything", "tasks", "pending") or starts the question ("anything
// about the gym?"), and a word such as "about" comes first: "what do you
// know about cooking?" asks about no task.
func topicRef(ws []words.Word) ref {
	var rest []words.Word
	numbered := false // "task 5", "#5": "what's 15% of 80" names no task
	for _, w := range ws {
		if !topicFiller[w.Low] {
			rest = append(rest, w)
		}
		numbered = numbered || w.Low == "task" || w.Low == "tasks" || w.Low == "number" || strings.HasPrefix(w.Text, "#")
	}
	if r, ok := idsRef(rest); ok && numbered {
		return r
	}
	for i := 0; i+1 < len(ws); i++ {
		n := words.LongestPhrase(topicWords, ws, i)
		if n == 0 || i > 0 && !(listTopics[ws[i-1].Low] || vagueTopics[ws[i-1].Low] || topicNouns[ws[i-1].Low] || words.StatusWord(ws[i-1].Low) != "") {
			continue
		}
		if r := nameRef(words.StripTrailing(ws[i+n:], refTails)); r.kind == refName {
			return r
		}
	}
	return ref{}
}

var (
	topicFiller = lexicon.Words("topic filler")
	topicWords  = lexicon.Phrases("topic words")
	topicNouns  = lexicon.Words("topic nouns")
)

// exceptionRefs reads what follows "except" in "everything except the
// dentist and the gym": task numbers, or names joined by "and", "or" and
// commas, each leaving out the tasks it names.
func exceptionRefs(ws []words.Word) []ref {
	ws = words.TrimPunctuation(words.StripTrailing(ws, refTails))
	if r := parseRef(ws); r.kind == refIDs {
		return []ref{r}
	}
	var out []ref
	start := 0
	for i := 0; i <= len(ws); i++ {
		if i < len(ws) && !exceptionJoins[ws[i].Low] {
			continue
		}
		if r := parseRef(ws[start:i]); r.kind != refNone {
			out = append(out, r)
		}
		start = i + 1
	}
	return out
}

var exceptionJoins = lexicon.Words("exception joins")

// idsRef reads a reference made of task numbers and filler only: "task 3",
// "#2 and #5", "tasks two and three", "#3,#4", "3 through 5", "4-6". A
// number among other words ("the 2 reports") is part of a name.
func idsRef(ws []words.Word) (ref, bool) {
	var ids []int64
	span := false
	seen := map[int64]bool{}
	add := func(id int64) {
		if !seen[id] && len(ids) < maxRefIDs {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	for i, w := range ws {
		id, ok := words.NumberWords[w.Low]
		ok = ok && (i > 0 && (ws[i-1].Low == "task" || ws[i-1].Low == "tasks" || words.NumberNouns[ws[i-1].Low] || ws[i-1].Low == "and" || ws[i-1].Low == "," || isRangeWord(ws[i-1])) ||
			listsNumbers(ws, i))
		if ok {
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
				return ref{}, false
			}
			for _, n := range between[1 : len(between)-1] {
				add(n)
			}
			span = true
		case words.NumberNouns[w.Low] && i+1 < len(ws) && words.TaskNumber(ws[i+1]) > 0:
			// "no. 4", "nr 4": the number follows.
		case !refFiller[w.Low] && w.Low != "both" && w.Low != "":
			return ref{}, false
		}
	}
	return ref{kind: refIDs, ids: ids, span: span}, len(ids) > 0
}

// listsNumbers reports a spelled number that begins a list of task
// numbers: "one and three", "two, four". Alone, "one" and "two" are
// words of other references ("that one", "the two").
func listsNumbers(ws []words.Word, i int) bool {
	return i+2 < len(ws) && (exceptionJoins[ws[i+1].Low] || isRangeWord(ws[i+1])) && words.TaskNumber(ws[i+2]) != 0
}

// isRangeWord reports a word that joins the ends of a range of numbers.
func isRangeWord(w words.Word) bool {
	return rangeWords[w.Low] || w.Text == "-" || w.Text == "–"
}

var rangeWords = lexicon.Words("range words")

// numbersBetween returns the task numbers from a to b, both included, when
// that is a range one reference may name.
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

// numberList reads a word made of task numbers: "3", "#3,#4", "1,2,3",
// and the range "4-6".
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

// focusRef reads a pronoun: "it", "that one", "them", "both of them", "all
// of those".
func focusRef(ws []words.Word) (ref, bool) {
	r := ref{kind: refFocus}
	pronoun := false
	for _, w := range ws {
		switch {
		case pronounsOne[w.Low]:
			pronoun = true
		case pronounsMany[w.Low]:
			pronoun, r.plural = true, true
		case w.Low == "both" || w.Low == "two":
			r.plural, r.count = true, 2
		case allWords[w.Low]:
			r.plural = true
		case w.Low == "of" || w.Low == "the" || w.Low == "one" || w.Low == "ones" || w.Low == "task" || w.Low == "tasks" || w.Low == "too" || w.Low == "as":
		default:
			return ref{}, false
		}
	}
	// "both" and "the two" point at the focus without a pronoun.
	return r, pronoun || r.count == 2
}

// ordinalRef reads "the second one", "the last task", "the first two",
// "both of the last two". ("number 2" is a task number instead.)
func ordinalRef(ws []words.Word) (ref, bool) {
	r := ref{kind: refOrdinal}
	found := false
	for _, w := range ws {
		if i, ok := ordinalWords[w.Low]; ok && !found {
			r.index, found = i, true
			continue
		}
		if n, ok := words.NumberWords[w.Low]; ok && found && n > 1 {
			r.count, r.plural = int(n), true
			continue
		}
		r.ofList = r.ofList || taskNouns[w.Low]
		if !refFiller[w.Low] && w.Low != "" && w.Low != "both" {
			return ref{}, false
		}
	}
	return r, found
}

// bulkRef reads "everything", "all my tasks", "the completed ones",
// "everything I've completed", "all pending tasks".
func bulkRef(ws []words.Word) (ref, bool) {
	r := ref{kind: refAll, status: "all"}
	all, state := false, false
	for _, w := range ws {
		switch s := words.StatusWord(w.Low); {
		case s != "":
			r.status, state = s, true
		case allWords[w.Low]:
			all = true
		case w.Low == "list" || w.Low == "tasks" || w.Low == "todos":
			all = all || len(ws) <= 3 // "my list", "my tasks", "the whole list"
		case !bulkFiller[w.Low] && w.Low != "":
			return ref{}, false
		}
	}
	return r, all || state
}

// nameRef reads the words that name a task by its title. Words after a
// "not" name what is not meant: "the call task, not the bank" is named by
// "call" alone.
func nameRef(ws []words.Word) ref {
	r := ref{kind: refName}
	negated := false
	for _, w := range ws {
		switch {
		case negated:
		case w.Low == "not":
			negated = true
		case allWords[w.Low] || w.Low == "both":
			r.plural = true
		case !refFiller[w.Low] && w.Low != "" && w.Low != "," && w.Low != ":":
			r.words = append(r.words, w.Low)
		}
	}
	if len(r.words) == 0 {
		return ref{}
	}
	return r
}

// matchTasks returns the tasks a name points at: those whose title holds
// every word of the name; failing that, when loose, those whose title
// words are all in the name ("I paid the electricity bill" names "Pay
// bill"). Only what was done is matched loosely: "delete the gym bag"
// must not find "Gym".
func matchTasks(tasks []listedTask, words []string, loose bool) []listedTask {
	query := stems(words)
	if len(query) == 0 {
		return nil
	}
	var out []listedTask
	for _, t := range tasks {
		if containsAll(stems(titleWords(t.Title)), query) {
			out = append(out, t)
		}
	}
	if len(out) > 0 || !loose {
		return out
	}
	for _, t := range tasks {
		if title := stems(titleWords(t.Title)); len(title) > 0 && containsAll(query, title) {
			out = append(out, t)
		}
	}
	return out
}

// closestTasks returns the tasks that share the most words with the name,
// when some share any, and how many words they share.
func closestTasks(tasks []listedTask, words []string) (closest []listedTask, shared int) {
	query := stems(words)
	best, out := 0, []listedTask(nil)
	for _, t := range tasks {
		title := stems(titleWords(t.Title))
		n := 0
		for _, q := range query {
			if containsAll(title, []string{q}) {
				n++
			}
		}
		switch {
		case n > best:
			best, out = n, []listedTask{t}
		case n == best && n > 0:
			out = append(out, t)
		}
	}
	return out, best
}

// titleWords are the meaningful words of a title.
func titleWords(title string) []string {
	var out []string
	for _, w := range words.Split(title) {
		if w.Low != "" && !refFiller[w.Low] && !titleFiller[w.Low] {
			out = append(out, w.Low)
		}
	}
	return out
}

// titleFiller are short words that never tell two tasks apart.
var titleFiller = lexicon.Words("title filler")

func containsAll(have, want []string) bool {
	for _, w := range want {
		found := false
		for _, h := range have {
			if h == w || (len(h) >= 4 && len(w) >= 4 && (strings.HasPrefix(h, w) || strings.HasPrefix(w, h))) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func stems(words []string) []string {
	var out []string
	for _, w := range words {
		if s := stem(w); s != "" && !refFiller[s] && !titleFiller[w] {
			out = append(out, s)
		}
	}
	return out
}

// stem reduces a word to a form its other forms share, for matching only:
// "bought" and "buy", "called" and "call", "groceries" and "grocery",
// "baking" and "bake" meet.
func stem(w string) string {
	w = strings.Trim(strings.ToLower(w), "'")
	if base, ok := irregularPast[w]; ok {
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

// undouble turns "stopp" into "stop" and "call" stays "call".
func undouble(w string) string {
	n := len(w)
	if n >= 3 && w[n-1] == w[n-2] && !strings.ContainsRune("aeioulsz", rune(w[n-1])) {
		return w[:n-1]
	}
	return w
}

// isPastTense reports a verb in the past tense: what someone says when
// they did a task ("I called mom", "I already bought milk").
func isPastTense(low string) bool {
	if _, ok := irregularPast[low]; ok {
		return true
	}
	return len(low) > 3 && strings.HasSuffix(low, "ed") && !notPastTense[low]
}

// notPastTense end in "ed" but say nothing was done, or are not verbs.
var notPastTense = lexicon.Words("not past tense")

// irregularPast maps irregular past forms to the verb.
var irregularPast = lexicon.Pairs("irregular past")
