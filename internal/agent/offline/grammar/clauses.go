package grammar

import (
	"strings"

	"github.com/taskchat/taskchat/internal/agent/offline/lexicon"
	"github.com/taskchat/taskchat/internal/agent/offline/slots"
	"github.com/taskchat/taskchat/internal/agent/offline/words"
)

// This file cuts a message into the steps it asks for, in order: first
// into sentences, then at "and", "then" and commas where what follows is a
// request of its own ("add milk and mark task 2 done"), but not where it
// is not ("buy bread and butter"). Each clause loses its politeness and
// filler before the grammar reads it. What is said around a request is in
// asides.go, answers to a question in answers.go, and what the grammar
// does not read in unread.go.

// maxSteps caps the requests one message can make.
const maxSteps = 12

// Words around a request that never change what it asks.
var (
	leadIns  = lexicon.Phrases("lead-ins")
	trailers = lexicon.Phrases("trailers")
	// modals may introduce a command or a task; see splitModal.
	modals = lexicon.Phrases("modals")
	// connectors join requests: "and", "then", ",", "also", "after that".
	connectors = lexicon.Words("connectors")
)

// Parse reads a message into its steps.
func Parse(text string) []Step {
	if list, ok := readPasted(text); ok {
		if steps, ok := list.steps(); ok {
			return steps
		}
		text = list.text() // each line as said, without its mark
	}
	var steps []Step
	for _, sentence := range words.Sentences(text) {
		if n := len(steps); n > 0 && changes(steps[n-1]) && stateRemark(words.Split(sentence)) {
			// "paid the water bill. all done!": how the last request
			// left things, not a request about every task.
			steps = append(steps, asideStep)
			continue
		}
		var before []words.Word // the clause before, in this sentence
		for _, c := range splitClauses(sentence) {
			if len(steps) == maxSteps {
				return steps
			}
			s := readClause(sentence, c.ws, c.whole)
			if c.aside {
				s = asideStep
			}
			if s.Act == ActNo && widens(c.ws) {
				s.Bearing = TakingBackAll // "no, neither", "no, forget all of that"
			}
			if n := len(steps); n > 0 && steps[n-1].Act == ActNo && s.Act == ActAnswer && widens(c.ws) {
				steps[n-1].Bearing = TakingBackAll // "no, don't do any of that": says what the no takes back
				continue
			}
			if continues(c.ws) && !strings.HasSuffix(strings.TrimSpace(sentence), "?") && s.Bearing == Fresh {
				s.Bearing = Continuing
			}
			if n := len(steps); n > 0 && deedTopic(steps[n-1], s, before) {
				// "I moved the dentist appointment, update it": what was
				// done names the task "it" is, and says it is not done.
				s.Ref, steps = steps[n-1].Ref, steps[:n-1]
			} else if r, ok := topicOf(sentence, before, s); ok && len(steps) > 0 {
				// "nevermind the bike, delete it": the topic is what "it" is.
				s.Ref, steps = r, steps[:len(steps)-1]
			} else if words, ok := describedTask(sentence, before, s); ok && len(steps) > 0 {
				// "had the HR meeting scheduled, tick it off": what "it"
				// is may be the task those words describe.
				unread := steps[len(steps)-1]
				s.Described, s.Unread, steps = words, &unread, steps[:len(steps)-1]
			}
			steps = append(steps, s)
			before = c.ws
		}
	}
	return withoutChatter(doubtingYes(text, takenBack(steps)))
}

// asideStep is a remark about a request said before it: answered by the
// request's own reply.
var asideStep = Step{Act: ActChatter, Text: "Okay."}

// changes reports a step that changes the list.
func changes(s Step) bool {
	switch s.Act {
	case ActAdd, ActComplete, ActDelete, ActUpdate, ActNote:
		return true
	}
	return false
}

var continuing = lexicon.Words("continuing")

