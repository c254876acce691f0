package offline

import (
	"fmt"
	"slices"
	"strings"

	"github.com/taskchat/taskchat/internal/agent/offline/grammar"
	"github.com/taskchat/taskchat/internal/agent/offline/lexicon"
	"github.com/taskchat/taskchat/internal/agent/offline/results"
	"github.com/taskchat/taskchat/internal/agent/offline/slots"
	"github.com/taskchat/taskchat/internal/agent/offline/words"
)

// This file is what the steps that answer or correct do: answers to a
// question, corrections, yes and no, suggestions, and the questions they
// ask.

// doAnswer reads a bare reference ("the second one", "4", "both") as the
// answer to the question the last reply asked, or, with none open and an
// "and" or a "too", as more tasks for the last turn's change.
func (e *executor) doAnswer(s grammar.Step) {
	q := e.mem.question
	if q == nil && s.Bearing == grammar.Continuing && (e.mem.lastAct == grammar.ActComplete || e.mem.lastAct == grammar.ActDelete) {
		// "and the garage", "also task 3", "the bike one too": one more
		// for the change the last turn made.
		if s.Ref.Kind == slots.RefName {
			names, ok := e.namesTask(s)
			if !ok {
				return
			}
			if !names { // "and buy milk": no task of the list, maybe a new one
				e.doSuggest(s)
				return
			}
		}
		more := grammar.Step{Act: e.mem.lastAct, Ref: s.Ref, Parts: s.Parts}
		if targets, ok := e.resolve(more); ok {
			e.act(more, targets)
		}
		return
	}
	if q != nil && q.confirm && q.act == grammar.ActAdd && len(q.items) > 1 {
		if items, ok := results.PickItems(q.items, s.Ref); ok {
			// "only the first", "not the eggs": some of the tasks offered.
			e.doAdd(items)
			return
		}
	}
	if q == nil || q.askTitle || q.askValue || (q.confirm && q.act == grammar.ActAdd) {
		// No question takes tasks for an answer: words may be a task, and
		// tasks pointed at are asked about, never acted on by a guess.
		if s.Ref.Kind == slots.RefName {
			e.doSuggest(s)
		} else {
			e.askWhatToDo(s.Ref)
		}
		return
	}
	// The answer names tasks among those the question listed.
	follow := grammar.Step{Act: q.act, Ref: s.Ref, Title: q.title, Desc: q.desc}
	if q.confirm {
		e.answerOffer(follow, q.candidates, s.Bearing == grammar.Continuing)
		return
	}
	if len(q.candidates) > 0 {
		if targets, handled := e.amongCandidates(follow, q.candidates); handled {
			if len(targets) > 0 {
				e.act(follow, targets)
			}
			return
		}
	}
	if targets, ok := e.resolve(follow); ok {
		e.act(follow, targets)
	}
}

// answerOffer reads a reference said to a question that offered a change
// on the tasks it names ("Should I mark task 3 as complete?"): those
// tasks named again are a yes; any other, or any said as more ("and task
// 4", "task 4 too"), is asked about, for a change only offered was never
// made and there is nothing to add to.
func (e *executor) answerOffer(s grammar.Step, offered []results.Task, more bool) {
	if s.Ref.Kind == slots.RefOther {
		e.offerAllBut(s, offered)
		return
	}
	targets, handled := e.amongCandidates(s, offered)
	if !handled {
		var ok bool
		if targets, ok = e.resolve(s); !ok {
			return
		}
	}
	if len(targets) == 0 {
		return
	}
	for _, t := range targets {
		if _, ok := results.FindTask(offered, t.ID); !ok || more {
			e.ask(question{act: s.Act, title: s.Title, desc: s.Desc, candidates: targets, confirm: true}, results.OfferText(s.Act, targets))
			return
		}
	}
	e.act(s, targets)
}

// offerAllBut answers "yes except the bike" to a question that offered a
// change on several tasks: the change on all of them but those is
// offered again, listed, never made on the words alone. When the words
// leave out none of the tasks offered, or all of them, the question is
// asked again.
func (e *executor) offerAllBut(s grammar.Step, offered []results.Task) {
	out := results.Excepted(offered, s.Ref.Except)
	left := results.TasksWhere(offered, func(t results.Task) bool { return !out[t.ID] })
	if len(out) == 0 || len(left) == 0 || len(left) == len(offered) {
		e.yes(grammar.Doubtfully) // asked again
		return
	}
	e.ask(question{act: s.Act, title: s.Title, desc: s.Desc, candidates: left, confirm: true}, results.OfferText(s.Act, left))
}

