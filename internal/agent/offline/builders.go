package offline

import (
	"strings"

	"github.com/taskchat/taskchat/internal/agent/offline/lexicon"
	"github.com/taskchat/taskchat/internal/agent/offline/words"
)

// This file turns a line of the grammar that matched into a step: it reads
// the line's slots (a reference, a title, a note) and may still refuse the
// match ("what's the weather?" is no listing), letting the next line try.

func reply(text string) func(clause) (step, bool) {
	return func(clause) (step, bool) { return step{act: actReply, text: text}, true }
}

func chatter(text string) func(clause) (step, bool) {
	return func(clause) (step, bool) { return step{act: actReply, text: text, chatter: true}, true }
}

// smallTalk reads a message made only of thanks and goodbyes, said any
// way ("thank u so much!! 😊", "good night", "ok thanks, bye", "gotta
// go"): it is answered, never offered as a task. It reads the words as
// written, before the politeness that would be taken off a request.
func smallTalk(c clause) (step, bool) {
	if len(c.text) > maxSmallTalk {
		return step{}, false
	}
	ws := words.Split(c.text)
	thanks, bye := false, leaving(ws)
	if bye {
		ws = nil
	}
	for _, w := range ws {
		switch {
		case thanksWords[w.Low]:
			thanks = true
		case byeWords[w.Low]:
			bye = true
		case !talkFiller[w.Low] && w.Low != "":
			return step{}, false
		}
	}
	switch {
	case thanks:
		return step{act: actReply, text: "You're welcome! Anything else for your list?", chatter: true}, true
	case bye:
		return step{act: actReply, text: "Bye for now — your list will be here when you're back.", chatter: true}, true
	}
	return step{}, false
}

// maxSmallTalk is the longest sentence read as small talk, in bytes: thanks
// and goodbyes are short, and a long sentence is not read again for each
// of its clauses.
const maxSmallTalk = 160

// leaving reports "gotta go", "I have to go now": leaving, not a task
// to go.
func leaving(ws []words.Word) bool {
	n := len(ws)
	for n > 0 && (ws[n-1].Low == "now" || ws[n-1].Low == "") {
		n--
	}
	if n < 2 || n > 6 || ws[n-1].Low != "go" {
		return false
	}
	for _, w := range ws[:n-1] {
		if !leavingWords[w.Low] && !thanksWords[w.Low] && w.Low != "," && w.Low != "" {
			return false
		}
	}
	return true
}

var (
	thanksWords  = lexicon.Words("thanks words")
	byeWords     = lexicon.Words("bye words")
	leavingWords = lexicon.Words("leaving words")
	talkFiller   = lexicon.Words("talk filler")
)

func only(a action) func(clause) (step, bool) {
	return func(clause) (step, bool) { return step{act: a}, true }
}

// refusal reads "keep them" or "don't delete it": a no to acting on
// tasks pointed at, not named ("keep the receipts" may be a task).
func refusal(c clause) (step, bool) {
	r := parseRef(c.words("task"))
	return step{act: actNo}, r.kind != refNone && r.kind != refName
}

// correction reads "no, I meant task 4" or "make that buy AA batteries":
// what follows is the task meant, or the title meant, for the last change.
// "I meant to call mom" says what the person meant to do, and is no
// correction.
func correction(c clause) (step, bool) {
	for _, w := range c.words("lead") {
		if !correctionLeads[w.Low] {
			return step{}, false
		}
	}
	ws := c.words("value")
	if len(ws) == 0 || ws[0].Low == "to" {
		return step{}, false
	}
	s := step{act: actCorrect, ref: parseRef(ws), parts: refParts(ws), text: words.CapitalizeFirst(cleanText(c.raw("value")))}
	if added, _ := add(clause{text: c.text, ws: c.ws, caps: words.Captures{"items": c.caps["value"]}}); len(added.items) == 1 {
		s.title, s.desc = added.items[0].title, added.items[0].description
	}
	return s, true
}

// meantRequest reads what a correction says was meant when it is a
// request of its own ("no, I meant delete it", "sorry I meant show my
// list", "I meant keep it"): that request is carried out, never made the
// title of the task just added or renamed. Words that read as a title,
// or as tasks, stay the correction's.
func meantRequest(value string) (step, bool) {
	r, ok := parseWords(value, words.Split(value), true)
	if !ok {
		return step{}, false
	}
	switch r.act {
	case actAdd, actAnswer, actSuggest, actReply, actYes, actCorrect:
		return step{}, false
	}
	r.corrects = true
	return r, true
}

