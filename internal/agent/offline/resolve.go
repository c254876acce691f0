package offline

import (
	"fmt"
	"slices"
	"strings"

	"github.com/taskchat/taskchat/internal/agent/offline/grammar"
	"github.com/taskchat/taskchat/internal/agent/offline/results"
	"github.com/taskchat/taskchat/internal/agent/offline/slots"
)

// resolve finds the tasks a step's reference points at. When it cannot
// tell, it says so or asks, and returns false.
func (e *executor) resolve(s grammar.Step) ([]results.Task, bool) {
	targets, ok := e.resolveRef(s)
	if !ok || len(s.Ref.Except) == 0 {
		return targets, ok
	}
	return e.leaveOut(s, targets)
}

// leaveOut takes the tasks a step's exceptions name out of its targets. An
// exception that names no task stops the step.
func (e *executor) leaveOut(s grammar.Step, targets []results.Task) ([]results.Task, bool) {
	listed, ok := e.tasks()
	if !ok {
		return nil, false
	}
	out := map[int64]bool{}
	for _, x := range s.Ref.Except {
		var named []results.Task
		switch x.Kind {
		case slots.RefIDs:
			for _, id := range x.IDs {
				if _, found := results.FindTask(listed, id); !found {
					e.say("You have no task %d to leave out, so I left your list as it was.", id)
					return nil, false
				}
			}
			named = results.IDTasks(x.IDs)
		case slots.RefName:
			if named = results.MatchTasks(listed, x.Words, false); len(named) == 0 {
				e.say("I couldn't find a task matching %q to leave out, so I left your list as it was.", strings.Join(x.Words, " "))
				return nil, false
			}
		default:
			// A place or a pronoun ("all except the last one") is read among
			// what the conversation is about; "them" can't leave out part of itself.
			among := x.Kind == slots.RefOrdinal || x.Kind == slots.RefFocus && s.Ref.Kind != slots.RefFocus
			focus := e.heldFocus()
			if x.Kind == slots.RefOrdinal {
				focus = e.orShown(focus)
			}
			if named, ok = results.PickFromFocus(focus, x); !ok || !among {
				e.say(`Which tasks should I leave out? Tell me their numbers or names, like "everything except tasks 2 and 4".`)
				return nil, false
			}
		}
		for _, t := range named {
			out[t.ID] = true
		}
	}
	kept := results.TasksWhere(targets, func(t results.Task) bool { return !out[t.ID] })
	if len(kept) == 0 {
		e.say("Leaving those out, there was nothing left to %s.", results.Actions[s.Act].Verb)
		return nil, false
	}
	return kept, true
}

// orShown is the list last shown, for a focus too short to hold a place.
func (e *executor) orShown(focus []results.Task) []results.Task {
	if len(focus) <= 1 && len(e.shown) > 1 {
		return e.shown
	}
	return focus
}

func (e *executor) resolveRef(s grammar.Step) ([]results.Task, bool) {
	r := s.Ref
	switch r.Kind {
	case slots.RefIDs:
		return results.IDTasks(r.IDs), true
	case slots.RefFocus, slots.RefOrdinal:
		if len(s.Described) > 0 {
			if t, handled := e.describedTarget(s); handled || e.stopped() {
				return t, len(t) > 0
			}
		}
		if r.OfList && e.focusStep < 0 && !e.focusPending() && len(e.mem.focus) == 0 && len(e.shown) == 0 {
			return e.placeInList(s)
		}
		return e.resolveFocus(s)
	case slots.RefAll:
		// "everything", "all my completed tasks": completing everything
		// means every open task.
		listed, ok := e.tasks()
		if !ok {
			return nil, false
		}
		status := r.Status
		if s.Act == grammar.ActComplete && status == "all" {
			status = "pending"
		}
		if all := results.WithStatus(listed, status); len(all) > 0 {
			return all, true
		}
		none := map[string]string{"all": "no tasks", "pending": "no open tasks", "completed": "no completed tasks"}[status]
		e.say("You have %s, so there was nothing to %s.", none, results.Actions[s.Act].Verb)
		return nil, false
	case slots.RefName:
		return e.resolveName(s)
	case slots.RefOther:
		focus, ok := e.currentFocus()
		if !ok {
			return nil, false
		}
		targets := e.otherThan(s, results.WithoutDeleted(e.orShown(focus)))
		return targets, len(targets) > 0
	}
	return nil, false
}