// withoutChatter drops "thanks" and "hi" from a message that asks for more.
func withoutChatter(steps []Step) []Step {
	var out []Step
	for _, s := range steps {
		if s.Act != ActChatter {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return steps
	}
	return out
}

// clauseWords are the words of one clause, and whether they are its whole
// sentence.
type clauseWords struct {
	ws    []words.Word
	whole bool
	aside bool // a reason given for the request before: see asideAt
}

// splitClauses cuts a sentence where a connector is followed by a request
// of its own; what follows a connector but is no request ("bread and
// butter", "2 and 3") stays with the clause before.
func splitClauses(sentence string) []clauseWords {
	ws := words.TrimPunctuation(words.Split(sentence))
	if len(ws) == 0 {
		return nil
	}
	if slots.AsksYesOrNo(trimClause(ws)) {
		return []clauseWords{{ws: ws, whole: true}}
	}
	var out, asides []clauseWords
	start, instead := 0, -1 // instead: where what is asked after a no starts
	if end := takeBackEnd(ws, 0); end > 2 && end < len(ws) && takesBack(sentence, ws) {
		// "no wait, just 4": a no said with more than "no" takes back
		// what was asked before; what follows the comma is asked instead.
		// A bare "no, task 4" answers a question.
		out = append(out, clauseWords{ws: ws[:end]})
		start, instead = end, end
	}
	for i := start + 1; i < len(ws); i++ {
		if ws[i].Low == "," && stateRemark(ws[i+1:]) && requestsChange(sentence, ws[start:i]) {
			return append(append(out, clauseWords{ws: ws[start:i]}, clauseWords{ws: ws[i:], aside: true}), asides...)
		}
		if asideAt(ws, i) && changesTasks(sentence, ws[start:i]) {
			end, more := asideEnd(sentence, ws, i)
			if more { // "delete task 5 because I sold it and task 7": the request goes on
				asides = append(asides, clauseWords{ws: ws[i:end:end], aside: true})
				ws = append(append([]words.Word(nil), ws[:i]...), ws[end:]...)
				i--
				continue
			}
			out = append(out, clauseWords{ws: ws[start:i]}, clauseWords{ws: ws[i:end], aside: true})
			if end == len(ws) {
				return append(out, asides...)
			}
			for start = end; start < len(ws) && connectors[ws[start].Low]; start++ {
			}
			i = start
			continue
		}
		if !connectors[ws[i].Low] || connectors[ws[i-1].Low] {
			continue
		}
		next := i
		for next < len(ws) && connectors[ws[next].Low] {
			next++
		}
		if inNumberList(ws, i, next) || ws[i].Low == "but" && aboutAll(sentence, ws[start:i]) && !leadsRequest(sentence, ws[next:]) {
			continue
		}
		if next < len(ws) && !fillerOnly(ws[start:i]) && !takesBack(sentence, ws[next:]) && startsRequest(sentence, ws[next:]) {
			out = append(out, clauseWords{ws: ws[start:i]})
			start = next
			i = next
		} else if next < len(ws) && !fillerOnly(ws[start:i]) && takesBack(sentence, ws[next:]) {
			// "complete task 3, no, task 4": the no is a clause of its
			// own, and what follows it is what is asked instead.
			out = append(out, clauseWords{ws: ws[start:i]})
			start, i = next, next
			if end := takeBackEnd(ws, next); end < len(ws) {
				out = append(out, clauseWords{ws: ws[next:end]})
				start, i, instead = end, end, end
			}
		}
	}
	// What is asked after a no, up to the end, is read as said alone:
	// "no wait, just 4" names the tasks meant.
	out = append(out, clauseWords{ws: ws[start:], whole: start == instead})
	if len(out) == 1 {
		out[0].whole = true
	}
	return append(out, asides...)
}

// takesBack reports a no said after a comma, up to the next one: "delete
// task 3, no wait", "…, never mind". Cut there, it takes back what was
// asked before it (takenBack) instead of trailing a request as words.
func takesBack(sentence string, ws []words.Word) bool {
	end := 0
	for end < len(ws) && ws[end].Low != "," {
		end++
	}
	s, ok := peek(sentence, ws[:end], true)
	return ok && s.Act == ActNo
}

// takeBackEnd returns where what follows a no said at ws[from] starts:
// after the comma that ends it, or len(ws) when none does or nothing
// follows it.
func takeBackEnd(ws []words.Word, from int) int {
	for i := from; i < len(ws); i++ {
		if ws[i].Low == "," {
			for i < len(ws) && ws[i].Low == "," {
				i++
			}
			return i
		}
	}
	return len(ws)
}

// inNumberList reports a connector inside a list of task numbers, "1, 3
// and 4": a task number on both sides. "3 and 4 done" after "mark 1,"
// reads as a request of its own, and "5 as done" after "mark everything
// except 3 and" does too, but cut there the list would lose a number or,
// worse, act on one it was to leave out. What follows the list ("as
// done") belongs to all of it.
func inNumberList(ws []words.Word, connector, next int) bool {
	return connector > 0 && next < len(ws) && words.TaskNumber(ws[connector-1]) != 0 && words.TaskNumber(ws[next]) != 0
}

// leadsRequest reports words after "but" that start a request of their
// own ("mark all done but add buy milk"), not the tasks an exception
// leaves out ("but tasks 3 and 4 as done", "but the dentist one").
func leadsRequest(sentence string, ws []words.Word) bool {
	if len(ws) == 0 || slots.TaskRefAt(ws, 0) > 0 || words.TaskNumber(ws[0]) > 0 || TopicStarts[ws[0].Low] || slots.TaskNouns[ws[0].Low] {
		return false
	}
	return startsRequest(sentence, ws)
}

// changesTasks reports a request to complete or delete tasks: what a
// reason may follow. After an add, "since it's her birthday" is part of
// the title.
func changesTasks(sentence string, ws []words.Word) bool {
	s, ok := peek(sentence, ws, false)
	return ok && (s.Act == ActComplete || s.Act == ActDelete) && s.Ref.Kind != slots.RefNone
}

// requestsChange reports a clause that asks to change the list.
func requestsChange(sentence string, ws []words.Word) bool {
	s, ok := peek(sentence, ws, false)
	return ok && changes(s)
}

// aboutAll reports a request about all tasks, or all of those shown,
// that an exception may follow: after "tick off everything", "but tasks
// 3 and 4 as done" leaves 3 and 4 out, and is no request of its own.
func aboutAll(sentence string, ws []words.Word) bool {
	s, ok := peek(sentence, ws, false)
	return ok && (s.Act == ActComplete || s.Act == ActDelete) &&
		(s.Ref.Kind == slots.RefAll || s.Ref.Kind == slots.RefFocus && s.Ref.Plural)
}

// startsRequest reports whether ws, up to its next connector, is a request
// of its own; or, when short enough to be one request, all of it ("tasks 2
// and 3 are done"). The bound keeps a long message from being read again
// at every comma.
func startsRequest(sentence string, ws []words.Word) bool {
	first := toConnector(ws)
	if _, ok := parseWords(sentence, first, false); ok {
		return true
	}
	if len(first) == len(ws) || len(ws) > maxClauseWords {
		return false
	}
	_, ok := parseWords(sentence, ws, false)
	return ok
}

// toConnector returns ws up to its first connector after the first word:
// the request it starts, when it starts one.
func toConnector(ws []words.Word) []words.Word {
	for i := 1; i < len(ws); i++ {
		if connectors[ws[i].Low] {
			return ws[:i]
		}
	}
	return ws
}

// maxClauseWords is the longest stretch of a sentence read as one request
// when deciding where to cut it.
const maxClauseWords = 40

// peek reads words to decide where to cut a sentence: a stretch longer
// than maxClauseWords is no request that decides a cut ("no wait", "mark
// everything done", "delete task 5"). Each cut is weighed by reading
// around it, so without the bound a long sentence would be read again at
// every connector, its cost the square of its length.
func peek(sentence string, ws []words.Word, whole bool) (Step, bool) {
	if len(ws) > maxClauseWords {
		return Step{}, false
	}
	return parseWords(sentence, ws, whole)
}

// readClause reads one clause into a step; a clause the grammar does not
// know becomes a question back.
func readClause(sentence string, ws []words.Word, whole bool) Step {
	if s, ok := parseWords(sentence, ws, whole); ok {
		return s
	}
	if s, ok := parseWords(sentence, ws, true); ok && s.Act == ActNo {
		return s // "no wait" after a request: see takesBack
	}
	ws = trimClause(ws)
	return unknownStep(words.Span(sentence, ws, 0, len(ws)), ws)
}

// parseWords reads a clause with the grammar: first without a modal lead-in
// when what follows it is a command ("I need to delete task 3", "I'd like
// to see my list"), then as said ("I need to call the bank" is a task).
func parseWords(sentence string, ws []words.Word, whole bool) (Step, bool) {
	ws = slots.WithFrameSpelled(trimClause(ws))
	if len(ws) == 0 {
		return Step{}, false
	}
	if s, ok := parseAnswer(sentence, ws, whole); ok {
		return s, true
	}
	if s, ok := yesExcept(ws); ok && whole { // "except the bike", said alone: never a task's name
		return s, true
	}
	if stillToDo(ws) { // "I have to": no task called "To"
		return Step{Act: ActYes, Mood: StillToDoAlone}, true
	}
	if s, ok := parseException(sentence, ws, whole); ok {
		return s, true
	}
	if rest := words.StripLeading(ws, modals); len(rest) < len(ws) {
		if s, ok := parseClause(sentence, rest, whole); ok && isCommand(s) {
			return askedIfWork(s, rest), true
		}
	}
	s, ok := parseClause(sentence, ws, whole)
	if ok && s.Act == ActAdd {
		s = offeredIfTask(s, ws)
	}
	if ok && s.Act == ActCorrect {
		if r, meant := meantRequest(s.Text); meant {
			return r, true
		}
	}
	if (!ok || s.Act == ActAnswer) && len(ws) > 2 && (ws[0].Low == "first" || ws[0].Low == "next") {
		// "first add walk the dog": the order it is said in, when the
		// rest is a request ("first one is done" read as said).
		if t, ok := parseWords(sentence, ws[1:], whole); ok && t.Act != ActAnswer {
			return t, true
		}
	}
	return s, ok
}

// exceptionWords leave tasks out of a request about all of them.
var exceptionWords = lexicon.Phrases("exception words")

// parseException reads a request about all tasks, or all of those just
// shown, that leaves some out: "mark everything done except the
// dentist", "delete all but tasks 3 and 5". What comes before the first
// exception word must be such a request on its own, and what follows it
// must name tasks; otherwise the clause is read as said ("delete the
// dentist but keep the gym", "add buy everything but the sink").
func parseException(sentence string, ws []words.Word, whole bool) (Step, bool) {
	for k := 1; k < len(ws)-1; k++ {
		n := words.LongestPhrase(exceptionWords, ws, k)
		if n == 0 {
			continue
		}
		s, ok := parseWords(sentence, ws[:k], whole)
		if !ok || (s.Act != ActComplete && s.Act != ActDelete) ||
			!(s.Ref.Kind == slots.RefAll || s.Ref.Kind == slots.RefFocus && s.Ref.Plural) {
			return Step{}, false
		}
		except := ws[k+n:]
		if s.Act == ActComplete {
			// "mark all except 3 and 5 as done": the state is the
			// request's, not a word of the exception.
			except = words.StripTrailing(except, stateTails)
		}
		s.Ref.Except = slots.ExceptionRefs(except)
		return s, len(s.Ref.Except) > 0
	}
	return Step{}, false
}

// stateTails may end a request to complete all tasks after its exception.
var stateTails = lexicon.Phrases("state tails")

// isCommand reports whether a step after "I need to" is a request to the
// assistant rather than the task itself: "delete task 3" is one, "delete
// old emails" (a name, not a reference) is a task.
func isCommand(s Step) bool {
	switch s.Act {
	case ActList, ActAdd, ActReply, ActChatter:
		return true
	case ActComplete, ActDelete, ActQuery, ActUpdate, ActNote:
		return s.Ref.Kind != slots.RefName
	}
	return false
}

// askedIfWork reads a completion after "I need to" said with a verb of
// doing the work ("I need to finish task 3", "gotta complete it"): the
// task is still to do, or the person may want it marked; a completion
// cannot be undone, so it is asked about. Said with a verb of ticking it
// off ("I need to mark task 4 as done") it is a request to the assistant.
func askedIfWork(s Step, ws []words.Word) Step {
	if s.Act == ActComplete && !markVerbs[ws[0].Low] && !(tickVerbs[ws[0].Low] && hasWord(ws, "off")) {
		s.Mood = Tentatively
	}
	return s
}

var (
	markVerbs = lexicon.Words("mark verbs")
	tickVerbs = lexicon.Words("tick verbs")
)

func hasWord(ws []words.Word, low string) bool {
	for _, w := range ws {
		if w.Low == low {
			return true
		}
	}
	return false
}

// offeredIfTask reads an add after "I need to" whose words point at a
// task of the list ("need to do task 5", "have to finish the bike task
// by friday"): the task it names is meant, not a new one, so the add is
// only offered.
func offeredIfTask(s Step, ws []words.Word) Step {
	rest := words.StripLeading(ws, modals)
	if len(rest) == len(ws) || len(s.Items) != 1 || !slots.RefersToTask(rest) {
		return s
	}
	return Step{Act: ActSuggest, Text: s.Items[0].Title, Bearing: s.Bearing}
}

// trimClause takes politeness and filler off both ends of a clause.
func trimClause(ws []words.Word) []words.Word {
	ws = words.TrimPunctuation(ws)
	for {
		n := len(ws)
		ws = words.TrimPunctuation(words.StripTrailing(words.StripLeading(ws, leadIns), trailers))
		if len(ws) == n {
			return ws
		}
	}
}

// fillerOnly reports words that are only lead-ins or a yes or no:
// "actually," before "rename it" and "yes," before "delete them" are no
// clauses of their own.
func fillerOnly(ws []words.Word) bool {
	for len(ws) > 0 {
		n := max(words.LongestPhrase(leadIns, ws, 0), words.LongestPhrase(yesLeads, ws, 0), words.LongestPhrase(noLeads, ws, 0))
		if n == 0 {
			return false
		}
		ws = ws[n:]
	}
	return true
}