// correctionLeads are the words a correction starts with.
var correctionLeads = lexicon.Words("correction leads")

// onTask reads a request about the tasks in the {task} slot.
func onTask(a action) func(clause) (step, bool) {
	return func(c clause) (step, bool) {
		ws := c.words("task")
		r, parts := parseRef(ws), refParts(ws)
		if r.kind == refName && parts == nil && taskRefAt(ws, 0) > 0 && ws[0].Low != "the" {
			// "task 5 can be marked": a task number, then words the
			// pattern left in the slot, which no title holds; another
			// line reads them.
			return step{}, false
		}
		return step{act: a, ref: r, parts: parts}, r.kind != refNone
	}
}

// reported reads news of tasks done ("the report is done", "I'm done
// with everything"): a request as onTask reads it, but one no verb asked
// for, vague unless it names the list.
func reported(a action) func(clause) (step, bool) {
	build := onTask(a)
	return func(c clause) (step, bool) {
		s, ok := build(c)
		s.vague = !namesList(c.words("task"))
		if ok && a == actComplete && strings.HasSuffix(strings.TrimSpace(c.text), "?") {
			// "task 3 done?", "task 3 ✅?": asked, not told.
			return step{act: actQuery, ref: s.ref, parts: s.parts}, true
		}
		return s, ok
	}
}

// namesList reports words that name the list, its tasks or the tasks
// pointed at: "everything", "all my tasks", "all of them". A bare "all"
// does not: "all done" may say no more than that the person is.
func namesList(ws []words.Word) bool {
	for _, w := range ws {
		if listNouns[w.Low] || pronounsMany[w.Low] || w.Low == "everything" || w.Low == "every" || w.Low == "each" {
			return true
		}
	}
	return false
}

// refParts reads "the report and the dentist" as two references; nil
// when the words hold one.
func refParts(ws []words.Word) []ref {
	var parts []ref
	from := 0
	for i := 0; i <= len(ws); i++ {
		if i < len(ws) && !partSeparators[ws[i].Low] {
			continue
		}
		if i > from {
			if r := parseRef(ws[from:i]); r.kind != refNone {
				parts = append(parts, r)
			}
		}
		from = i + 1
	}
	if len(parts) < 2 {
		return nil
	}
	return parts
}

var partSeparators = lexicon.Words("part separators")

// answer reads a reference alone: the answer to a question ("the second
// one", "4", "all of them", "the dentist one"), or, when none was asked,
// words that may be a task.
func answer(c clause) (step, bool) {
	r := parseRef(c.words("task"))
	text := cleanText(c.raw("task"))
	switch {
	case r.kind == refNone, r.kind == refAll && r.status != "all":
		return step{}, false
	case r.kind == refName && (isQuestion(text, c.ws) || asksYesOrNo(c.ws) || namesField(c.ws)):
		return step{}, false
	}
	if _, ok := cannotDo(c.ws); ok && r.kind == refName {
		return step{}, false
	}
	return step{act: actAnswer, ref: r, text: words.CapitalizeFirst(text), parts: refParts(c.words("task"))}, true
}

// otherThan reads an answer that says which task is not meant: "not
// the bank, the other one" points at the tasks asked about but the bank;
// "not the bank, grandma" at grandma. The words after "not" never name
// the task meant, nor one offered in its place.
func otherThan(c clause) (step, bool) {
	if not := words.TrimPunctuation(c.words("not")); len(not) > 0 && notYetWords[not[0].Low] {
		return step{}, false // "no, not yet": no task is named
	}
	except := exceptionRefs(c.words("not"))
	if len(except) == 0 {
		return step{}, false
	}
	rest := c.words("task")
	if _, other := otherPattern.Match(rest); len(rest) == 0 || other {
		several := len(rest) > 0 && (rest[len(rest)-1].Low == "others" || strings.HasSuffix(rest[len(rest)-1].Low, "s"))
		return step{act: actAnswer, ref: ref{kind: refOther, except: except, plural: several, pointed: len(rest) > 0}}, true
	}
	r := parseRef(rest)
	return step{act: actAnswer, ref: r, parts: refParts(rest)}, r.kind != refNone && r.kind != refAll
}