func about(s grammar.Step, candidates ...results.Task) question {
	return question{act: s.Act, title: s.Title, desc: s.Desc, candidates: candidates}
}

func (e *executor) offer(s grammar.Step, targets []results.Task, text string) {
	q := about(s, targets...)
	q.confirm = true
	e.ask(q, text)
}

func (e *executor) didYouMean(s grammar.Step, t results.Task) {
	e.offer(s, []results.Task{t}, fmt.Sprintf("Did you mean task %d, %s? Say \"yes\" if so.", t.ID, t.Title))
}

// describedTarget finds the one task the clause before "it" describes ("I
// won't be booking the table at Luigi's, drop it"), or asks about the
// closest. With none, handled is false: "it" means what it would have.
func (e *executor) describedTarget(s grammar.Step) (targets []results.Task, handled bool) {
	listed, ok := e.tasks()
	if !ok {
		return nil, true
	}
	if matches := results.MatchTasks(listed, s.Described, true); len(matches) == 1 {
		return matches, true
	}
	if close, shared := results.ClosestTasks(listed, s.Described); len(close) == 1 && shared >= 2 {
		e.didYouMean(s, close[0])
		return nil, true
	}
	if s.Unread != nil {
		e.do(*s.Unread)
	}
	return nil, false
}

// otherThan reads "not the bank, the other one" among candidates: the ones
// left out are never offered.
func (e *executor) otherThan(s grammar.Step, candidates []results.Task) []results.Task {
	left, named := results.Except(candidates, s.Ref.Except)
	switch {
	case len(left) == 0 || !named:
		e.askWhich(about(s), candidates)
	case s.Ref.Pointed && (len(left) == 1 || s.Ref.Plural):
		return left
	case len(left) == 1:
		e.didYouMean(s, left[0])
	default:
		e.askWhich(about(s), left)
	}
	return nil
}

// resolveFocus finds what "it", "both" or "the second one" points at among
// what the conversation is about. A task deleted since is said to be gone.
func (e *executor) resolveFocus(s grammar.Step) ([]results.Task, bool) {
	focus, ok := e.currentFocus()
	if !ok {
		return nil, false
	}
	place := s.Ref.Kind == slots.RefOrdinal
	switch {
	case len(focus) <= 1 && e.focusStep < 0 && len(e.mem.run) > 1 && (place || s.Ref.Plural):
		focus = e.mem.run // "both", "them", "the first one" of tasks changed one message at a time
	case place && len(focus) <= 1:
		focus = e.orShown(focus)
	}
	targets, ok := results.PickFromFocus(focus, s.Ref)
	if !ok || place && len(focus) <= 1 { // a place needs a list of two or more
		e.askWhich(about(s), results.WithoutDeleted(focus))
		return nil, false
	}
	for _, t := range targets {
		if t.Deleted {
			e.say("Task %d was deleted already.", t.ID)
		}
	}
	targets = results.WithoutDeleted(targets)
	return targets, len(targets) > 0
}

