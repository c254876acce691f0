package offline

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/taskchat/taskchat/internal/agent/offline/grammar"
	"github.com/taskchat/taskchat/internal/agent/offline/lexicon"
	"github.com/taskchat/taskchat/internal/agent/offline/results"
	"github.com/taskchat/taskchat/internal/agent/offline/slots"
	"github.com/taskchat/taskchat/internal/agent/offline/words"
)

// The dialogue: what a yes, a correction ("no, I meant …") and an answer
// do, by what is open. yes and doCorrect are its tables: each case of their
// switches is a line, the first that holds deciding.

func (e *executor) yes(mood grammar.Mood) {
	q, offers := e.mem.question, e.mem.offers
	switch {
	case q != nil && q.ifDone && (mood == grammar.StillToDo || mood == grammar.StillToDoAlone):
		// "I have to", asked whether tasks are done: they are still to do.
		for _, t := range q.candidates {
			e.say("Okay, I'll leave %s open.", results.DescribeTargets([]results.Task{t}))
		}
	case nothingOpen(e.mem):
		// A yes to no question, or to one it does not answer ("what should
		// the task say?"), asks what to do.
		e.say(`Okay — what should I do? For example: "Add a task to buy groceries" or "What's pending?"`)
	case q.confirm && (mood == grammar.StillToDoAlone || mood == grammar.Doubtfully):
		// "I have to" alone, or a doubtful yes ("yes? what would that do"),
		// to an offer: nothing is done, and the offer is made again.
		e.offerAgain()
	case len(offers) > 1 || len(offers) == 1 && q != offers[0]:
		// A yes to a reply that offered several things takes them all, and
		// asks again a "which one?" that followed them.
		for _, o := range offers {
			e.yesTo(o)
		}
		if q != offers[len(offers)-1] {
			e.askWhich(*q, q.candidates)
		}
	default:
		// A yes to an offer, or to a question about one task, makes it; to
		// "which one?", it asks which again.
		e.yesTo(q)
	}
}

// nothingOpen reports that the last reply asked nothing a yes or a task
// answers.
func nothingOpen(m memory) bool {
	return m.question == nil || m.question.asksText
}

func (e *executor) offerAgain() {
	q := e.mem.question
	switch {
	case q.act == grammar.ActAdd && len(q.items) > 1:
		e.ask(*q, "I haven't added anything yet. "+results.OfferAddText(q.items))
	case q.act == grammar.ActAdd:
		e.ask(*q, fmt.Sprintf("I haven't added anything yet. A \"yes\" adds %q to your list; a \"no\" leaves it as it is.", q.items[0].Title))
	default:
		e.ask(*q, results.OfferText(q.act, q.candidates))
	}
}

// yesTo makes what q offered, or asks again which task it meant.
func (e *executor) yesTo(q *question) {
	switch {
	case q.act == grammar.ActAdd:
		e.doAdd(q.items)
	case len(q.candidates) == 1 || q.confirm:
		e.act(grammar.Step{Act: q.act, Title: q.title, Desc: q.desc}, q.candidates)
	default:
		e.askWhich(*q, q.candidates)
	}
}

func (e *executor) doCorrect(s grammar.Step) {
	q, last, focus := e.mem.question, e.mem.lastAct, e.mem.focus
	answer := grammar.Step{Act: grammar.ActAnswer, Ref: s.Ref, Parts: s.Parts, Text: s.Text}
	switch {
	case q != nil && q.asksText:
		// "What should the task say?" — "I meant call grandma": the title.
		e.doSuggest(grammar.Step{Act: grammar.ActSuggest, Text: s.Title})
	case q != nil:
		// Any other question: what was meant answers it.
		e.doAnswer(answer)
	case (last == grammar.ActAdd || last == grammar.ActUpdate) && len(focus) == 1 && !focus[0].Deleted &&
		s.Ref.Kind != slots.RefIDs && s.Title != "":
		// A task just added or renamed gets the title meant.
		e.retitleMeant(s, focus[0])
	case (last == grammar.ActComplete || last == grammar.ActDelete) && s.Ref.Kind != slots.RefNone:
		// A completion or a deletion is made on the task meant; the one
		// made before stays made, for the tools cannot undo it.
		e.redo(grammar.Step{Act: last, Ref: s.Ref, Parts: s.Parts})
	default:
		// No change to correct: what was meant, said alone.
		answer.Text = cmp.Or(s.Title, s.Text)
		e.doAnswer(answer)
	}
}

