package offline

import (
	"cmp"
	"fmt"

	"github.com/taskchat/taskchat/internal/agent/offline/grammar"
	"github.com/taskchat/taskchat/internal/agent/offline/results"
	"github.com/taskchat/taskchat/internal/agent/offline/slots"
)

// The dialogue's tables: what a yes does, by its mood and what is open,
// and what a correction ("no, I meant …") does. Each case of a switch is a
// line of a table, the first that holds deciding.

func (e *executor) yes(mood grammar.Mood) {
	q, offers := e.mem.question, e.mem.offers
	switch {
	case q != nil && q.ifDone && (mood == grammar.StillToDo || mood == grammar.StillToDoAlone):
		// "I have to", asked whether tasks are done: they are still to do.
		for _, t := range q.candidates {
			if t.Title == "" { // known by its number only
				e.say("Okay, I'll leave task %d open.", t.ID)
			} else {
				e.say("Okay, I'll leave task %d, %s, open.", t.ID, t.Title)
			}
		}
	case !nothingOpen(e.mem) && q.confirm && (mood == grammar.StillToDoAlone || mood == grammar.Doubtfully):
		// "I have to" alone, or a doubtful yes ("yes? what would that do"),
		// to an offer: nothing is done, and the offer is made again.
		e.offerAgain()
	case !nothingOpen(e.mem) && (len(offers) > 1 || len(offers) == 1 && q != offers[0]):
		// A yes to a reply that offered several things takes them all, and
		// asks again a "which one?" that followed them.
		for _, o := range offers {
			e.yesTo(o)
		}
		if q != offers[len(offers)-1] {
			e.askWhich(*q, q.candidates)
		}
	case nothingOpen(e.mem):
		// A yes to no question, or to one it does not answer ("what should
		// the task say?"), asks what to do.
		e.say(`Okay — what should I do? For example: "Add a task to buy groceries" or "What's pending?"`)
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
