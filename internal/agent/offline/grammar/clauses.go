package grammar

import (
	"slices"
	"strings"

	"github.com/taskchat/taskchat/internal/agent/offline/slots"
	"github.com/taskchat/taskchat/internal/agent/offline/words"
)

// maxSteps caps the requests one message can make.
const maxSteps = 12

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
			// "paid the water bill. all done!" says how the request left
			// things, not that every task is done.
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
			if s.Act == ActNo && anyIn(c.ws, widenWords) {
				s.Bearing = TakingBackAll // "no, neither"
			}
			if n := len(steps); n > 0 && steps[n-1].Act == ActNo && s.Act == ActAnswer && anyIn(c.ws, widenWords) {
				steps[n-1].Bearing = TakingBackAll // "no, don't do any of that"
				continue
			}
			if continues(c.ws) && !strings.HasSuffix(strings.TrimSpace(sentence), "?") && s.Bearing == Fresh {
				s.Bearing = Continuing
			}
			if n := len(steps); n > 0 && deedTopic(steps[n-1], s, before) {
				// "I moved the dentist appointment, update it": the deed
				// names the task, and completes nothing.
				s.Ref, steps = steps[n-1].Ref, steps[:n-1]
			} else if topic, described := aboutIt(sentence, before, s); topic.Kind != slots.RefNone && len(steps) > 0 {
				s.Ref, steps = topic, steps[:len(steps)-1] // "nevermind the bike, delete it"
			} else if described != nil && len(steps) > 0 {
				unread := steps[len(steps)-1] // "had the HR meeting scheduled, tick it off"
				s.Described, s.Unread, steps = described, &unread, steps[:len(steps)-1]
			}
			steps = append(steps, s)
			before = c.ws
		}
	}
	return withoutChatter(doubtingYes(text, takenBack(steps)))
}

// asideStep is a remark on the request before it, which its reply answers.
var asideStep = Step{Act: ActChatter, Text: "Okay."}

// changes reports a step that changes the list.
func changes(s Step) bool {
	return slices.Contains([]Action{ActAdd, ActComplete, ActDelete, ActUpdate, ActNote}, s.Act)
}

// withoutChatter drops "thanks" and "hi" from a message that asks for more.
func withoutChatter(steps []Step) []Step {
	out := slices.DeleteFunc(slices.Clone(steps), func(s Step) bool { return s.Act == ActChatter })
	if len(out) == 0 {
		return steps
	}
	return out
}

// clauseWords are the words of one clause, whether they are its whole
// sentence, and whether they are a reason given for the request before.
type clauseWords struct {
	ws           []words.Word
	whole, aside bool
}

// splitClauses cuts a sentence into clauses, at "and", "then" and commas
// followed by a request of its own ("add milk and mark task 2 done"), not
// by words that are none ("buy bread and butter", "2 and 3").
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
		// "no wait, just 4": what follows is asked instead. A bare "no,
		// task 4" answers a question.
		out = append(out, clauseWords{ws: ws[:end]})
		start, instead = end, end
	}
	for i := start + 1; i < len(ws); i++ {
		if ws[i].Low == "," && stateRemark(ws[i+1:]) && peekIs(sentence, ws[start:i], changes) {
			return append(append(out, clauseWords{ws: ws[start:i]}, clauseWords{ws: ws[i:], aside: true}), asides...)
		}
		if asideAt(ws, i) && peekIs(sentence, ws[start:i], changesTasks) {
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
			start = afterConnectors(ws, end)
			i = start
			continue
		}
		next := afterConnectors(ws, i)
		if next == i || connectors[ws[i-1].Low] || next == len(ws) || fillerOnly(ws[start:i]) {
			continue
		}
		numbers := words.TaskNumber(ws[i-1]) != 0 && words.TaskNumber(ws[next]) != 0 // "1, 3 and 4"
		if numbers || ws[i].Low == "but" && peekIs(sentence, ws[start:i], onAll) && !leadsRequest(sentence, ws[next:]) {
			continue
		}
		back := takesBack(sentence, ws[next:])
		if !back && !startsRequest(sentence, ws[next:]) {
			continue
		}
		out = append(out, clauseWords{ws: ws[start:i]})
		start, i = next, next
		if end := takeBackEnd(ws, next); back && end < len(ws) {
			// "complete task 3, no, task 4": a no, then what is asked instead.
			out = append(out, clauseWords{ws: ws[next:end]})
			start, i, instead = end, end, end
		}
	}
	// What is asked after a no is read as said alone.
	out = append(out, clauseWords{ws: ws[start:], whole: start == instead})
	if len(out) == 1 {
		out[0].whole = true
	}
	return append(out, asides...)
}

// afterConnectors returns where the words after the connectors at ws[i]
// start; i when ws[i] is none.
func afterConnectors(ws []words.Word, i int) int {
	for i < len(ws) && connectors[ws[i].Low] {
		i++
	}
	return i
}

// takesBack reports a no said up to the next comma: "…, no wait, …". Cut
// there, it takes back what was asked before it (takenBack).
func takesBack(sentence string, ws []words.Word) bool {
	end := 0
	for end < len(ws) && ws[end].Low != "," {
		end++
	}
	s, ok := peek(sentence, ws[:end], true)
	return ok && s.Act == ActNo
}

// takeBackEnd returns where what follows a no at ws[i] starts.
func takeBackEnd(ws []words.Word, i int) int {
	for i < len(ws) && ws[i].Low != "," {
		i++
	}
	for i < len(ws) && ws[i].Low == "," {
		i++
	}
	return i
}