// doAnswer reads a bare reference ("the second one", "4") as the answer
// to the open question, or, said with "and", as more for the last change.
func (e *executor) doAnswer(s grammar.Step) {
	q, last := e.mem.question, e.mem.lastAct
	if q == nil && s.Bearing == grammar.Continuing && (last == grammar.ActComplete || last == grammar.ActDelete) {
		// "and the garage", "also task 3": one more for the last change;
		// but a name no task has ("and buy milk") may be a new task.
		if s.Ref.Kind == slots.RefName {
			listed, ok := e.tasks()
			if !ok {
				return
			}
			names := func(r slots.Ref) bool {
				return r.Kind != slots.RefName || len(results.MatchTasks(listed, r.Words, false)) > 0
			}
			if !slices.ContainsFunc(append([]slots.Ref{s.Ref}, s.Parts...), names) {
				e.doSuggest(s)
				return
			}
		}
		e.do(grammar.Step{Act: last, Ref: s.Ref, Parts: s.Parts}) // a grammar's answer has a reference
		return
	}
	if q != nil && q.confirm && q.act == grammar.ActAdd && len(q.items) > 1 {
		if items, ok := results.PickItems(q.items, s.Ref); ok {
			e.doAdd(items) // "only the first", "not the eggs"
			return
		}
	}
	if nothingOpen(e.mem) || q.confirm && q.act == grammar.ActAdd {
		// No question takes tasks for an answer: words may be a task, and
		// tasks pointed at are asked about, never acted on by a guess.
		if s.Ref.Kind == slots.RefName {
			e.doSuggest(s)
		} else {
			e.askWhatToDo(s.Ref)
		}
		return
	}
	e.answerAmong(grammar.Step{Act: q.act, Ref: s.Ref, Title: q.title, Desc: q.desc}, q, s.Bearing == grammar.Continuing)
}

// answerAmong reads a reference said to question q: the tasks it names
// among q's, else wherever it points. To an offer, those tasks named again
// are a yes; any other, or any said as more ("and task 4"), is offered in
// turn, and "yes except the bike" offers the others.
func (e *executor) answerAmong(s grammar.Step, q *question, more bool) {
	offered, among := q.candidates, q.confirm || len(q.candidates) > 0
	if q.confirm && s.Ref.Kind == slots.RefOther {
		left, named := results.Except(offered, s.Ref.Except)
		if !named || len(left) == 0 || len(left) == len(offered) {
			e.yes(grammar.Doubtfully)
		} else {
			e.offer(s, left, results.OfferText(s.Act, left))
		}
		return
	}
	var named []results.Task
	if among && s.Ref.Kind == slots.RefName {
		named = results.MatchTasks(offered, s.Ref.Words, true)
	}
	var targets []results.Task
	switch {
	case among && s.Ref.Kind == slots.RefAll && s.Ref.Status == "all":
		targets = offered
	case among && s.Ref.Kind == slots.RefOther:
		targets = e.otherThan(s, offered) // none when it asked
	case len(named) > 1 && !s.Ref.Plural:
		e.askWhich(about(s), named)
	case len(named) > 0:
		targets = named
	default:
		var ok bool
		if targets, ok = e.resolve(s); !ok {
			return
		}
	}
	for _, t := range targets {
		if _, ok := results.FindTask(offered, t.ID); q.confirm && (!ok || more) {
			e.offer(s, targets, results.OfferText(s.Act, targets))
			return
		}
	}
	if len(targets) > 0 {
		e.act(s, targets)
	}
}

