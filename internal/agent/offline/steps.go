package offline

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/taskchat/taskchat/internal/agent/offline/grammar"
	"github.com/taskchat/taskchat/internal/agent/offline/results"
	"github.com/taskchat/taskchat/internal/agent/offline/slots"
)

// do carries out one step: the calls it makes on the tasks its reference
// resolves to (resolve.go), or what it says and asks.
func (e *executor) do(s grammar.Step) {
	if s.Bearing == grammar.Correcting {
		e.doMeant(s)
		return
	}
	switch s.Act {
	case grammar.ActContinue: // with nothing stopped to carry on (see play)
		switch q := e.mem.question; {
		case q != nil && q.confirm:
			e.offerAgain() // what goes on is the answer to the offer
		case q != nil && len(q.candidates) > 0:
			e.askWhich(*q, q.candidates)
		default:
			e.say("There's nothing I stopped in the middle of. What should I do next?")
		}
	case grammar.ActAdd:
		e.doAdd(s.Items)
	case grammar.ActList:
		if call := results.ListCall(s.Status); s.Ref.Kind == slots.RefNone {
			e.queue(grammar.ActList, call.Tool, call.Args)
		} else {
			e.doFind(s) // "show me task 5"
		}
	case grammar.ActComplete, grammar.ActDelete, grammar.ActUpdate, grammar.ActNote, grammar.ActQuery:
		if s.Ref.Kind == slots.RefNone {
			e.askWhich(about(s), nil)
			return
		}
		if targets, ok := e.resolve(s); ok {
			e.act(s, targets)
		}
	case grammar.ActAnswer:
		e.doAnswer(s)
	case grammar.ActYes:
		e.yes(s.Mood)
	case grammar.ActNo:
		if !e.sawRefusal { // "no. keep it": said once
			e.sawRefusal = true
			// The list stays as it was, unless this message changed it.
			said := "Okay, I left your list as it was."
			changing := func(q queued) bool { return q.act != grammar.ActList && q.line >= 0 }
			if e.lastAct != 0 || slices.ContainsFunc(e.batch, changing) {
				said = "Okay, I'll stop there."
			}
			e.say("%s", cmp.Or(s.Text, said))
		}
	case grammar.ActSuggest:
		e.doSuggest(s)
	case grammar.ActCorrect:
		e.doCorrect(s)
	case grammar.ActReply, grammar.ActChatter:
		e.say("%s", s.Text)
	}
}

func (e *executor) doAdd(items []grammar.Item) {
	if len(items) == 0 {
		e.ask(question{act: grammar.ActAdd, asksText: true}, `What should the task say? For example: "Add a task to buy groceries".`)
		return
	}
	for _, it := range items {
		args := map[string]any{"title": it.Title}
		if it.Description != "" {
			args["description"] = it.Description
		}
		e.queue(grammar.ActAdd, results.ToolAddTask, args)
	}
}

// act makes the step's calls on the tasks it resolved to.
func (e *executor) act(s grammar.Step, targets []results.Task) {
	switch s.Act {
	case grammar.ActComplete:
		if s.Mood == grammar.Vaguely && s.Ref.Kind == slots.RefAll && len(s.Ref.Except) == 0 && len(targets) > 1 && !e.confirmedBefore(s, targets) {
			// "all done" is a mood: completing the whole list on it is asked first.
			e.offer(s, targets, fmt.Sprintf("Should I mark all %d open tasks as complete?\n%s\nSay \"yes\" to mark them.", len(targets), results.TaskLines(targets)))
			return
		}
		if s.Mood == grammar.Tentatively {
			e.askIfDone(targets)
			return
		}
		if s.Ref.Span { // "complete tasks 1 thru 4" says which were done already
			listed, ok := e.tasks()
			if !ok {
				return
			}
			results.Titled(targets, listed)
		}
		for _, t := range targets {
			if t.Completed {
				e.say("Task %d was already complete: %s.", t.ID, t.Title)
				e.setFocus(e.step, t)
				continue
			}
			e.queue(grammar.ActComplete, results.ToolCompleteTask, map[string]any{"task_id": t.ID})
		}
	case grammar.ActDelete:
		if s.Mood == grammar.Tentatively {
			e.offer(s, targets, results.OfferText(grammar.ActDelete, targets))
			return
		}
		if s.Ref.Kind == slots.RefAll && s.Ref.Status == "all" && len(targets) > 1 && !e.confirmedBefore(s, targets) {
			what := fmt.Sprintf("all %d of your tasks", len(targets))
			if len(s.Ref.Except) > 0 {
				what = fmt.Sprintf("these %d tasks", len(targets))
			}
			e.offer(s, targets, fmt.Sprintf("That would delete %s:\n%s\nShould I? Say \"yes\" to delete them.", what, results.TaskLines(targets)))
			return
		}
		for _, t := range targets {
			e.queue(grammar.ActDelete, results.ToolDeleteTask, map[string]any{"task_id": t.ID})
		}
	case grammar.ActUpdate, grammar.ActNote:
		e.actOnOne(s, targets)
	case grammar.ActQuery:
		e.answerQuery(targets)
	}
}