// leadsRequest reports words after "but" that start a request ("but add
// buy milk"), not the tasks an exception leaves out ("but tasks 3 and 4").
func leadsRequest(sentence string, ws []words.Word) bool {
	if len(ws) == 0 || slots.TaskRefAt(ws, 0) > 0 || words.TaskNumber(ws[0]) > 0 || TopicStarts[ws[0].Low] || slots.TaskNouns[ws[0].Low] {
		return false
	}
	return startsRequest(sentence, ws)
}

// changesTasks reports a completion or deletion: what a reason may follow.
// After an add, "since it's her birthday" is part of the title.
func changesTasks(s Step) bool {
	return (s.Act == ActComplete || s.Act == ActDelete) && s.Ref.Kind != slots.RefNone
}

// onAll reports a completion or deletion of all tasks, or all of those
// shown: what an exception ("but tasks 3 and 4") may follow.
func onAll(s Step) bool {
	return (s.Act == ActComplete || s.Act == ActDelete) &&
		(s.Ref.Kind == slots.RefAll || s.Ref.Kind == slots.RefFocus && s.Ref.Plural)
}

// peekIs reports whether ws, read by peek, are a step that is accepts.
func peekIs(sentence string, ws []words.Word, is func(Step) bool) bool {
	s, ok := peek(sentence, ws, false)
	return ok && is(s)
}

// startsRequest reports whether ws, up to its next connector or, if short
// enough, all of it ("tasks 2 and 3 are done"), is a request of its own.
func startsRequest(sentence string, ws []words.Word) bool {
	first := toConnector(ws)
	if _, ok := parseWords(sentence, first, false); ok || len(first) == len(ws) {
		return ok
	}
	_, ok := peek(sentence, ws, false)
	return ok
}

// toConnector returns ws up to its first connector after the first word.
func toConnector(ws []words.Word) []words.Word {
	for i := 1; i < len(ws); i++ {
		if connectors[ws[i].Low] {
			return ws[:i]
		}
	}
	return ws
}

// maxClauseWords is the longest stretch read as one request when deciding
// where to cut: without the bound a long sentence would be read again at
// every connector, its cost the square of its length.
const maxClauseWords = 40

// peek reads words to decide a cut.
func peek(sentence string, ws []words.Word, whole bool) (Step, bool) {
	if len(ws) > maxClauseWords {
		return Step{}, false
	}
	return parseWords(sentence, ws, whole)
}

// readClause reads one clause into a step, known or not.
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

// parseWords reads a clause with the grammar: first without a modal
// lead-in when what follows is a command ("I need to delete task 3"),
// then as said ("I need to call the bank" is a task).
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
	rest := words.StripLeading(ws, modals)
	if len(rest) < len(ws) {
		if s, ok := parseClause(sentence, rest, whole); ok && isCommand(s) {
			if s.Act == ActComplete && !markVerbs[rest[0].Low] && !(tickVerbs[rest[0].Low] && anyIn(rest, offWords)) {
				s.Mood = Tentatively // "I need to finish task 3": it may be still to do
			}
			return s, true
		}
	}
	s, ok := parseClause(sentence, ws, whole)
	if ok && s.Act == ActAdd && len(s.Items) == 1 && len(rest) < len(ws) && slots.RefersToTask(rest) {
		// "need to do task 5": that task is meant, so the add is only offered.
		s = Step{Act: ActSuggest, Text: s.Items[0].Title, Bearing: s.Bearing}
	}
	if ok && s.Act == ActCorrect {
		if r, meant := meantRequest(s.Text); meant {
			return r, true
		}
	}
	if (!ok || s.Act == ActAnswer) && len(ws) > 2 && orderWords[ws[0].Low] {
		// "first add walk the dog", but "first one is done".
		if t, ok := parseWords(sentence, ws[1:], whole); ok && t.Act != ActAnswer {
			return t, true
		}
	}
	return s, ok
}

// parseException reads a request about all tasks, or all of those shown,
// that leaves some out: "delete all but tasks 3 and 5", not "delete the
// dentist but keep the gym".
func parseException(sentence string, ws []words.Word, whole bool) (Step, bool) {
	for k := 1; k < len(ws)-1; k++ {
		n := words.LongestPhrase(exceptionWords, ws, k)
		if n == 0 {
			continue
		}
		s, ok := parseWords(sentence, ws[:k], whole)
		if !ok || !onAll(s) {
			return Step{}, false
		}
		except := ws[k+n:]
		if s.Act == ActComplete {
			// "mark all except 3 and 5 as done": "as done" is the request's.
			except = words.StripTrailing(except, stateTails)
		}
		s.Ref.Except = slots.ExceptionRefs(except)
		return s, len(s.Ref.Except) > 0
	}
	return Step{}, false
}

// isCommand reports a step after "I need to" that asks the assistant
// ("delete task 3"), not one that is the task ("delete old emails").
func isCommand(s Step) bool {
	switch s.Act {
	case ActList, ActAdd, ActReply, ActChatter:
		return true
	case ActComplete, ActDelete, ActQuery, ActUpdate, ActNote:
		return s.Ref.Kind != slots.RefName
	}
	return false
}

// anyIn reports whether a word of ws is in set.
func anyIn(ws []words.Word, set map[string]bool) bool {
	return slices.ContainsFunc(ws, func(w words.Word) bool { return set[w.Low] })
}

// allIn reports whether every word of ws is in set.
func allIn(ws []words.Word, set map[string]bool) bool {
	return !slices.ContainsFunc(ws, func(w words.Word) bool { return !set[w.Low] })
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

// fillerOnly reports words that are only lead-ins or a yes or no
// ("actually," before "rename it"): no clause of their own.
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