// notYetWords start what "not" says of something other than a task: "not yet".
var notYetWords = lexicon.Words("not yet words")

// otherPattern is "the other one" said of tasks being chosen among.
var otherPattern = words.CompilePattern("the? other|others one|ones|task|tasks?")

// deed reads "I called mom": completing a task by saying it was done.
func deed(c clause) (step, bool) {
	ws := c.words("deed")
	switch {
	case len(ws) < 2 || !isPastTense(ws[0].Low) || isQuestion(c.text, c.ws):
		return step{}, false
	case ws[1].Low == "to" && (ws[0].Low == "got" || ws[0].Low == "had"),
		ws[1].Low == "i" || ws[1].Low == "we" || ws[1].Low == "you":
		return step{}, false
	}
	r := nameRef(ws[1:])
	r.words, r.deed = append([]string{ws[0].Low}, r.words...), true
	return step{act: actComplete, ref: r}, true
}

// queryDeed reads "did I email the landlord?" and "have I returned the
// books?": a question about a task said by what would have been done.
func queryDeed(c clause) (step, bool) {
	r := nameRef(c.words("deed"))
	r.deed = true
	return step{act: actQuery, ref: r}, r.kind == refName
}

// bareDeed reads "called mom" and "wrote the report": a past tense that
// is not also the present ("put", "read").
func bareDeed(c clause) (step, bool) {
	ws := c.words("deed")
	if base, ok := irregularPast[ws[0].Low]; ok && base == ws[0].Low {
		return step{}, false
	}
	return deed(c)
}

// stateReached reads "the bathroom is clean now", "the car is washed":
// the state a task's verb brings about, said of its object.
func stateReached(c clause) (step, bool) {
	state := c.words("state")
	if len(state) != 1 || !(isPastTense(state[0].Low) || stateWords[state[0].Low]) {
		return step{}, false
	}
	r := nameRef(c.words("task"))
	if r.kind != refName {
		return step{}, false
	}
	// A state word ("the bathroom is clean") says the task is done
	// whatever its verb; a past tense says so only of a task done by that
	// verb ("the car got washed"): "the appointment got moved" says
	// nothing of the appointment being done.
	r.words, r.deed = append([]string{state[0].Low}, r.words...), stateWords[state[0].Low]
	return step{act: actComplete, ref: r}, true
}

// stateWords are states a task brings about that are no past tense.
var stateWords = lexicon.Words("state words")

// dropByName reads "I don't need to buy milk anymore".
func dropByName(c clause) (step, bool) {
	r := parseRef(c.words("thing"))
	return step{act: actDelete, ref: r}, r.kind != refNone
}

// note reads a note on one task: a reference to every task ("add to my
// list notes: …") is none.
func note(c clause) (step, bool) {
	r := parseRef(c.words("task"))
	text := cleanText(c.raw("note"))
	return step{act: actNote, ref: r, desc: text}, r.kind != refNone && r.kind != refAll && text != ""
}

// noteOnFocus reads "add a note: …": a note on the task the conversation
// is about.
func noteOnFocus(c clause) (step, bool) {
	text := cleanText(c.raw("note"))
	return step{act: actNote, ref: ref{kind: refFocus}, desc: text}, text != ""
}

func describe(c clause) (step, bool) {
	r := parseRef(c.words("task"))
	text := cleanText(c.raw("desc"))
	return step{act: actUpdate, ref: r, desc: text}, r.kind != refNone && text != ""
}

// retitle reads a new title, with a new description if it says one.
func retitle(c clause) (step, bool) {
	r := parseRef(withoutFieldWords(c.words("task")))
	title, desc := splitDescription(c.raw("title"))
	title = words.CapitalizeFirst(withoutInstead(cleanText(title)))
	return step{act: actUpdate, ref: r, title: title, desc: cleanText(desc)}, r.kind != refNone && title != ""
}

// retitleQuoted reads "task 2 should be 'Buy milk'": a new title, said
// in quotes. Unquoted, "should be" says how a task ought to end up ("the
// fence should be fixed by friday"), never what it should say.
func retitleQuoted(c clause) (step, bool) {
	raw := strings.TrimSpace(c.raw("title"))
	if words.Unquote(raw) == raw {
		return step{}, false
	}
	return retitle(c)
}