// namesTask reports whether a name said alone, or one of its parts,
// matches a task of the list: only then is it one more for the last
// change, for a guess at a task that cannot be undone is no guess to make.
// ok is false when the run must stop to list the tasks.
func (e *executor) namesTask(s grammar.Step) (names, ok bool) {
	listed, ok := e.tasks()
	if !ok {
		return false, false
	}
	if len(results.MatchTasks(listed, s.Ref.Words, false)) > 0 {
		return true, true
	}
	for _, p := range s.Parts {
		if p.Kind != slots.RefName || len(results.MatchTasks(listed, p.Words, false)) > 0 {
			return true, true
		}
	}
	return false, true
}

// readsAsTitle reports whether what a correction says was meant reads as
// the title of the task just added or renamed: "no, I meant call
// grandma". Words that point at something else never do: a reference
// ("the garage", "the other list"), a place or a time ("in the groceries
// one", "for tomorrow", "tonight"), a request to add ("add it to the
// groceries task"), or the name of another task of the list; nor does a
// piece of the title ("oat" for "Buy milk", "2 liters"): a word or a
// quantity where the title had more. ok is false when the run must stop
// to list the tasks.
func (e *executor) readsAsTitle(s grammar.Step, renamed results.Task) (titled, ok bool) {
	ws := words.TrimPunctuation(words.Split(s.Text))
	if len(ws) == 0 || grammar.TopicStarts[ws[0].Low] || prepositions[ws[0].Low] || slots.WhenWords[ws[0].Low] || ws[0].Low == "add" {
		return false, true
	}
	if len(ws) == 1 && len(strings.Fields(renamed.Title)) > 1 || len(ws) <= 3 && words.TaskNumber(ws[0]) != 0 {
		return false, true
	}
	if s.Ref.Kind != slots.RefName {
		return true, true
	}
	listed, ok := e.tasks()
	if !ok {
		return false, false
	}
	for _, t := range results.MatchTasks(listed, s.Ref.Words, false) {
		if t.ID != renamed.ID {
			return false, true
		}
	}
	return true, true
}

// prepositions start words that say where or when, not what.
var prepositions = lexicon.Words("prepositions")

// doMeant carries out a request said as a correction ("no, I meant
// delete task 5") and says what became of the last change, which stays
// made: a no ("I meant keep it") after a change is told the change
// stands, never that the list was left as it was.
func (e *executor) doMeant(s grammar.Step) {
	s.Bearing = grammar.Fresh
	last := results.WithoutDeleted(e.mem.focus)
	if s.Act == grammar.ActNo {
		e.sawRefusal = true
		if e.mem.lastAct == 0 || len(e.mem.focus) == 0 {
			e.do(s)
			return
		}
		for _, t := range e.mem.focus {
			e.say("%s", results.Stays(e.mem.lastAct, t))
		}
		return
	}
	e.do(s)
	if e.mem.lastAct != grammar.ActAdd || e.stopped() || s.Ref.Kind != slots.RefIDs {
		return
	}
	for _, t := range last {
		if !slices.Contains(s.Ref.IDs, t.ID) {
			e.say("Task %d, %s, that I added before is still on your list.", t.ID, t.Title)
		}
	}
}

// redo makes the last turn's completion or deletion on the tasks meant
// instead, and says what became of those it was made on: a task meant
// that it was made on already is said so, not acted on again.
func (e *executor) redo(s grammar.Step) {
	targets, ok := e.resolve(s)
	if !ok {
		return
	}
	done := map[grammar.Action]string{grammar.ActDelete: "deleted", grammar.ActComplete: "marked as complete"}[s.Act]
	var fresh []results.Task
	for _, t := range targets {
		if before, again := results.FindTask(e.mem.focus, t.ID); again {
			e.say("Task %d, %s, is one I %s already.", before.ID, before.Title, done)
		} else {
			fresh = append(fresh, t)
		}
	}
	if len(fresh) == 0 {
		return
	}
	e.act(s, fresh)
	for _, t := range e.mem.focus {
		if _, meant := results.FindTask(targets, t.ID); meant {
			continue
		}
		if s.Act == grammar.ActDelete {
			e.say("Task %d, %s, stays deleted: I can't bring a deleted task back, but I can add it again.", t.ID, t.Title)
		} else {
			e.say("Task %d, %s, stays complete: I can't reopen a task.", t.ID, t.Title)
		}
	}
}