// retitleMeant gives task t, just added or renamed, the title meant ("no,
// I meant call grandma"), unless the words point at something else (a
// place, a time, another task) or are a piece of the title ("2 liters").
func (e *executor) retitleMeant(s grammar.Step, t results.Task) {
	ws := words.TrimPunctuation(words.Split(s.Text))
	titled := len(ws) > 0 && !grammar.TopicStarts[ws[0].Low] && !prepositions[ws[0].Low] && !slots.WhenWords[ws[0].Low] && ws[0].Low != "add" &&
		!(len(ws) == 1 && len(strings.Fields(t.Title)) > 1) && !(len(ws) <= 3 && words.TaskNumber(ws[0]) != 0)
	if titled && s.Ref.Kind == slots.RefName {
		listed, ok := e.tasks()
		if !ok {
			return
		}
		other := func(o results.Task) bool { return o.ID != t.ID }
		titled = !slices.ContainsFunc(results.MatchTasks(listed, s.Ref.Words, false), other)
	}
	if !titled {
		e.say("Sorry, I'm not sure what you meant, so I left task %d, %s, as it is. To change what it says, tell me the new title, like \"rename task %d to …\".", t.ID, t.Title, t.ID)
		return
	}
	e.act(grammar.Step{Act: grammar.ActUpdate, Title: s.Title, Desc: s.Desc}, []results.Task{t})
}

// prepositions start words that say where or when, not what.
var prepositions = lexicon.Words("prepositions")

// doMeant carries out a request said as a correction ("no, I meant delete
// task 5") and says what became of the last change, which stays made.
func (e *executor) doMeant(s grammar.Step) {
	s.Bearing = grammar.Fresh
	if s.Act == grammar.ActNo {
		if e.mem.lastAct == 0 {
			e.do(s) // nothing was changed before: a plain no, said as one
			return
		}
		e.sawRefusal = true
		for _, t := range e.mem.focus {
			e.say("%s", results.Stays(e.mem.lastAct, t))
		}
		return
	}
	e.do(s)
	if e.mem.lastAct != grammar.ActAdd || e.stopped() || s.Ref.Kind != slots.RefIDs {
		return
	}
	for _, t := range results.WithoutDeleted(e.mem.focus) {
		if !slices.Contains(s.Ref.IDs, t.ID) {
			e.say("Task %d, %s, that I added before is still on your list.", t.ID, t.Title)
		}
	}
}

// redo makes the last turn's completion or deletion on the tasks meant
// instead, and says what became of those it was made on.
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
		if _, meant := results.FindTask(targets, t.ID); !meant {
			e.say("%s", results.Stays(s.Act, t))
		}
	}
}

// doSuggest reads words that may be a task ("buy milk"): a title asked for,
// one more after an add ("and also feed the cat"), else an offer to add.
func (e *executor) doSuggest(s grammar.Step) {
	q, text := e.mem.question, s.Text
	switch {
	case q != nil && q.asksText && q.act != grammar.ActAdd:
		e.act(grammar.Step{Act: grammar.ActUpdate, Title: text}, q.candidates)
	case q != nil && q.asksText, s.Bearing == grammar.Continuing && e.mem.lastAct == grammar.ActAdd:
		e.doAdd([]grammar.Item{{Title: text}})
	case !slots.MayBeTask(words.Split(text)):
		e.say("Sorry, I'm not sure what you mean. %s", grammar.HelpText)
	default:
		e.offerAdd(grammar.Item{Title: text})
	}
}

// offerAdd offers to add a task. The offers of one reply are one question,
// which a "yes" accepts whole.
func (e *executor) offerAdd(it grammar.Item) {
	if q := e.question; q != nil && q.act == grammar.ActAdd && q.confirm && e.offerLine >= 0 {
		q.items = append(q.items, it)
		e.lines[e.offerLine] = results.OfferAddText(q.items)
		return
	}
	e.ask(question{act: grammar.ActAdd, items: []grammar.Item{it}, confirm: true}, results.OfferAddText([]grammar.Item{it}))
	e.offerLine = len(e.lines) - 1
}

func (e *executor) askWhich(q question, candidates []results.Task) {
	verb := results.Actions[q.act].Verb
	q.candidates = candidates
	if len(candidates) == 0 {
		e.ask(q, fmt.Sprintf("Which task should I %s? Tell me its number, like \"%s\", or a word from its title.", verb, results.Example(q.act, 0)))
		return
	}
	e.ask(q, fmt.Sprintf("Which one should I %s?\n%s\nTell me its number, like \"%s\".", verb, results.TaskLines(candidates), results.Example(q.act, candidates[0].ID)))
}