// withoutInstead takes "instead" off the end of a new title: "rename it
// to clean the attic instead" says what replaces the old title, not what
// the new one says.
func withoutInstead(title string) string {
	if n := len(title) - len(" instead"); n > 0 && strings.EqualFold(title[n:], " instead") {
		return cleanText(title[:n])
	}
	return title
}

// withoutFieldWords drops "title" and "name" from "task 1 title".
func withoutFieldWords(ws []words.Word) []words.Word {
	var out []words.Word
	for _, w := range ws {
		if w.Low != "title" && w.Low != "name" {
			out = append(out, w)
		}
	}
	return out
}

// list reads a request to see tasks. Its words must be about the list:
// "what's the weather?" is not a listing.
func list(c clause) (step, bool) {
	ws := c.words("what")
	topic := topicRef(ws)
	if len(ws) > 0 && topic.kind == refNone && !aboutTheList(ws) {
		return step{}, false
	}
	return step{act: actList, status: statusOf(c.ws), ref: topic}, true
}

// listShorthand reads a message made only of listing words: "my tasks",
// "pending?", "todo list".
func listShorthand(c clause) (step, bool) {
	named := false
	for _, w := range c.ws {
		switch {
		case w.Low == "complete":
			return step{}, false
		case listNouns[w.Low] || words.StatusWord(w.Low) == "pending":
			named = true
		case listFiller[w.Low] || words.StatusWord(w.Low) != "":
		default:
			return step{}, false
		}
	}
	return step{act: actList, status: statusOf(c.ws)}, named
}

var (
	listNouns  = lexicon.Words("list nouns")
	listFiller = lexicon.Words("list filler")
	// listTopics make a question one about the list; vagueTopics do so only in a short one.
	listTopics  = lexicon.Words("list topics")
	vagueTopics = lexicon.Words("vague topics")
)

func aboutTheList(ws []words.Word) bool {
	vague, lastVague := false, 0
	for i, w := range ws {
		if listTopics[w.Low] || words.StatusWord(w.Low) != "" || owesDoing(ws, i) {
			return true
		}
		if vagueTopics[w.Low] {
			vague, lastVague = true, i
		}
	}
	// "what should I have for dinner?": what follows the vague word is
	// about something else.
	return vague && len(ws) <= 5 && !saysWhatFor(ws[lastVague+1:])
}

// saysWhatFor reports words that say what a vague question is about:
// "for dinner", "on TV", "about cooking".
func saysWhatFor(ws []words.Word) bool {
	for i, w := range ws {
		if whatForWords[w.Low] && i+1 < len(ws) && !listFiller[ws[i+1].Low] && words.StatusWord(ws[i+1].Low) == "" && !whenWords[ws[i+1].Low] {
			return true
		}
	}
	return false
}

var (
	whatForWords = lexicon.Words("what for words")
	// whenWords keep a question about the list: "what do I have on today?".
	whenWords = lexicon.Words("when words")
)

// owesDoing reports whether ws[i] is the "do" of "have to do", "need to
// do", "got to do": a question about what the person has to do is about
// their list however long it is ("what do I need to do today?"), where
// "what is there to do in Paris?" is not.
func owesDoing(ws []words.Word, i int) bool {
	return i >= 2 && ws[i].Low == "do" && ws[i-1].Low == "to" && obligations[ws[i-2].Low]
}

var obligations = lexicon.Words("obligations")

// statusOf picks the state a listing asks for: "pending", "still to do"
// and "not done" mean pending; "completed", "done" and "finished" mean
// completed; anything else means all.
func statusOf(ws []words.Word) string {
	negated := false
	for i, w := range ws {
		switch w.Low {
		case "still", "yet", "left", "next", "plate", "today", "due":
			return "pending"
		case "did":
			// "the stuff I already did", "what I did": what was done.
			if i > 0 && (ws[i-1].Low == "already" || i == len(ws)-1 && (ws[i-1].Low == "i" || ws[i-1].Low == "we")) {
				return "completed"
			}
		case "finish", "accomplish", "accomplished":
			if !negated {
				return "completed"
			}
		case "not", "haven't", "havent", "didn't", "didnt", "isn't", "aren't", "un":
			negated = true
		case "do":
			if owesDoing(ws, i) {
				return "pending"
			}
		}
		switch words.StatusWord(w.Low) {
		case "pending":
			return "pending"
		case "completed":
			if negated {
				return "pending"
			}
			return "completed"
		}
	}
	return "all"
}