// amongCandidates reads an answer naming tasks by words of their titles,
// or "all", among those the question listed. handled is false when the
// answer names none of them; targets is empty when it asked again.
func (e *executor) amongCandidates(s grammar.Step, candidates []results.Task) ([]results.Task, bool) {
	switch {
	case s.Ref.Kind == slots.RefAll && s.Ref.Status == "all":
		return candidates, true
	case s.Ref.Kind == slots.RefOther:
		return e.otherThan(s, candidates), true
	case s.Ref.Kind != slots.RefName:
		return nil, false
	}
	matches := results.MatchTasks(candidates, s.Ref.Words, true)
	switch {
	case len(matches) == 0:
		return nil, false
	case len(matches) > 1 && !s.Ref.Plural:
		e.askWhich(question{act: s.Act, title: s.Title, desc: s.Desc}, matches)
		return nil, true
	}
	return matches, true
}

// refusedText answers a no: the list stays as it was, unless this
// message changed it before the no.
func (e *executor) refusedText() string {
	for _, q := range e.batch {
		if q.act != grammar.ActList && q.line >= 0 {
			return "Okay, I'll stop there."
		}
	}
	if e.lastAct != 0 {
		return "Okay, I'll stop there."
	}
	return "Okay, I left your list as it was."
}

// doSuggest reads words that may be a task ("buy milk" alone): the answer
// to "what should the task say?" or "what should it say instead?", one
// more task after an add ("and also feed the cat"), else an offer to add.
func (e *executor) doSuggest(s grammar.Step) {
	q, text := e.mem.question, s.Text
	switch {
	case q != nil && q.askTitle:
		e.doAdd([]grammar.Item{{Title: text}})
	case q != nil && q.askValue:
		e.act(grammar.Step{Act: grammar.ActUpdate, Title: text}, q.candidates)
	case s.Bearing == grammar.Continuing && e.mem.lastAct == grammar.ActAdd:
		e.doAdd([]grammar.Item{{Title: text}})
	case !slots.MayBeTask(words.Split(text)):
		e.say("Sorry, I'm not sure what you mean. %s", grammar.HelpText)
	default:
		e.offerAdd(grammar.Item{Title: text})
	}
}

// offerAdd offers to add a task. The offers of one reply are one
// question, asked once, which a "yes" accepts whole: "bread" and "eggs",
// each on a line of its own, are two tasks offered together.
func (e *executor) offerAdd(it grammar.Item) {
	if q := e.question; q != nil && q.act == grammar.ActAdd && q.confirm && e.offerLine >= 0 {
		q.items = append(q.items, it)
		e.lines[e.offerLine] = results.OfferAddText(q.items)
		return
	}
	e.ask(question{act: grammar.ActAdd, items: []grammar.Item{it}, confirm: true}, results.OfferAddText([]grammar.Item{it}))
	e.offerLine = len(e.lines) - 1
}

// askWhich asks which task an action is for, listing the candidates.
func (e *executor) askWhich(q question, candidates []results.Task) {
	verb := results.ActionVerbs[q.act]
	q.candidates = candidates
	if len(candidates) == 0 {
		e.ask(q, fmt.Sprintf("Which task should I %s? Tell me its number, like \"%s\", or a word from its title.", verb, results.Example(q.act, 0)))
		return
	}
	e.ask(q, fmt.Sprintf("Which one should I %s?\n%s\nTell me its number, like \"%s\".", verb, results.TaskLines(candidates), results.Example(q.act, candidates[0].ID)))
}

// actionOnIt says what "yes" to a question about one task does.
var actionOnIt = map[grammar.Action]string{
	grammar.ActComplete: "mark it as complete", grammar.ActDelete: "delete it", grammar.ActUpdate: "change it", grammar.ActNote: "add the note to it",
	grammar.ActQuery: "check it",
}