// placeInList finds "the 3rd task" when the conversation has shown no list
// and done nothing yet: the task at that place in the whole list.
func (e *executor) placeInList(s grammar.Step) ([]results.Task, bool) {
	listed, ok := e.tasks()
	if !ok {
		return nil, false
	}
	targets, ok := results.PickFromFocus(listed, s.Ref)
	if !ok {
		e.say("You have %s, so I couldn't tell which one you meant. Tell me its number, like \"%s\".",
			results.Plural(len(listed), "task"), results.Example(s.Act, 0))
		return nil, false
	}
	if s.Ref.Kind != slots.RefOrdinal || s.Ref.Index < 0 {
		return targets, true
	}
	// After a delete, "the 2nd task" may be task 2 or the second: where the
	// tasks at those places have other numbers, it asks which, listing those
	// and the tasks numbered as the places.
	candidates, differ := slices.Clone(targets), false
	for k, t := range targets {
		place := int64(s.Ref.Index + k + 1)
		numbered, found := results.FindTask(listed, place)
		if _, dup := results.FindTask(candidates, numbered.ID); found && !dup {
			candidates = append(candidates, numbered)
		}
		differ = differ || t.ID != place
	}
	if !differ {
		return targets, true
	}
	e.ask(about(s, candidates...), fmt.Sprintf("Your task numbers have gaps, so I'm not sure which you meant:\n%s\nWhich one should I %s? Tell me its number, like \"%s\".",
		results.TaskLines(candidates), results.Actions[s.Act].Verb, results.Example(s.Act, candidates[0].ID)))
	return nil, false
}

// askWhatToDo says which tasks a reference said alone ("the second one")
// points at, and asks what to do with them.
func (e *executor) askWhatToDo(r slots.Ref) {
	var targets []results.Task
	switch r.Kind {
	case slots.RefIDs:
		var ok bool
		if targets, ok = e.existing(results.IDTasks(r.IDs)); !ok || len(targets) == 0 {
			return
		}
	case slots.RefFocus, slots.RefOrdinal:
		focus, ok := e.currentFocus()
		if !ok {
			return
		}
		targets, _ = results.PickFromFocus(focus, r)
	}
	e.say("%s", results.WhatToDoText(targets))
	if len(targets) > 0 {
		e.setFocus(e.step, targets...)
	}
}

// resolveName finds the tasks whose titles hold the words said: several
// are asked about, unless "all" was said; none, or one close is.
func (e *executor) resolveName(s grammar.Step) ([]results.Task, bool) {
	listed, ok := e.tasks()
	if !ok {
		return nil, false
	}
	r := s.Ref
	matches := results.MatchTasks(listed, r.Words, r.Deed)
	if len(matches) == 0 && r.Deed && len(r.Words) > 1 {
		matches = results.MatchTasks(listed, r.Words[1:], true)
	}
	if open := results.WithStatus(matches, "pending"); len(matches) > 1 && s.Act == grammar.ActComplete && len(open) == 1 {
		matches = open
	}
	switch {
	case len(matches) == 0 && len(s.Parts) > 1:
		return e.resolveParts(s)
	case len(matches) == 0:
		phrase := strings.Join(r.Words, " ")
		if close, _ := results.ClosestTasks(listed, r.Words); len(close) == 1 {
			t := close[0]
			e.offer(s, close, fmt.Sprintf("I couldn't find a task matching %q. Did you mean task %d, %s? Say \"yes\" and I'll %s.", phrase, t.ID, t.Title, results.Actions[s.Act].OnIt))
		} else {
			e.say("I couldn't find a task matching %q — want to see your list?", phrase)
		}
		return nil, false
	case len(matches) > 1 && !r.Plural:
		e.ask(about(s, matches...), fmt.Sprintf("%d tasks match %q:\n%s\nWhich one should I %s? Tell me its number, like \"%s\".",
			len(matches), strings.Join(r.Words, " "), results.TaskLines(matches), results.Actions[s.Act].Verb, results.Example(s.Act, matches[0].ID)))
		return nil, false
	}
	return matches, true
}

// resolveParts resolves "the report and the dentist" part by part.
func (e *executor) resolveParts(s grammar.Step) ([]results.Task, bool) {
	var out []results.Task
	for _, p := range s.Parts {
		part := s
		part.Ref, part.Parts = p, nil
		targets, ok := e.resolve(part)
		if e.stopped() {
			return nil, false
		}
		for _, t := range targets {
			if _, seen := results.FindTask(out, t.ID); ok && !seen {
				out = append(out, t)
			}
		}
	}
	return out, len(out) > 0
}