func (e *executor) askIfDone(targets []results.Task) {
	targets, ok := e.existing(targets)
	if !ok || len(targets) == 0 {
		return
	}
	are, what := "they're", "them"
	if len(targets) == 1 {
		are, what = "it's", "it"
	}
	e.ask(question{act: grammar.ActComplete, candidates: targets, confirm: true, ifDone: true},
		fmt.Sprintf("Should I mark %s as complete? Say \"yes\" if %s done; otherwise I'll leave %s open.", results.DescribeTargets(targets), are, what))
}

// existing looks up the tasks known by number before a question offers
// them, and says which are not there.
func (e *executor) existing(targets []results.Task) ([]results.Task, bool) {
	listed := results.WithoutDeleted(e.shown) // what the conversation last listed
	if e.fresh {
		listed = e.listing
	}
	results.Titled(targets, listed)
	// A turn recorded before questions looked tasks up is read as it was
	// answered: by number.
	untitled := func(t results.Task) bool { return t.Title == "" }
	if !slices.ContainsFunc(targets, untitled) || e.firstID == 0 && e.next >= len(e.rounds) {
		return targets, true
	}
	page, ok := e.list(true)
	if !ok {
		return nil, false
	}
	results.Titled(targets, page)
	var out []results.Task
	for _, t := range targets {
		pastPage := e.partial && (len(page) == 0 || t.ID > page[len(page)-1].ID)
		if t.Title != "" || pastPage {
			out = append(out, t)
		} else {
			e.say("%s", results.TaskNotFound(t.ID))
		}
	}
	return out, true
}

// confirmedBefore reports a request led by a yes that answers the question
// asking whether to do just that ("yes, delete everything").
func (e *executor) confirmedBefore(s grammar.Step, targets []results.Task) bool {
	q := e.mem.question
	sameID := func(a, b results.Task) bool { return a.ID == b.ID }
	return s.Bearing == grammar.Confirming && q != nil && q.confirm && q.act == s.Act && slices.EqualFunc(q.candidates, targets, sameID)
}

// actOnOne changes one task's title or description, or adds a note.
func (e *executor) actOnOne(s grammar.Step, targets []results.Task) {
	if len(targets) > 1 {
		e.askWhich(about(s), targets)
		return
	}
	t := targets[0]
	if s.Act == grammar.ActUpdate && s.Title == "" && s.Desc == "" {
		e.ask(question{act: grammar.ActUpdate, candidates: targets, asksText: true},
			fmt.Sprintf(`What should task %d say instead? For example: "Change task %d to 'Call mom tonight'".`, t.ID, t.ID))
		return
	}
	args := map[string]any{"task_id": t.ID}
	if s.Title != "" {
		args["title"] = s.Title
	}
	desc := s.Desc
	if s.Act == grammar.ActNote {
		listed, ok := e.tasks()
		if !ok {
			return
		}
		current, found := results.FindTask(listed, t.ID)
		if !found {
			e.say("%s", results.TaskNotFound(t.ID))
			return
		}
		if current.Description != "" {
			desc = current.Description + "; " + desc
		}
	}
	if desc != "" {
		args["description"] = desc
	}
	e.queue(s.Act, results.ToolUpdateTask, args)
}

// doFind shows the tasks asked about ("anything about the dentist?").
func (e *executor) doFind(s grammar.Step) {
	listed, ok := e.tasks()
	if !ok {
		return
	}
	var found []results.Task
	var missing []int64
	if s.Ref.Kind == slots.RefIDs {
		for _, id := range s.Ref.IDs {
			if t, ok := results.FindTask(listed, id); ok {
				found = append(found, t)
			} else {
				missing = append(missing, id)
			}
		}
		if len(found) > 0 {
			e.say("Here %s %s:", map[bool]string{true: "is", false: "are"}[len(found) == 1], results.TaskNumbers(found))
		}
	} else {
		found = results.WithStatus(results.MatchTasks(listed, s.Ref.Words, false), s.Status)
		if len(found) == 0 {
			e.say("You have no %s matching %q.", map[string]string{"all": "task", "pending": "pending task", "completed": "completed task"}[s.Status],
				strings.Join(s.Ref.Words, " "))
			return
		}
		head := fmt.Sprintf("You have %s matching %q", results.Plural(len(found), "task"), strings.Join(s.Ref.Words, " "))
		if len(found) > results.ShownTasks { // results.PageLines shows the first
			head += fmt.Sprintf("; here are the first %d", results.ShownTasks)
		}
		e.say("%s:", head)
	}
	if len(found) > 0 {
		e.say("%s", results.PageLines(found))
		e.setFocus(e.step, found...)
		e.shown = found
	}
	for _, id := range missing {
		e.say("%s", results.TaskNotFound(id))
	}
}

func (e *executor) answerQuery(targets []results.Task) {
	listed, ok := e.tasks()
	if !ok {
		return
	}
	for _, t := range targets {
		current, found := results.FindTask(listed, t.ID)
		if !found {
			e.say("%s", results.TaskNotFound(t.ID))
			continue
		}
		said := map[bool]string{true: "Yes — task %d, %s, is done.", false: "Not yet — task %d, %s, is still open."}
		e.say(said[current.Completed], current.ID, current.Title)
		e.setFocus(e.step, current)
	}
}
