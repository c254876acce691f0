package offline

import (
	"fmt"
	"strings"

	"github.com/taskchat/taskchat/internal/agent/offline/grammar"
	"github.com/taskchat/taskchat/internal/agent/offline/results"
	"github.com/taskchat/taskchat/internal/agent/offline/slots"
)

// This file resolves a step's reference to the tasks it means: by
// number, by name, by place in a list, by what the conversation is about,
// and with what is left out.

// resolve finds the tasks a step's reference points at. When it cannot
// tell, it says so or asks, and returns false.
func (e *executor) resolve(s grammar.Step) ([]results.Task, bool) {
	targets, ok := e.resolveRef(s)
	if !ok || len(s.Ref.Except) == 0 {
		return targets, ok
	}
	return e.leaveOut(s, targets)
}

// leaveOut takes the tasks a step's exceptions name out of its targets.
// An exception that names no task stops the step: acting on everything
// the person wanted kept would be the one wrong way to read them.
func (e *executor) leaveOut(s grammar.Step, targets []results.Task) ([]results.Task, bool) {
	listed, ok := e.tasks()
	if !ok {
		return nil, false
	}
	out := map[int64]bool{}
	for _, x := range s.Ref.Except {
		switch x.Kind {
		case slots.RefIDs:
			for _, id := range x.IDs {
				if _, found := results.FindTask(listed, id); !found {
					e.say("You have no task %d to leave out, so I left your list as it was.", id)
					return nil, false
				}
				out[id] = true
			}
		case slots.RefName:
			matches := results.MatchTasks(listed, x.Words, false)
			if len(matches) == 0 {
				e.say("I couldn't find a task matching %q to leave out, so I left your list as it was.", strings.Join(x.Words, " "))
				return nil, false
			}
			for _, t := range matches {
				out[t.ID] = true
			}
		case slots.RefOrdinal, slots.RefFocus:
			kept, ok := e.exceptAmongFocus(s, x)
			if !ok {
				e.say(`Which tasks should I leave out? Tell me their numbers or names, like "everything except tasks 2 and 4".`)
				return nil, false
			}
			for _, t := range kept {
				out[t.ID] = true
			}
		default:
			e.say(`Which tasks should I leave out? Tell me their numbers or names, like "everything except tasks 2 and 4".`)
			return nil, false
		}
	}
	kept := results.TasksWhere(targets, func(t results.Task) bool { return !out[t.ID] })
	if len(kept) == 0 {
		e.say("Leaving those out, there was nothing left to %s.", results.ActionVerbs[s.Act])
		return nil, false
	}
	return kept, true
}

// exceptAmongFocus reads an exception said by place or pronoun: "the
// last one" of "mark them all done except the last one" is a place in
// what the conversation is about, or in the list last shown. A pronoun
// can't leave out part of the tasks "them" already means.
func (e *executor) exceptAmongFocus(s grammar.Step, x slots.Ref) ([]results.Task, bool) {
	if x.Kind == slots.RefFocus && s.Ref.Kind == slots.RefFocus {
		return nil, false
	}
	focus := e.heldFocus()
	if x.Kind == slots.RefOrdinal && len(focus) <= 1 && len(e.shown) > 1 {
		focus = e.shown
	}
	return results.PickFromFocus(focus, x)
}

// resolveRef finds the tasks a step's reference points at, exceptions
// aside.
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
		return e.resolveAll(s)
	case slots.RefName:
		return e.resolveName(s)
	case slots.RefOther:
		focus, ok := e.currentFocus()
		if !ok {
			return nil, false
		}
		if len(focus) <= 1 && len(e.shown) > 1 {
			focus = e.shown
		}
		targets := e.otherThan(s, results.WithoutDeleted(focus))
		return targets, len(targets) > 0
	}
	return nil, false
}

// describedTarget finds the one task the clause before "it" describes:
// the task whose title's words it holds all of ("I won't be booking the
// table at Luigi's" holds "Book a table at Luigi's"), or that holds all
// its words; failing that, one task sharing two or more of its words
// more than any other is asked about ("we're skipping the thank you
// notes this year" and "Send the thank you notes"). With none, that
// clause is carried out as said, and handled is false: "it" means what
// it would have.
func (e *executor) describedTarget(s grammar.Step) (targets []results.Task, handled bool) {
	listed, ok := e.tasks()
	if !ok {
		return nil, true
	}
	if matches := results.MatchTasks(listed, s.Described, true); len(matches) == 1 {
		return matches, true
	}
	if close, shared := results.ClosestTasks(listed, s.Described); len(close) == 1 && shared >= 2 {
		t := close[0]
		e.ask(question{act: s.Act, title: s.Title, desc: s.Desc, candidates: close, confirm: true},
			fmt.Sprintf("Did you mean task %d, %s? Say \"yes\" if so.", t.ID, t.Title))
		return nil, true
	}
	if s.Unread != nil {
		e.do(*s.Unread)
	}
	return nil, false
}

// otherThan reads "not the bank, the other one" among the tasks being
// chosen from: those the exception leaves. When one is left and "the
// other one" was said, it is meant; otherwise the ones left are asked
// about, and the ones left out are never offered.
func (e *executor) otherThan(s grammar.Step, candidates []results.Task) []results.Task {
	out := results.Excepted(candidates, s.Ref.Except)
	left := results.TasksWhere(candidates, func(t results.Task) bool { return !out[t.ID] })
	q := question{act: s.Act, title: s.Title, desc: s.Desc}
	switch {
	case len(left) == 0 || len(out) == 0:
		e.askWhich(q, candidates)
	case len(left) == 1 && s.Ref.Pointed:
		return left
	case len(left) == 1:
		t := left[0]
		q.candidates, q.confirm = left, true
		e.ask(q, fmt.Sprintf("Did you mean task %d, %s? Say \"yes\" if so.", t.ID, t.Title))
	case s.Ref.Plural && s.Ref.Pointed:
		return left
	default:
		e.askWhich(q, left)
	}
	return nil
}

// resolveFocus finds what "it", "both" or "the second one" points at:
// among what the conversation is about, or, for a place in a list when
// that is one task, among the list last shown ("show my tasks", "add
// bread", "delete the second one"). A task deleted since is said to be
// gone, and never offered.
func (e *executor) resolveFocus(s grammar.Step) ([]results.Task, bool) {
	focus, ok := e.currentFocus()
	if !ok {
		return nil, false
	}
	var targets []results.Task
	if s.Ref.Kind == slots.RefOrdinal && len(focus) <= 1 {
		// A place needs a list of two or more: the tasks the last few
		// turns added (or changed) one by one, else the list last shown
		// ("show my tasks", "add bread", "delete the first one"). With
		// neither, "the first one" of one task is asked about.
		switch {
		case e.focusStep < 0 && len(e.mem.run) > 1:
			focus = e.mem.run
		case len(e.shown) > 1:
			focus = e.shown
		default:
			e.askWhich(question{act: s.Act, title: s.Title, desc: s.Desc}, results.WithoutDeleted(focus))
			return nil, false
		}
	}
	if s.Ref.Kind == slots.RefFocus && s.Ref.Plural && len(focus) <= 1 && e.focusStep < 0 && len(e.mem.run) > 1 {
		// "both" or "them" after tasks added one message at a time: the
		// tasks of those messages.
		focus = e.mem.run
	}
	targets, ok = results.PickFromFocus(focus, s.Ref)
	if !ok {
		e.askWhich(question{act: s.Act, title: s.Title, desc: s.Desc}, results.WithoutDeleted(focus))
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

// placeInList finds "the 3rd task" when the conversation has shown no
// list and done nothing yet: the task at that place in the whole list, in
// its order.
func (e *executor) placeInList(s grammar.Step) ([]results.Task, bool) {
	listed, ok := e.tasks()
	if !ok {
		return nil, false
	}
	targets, ok := results.PickFromFocus(listed, s.Ref)
	if !ok {
		e.say("You have %s, so I couldn't tell which one you meant. Tell me its number, like \"%s\".",
			results.Plural(len(listed), "task"), results.Example(s.Act, 0))
	}
	if ok && s.Ref.Kind == slots.RefOrdinal && s.Ref.Index >= 0 && results.PlacesDiffer(listed, targets, s.Ref.Index) {
		e.askPlaceOrNumber(s, listed, targets)
		return nil, false
	}
	return targets, ok
}

// askPlaceOrNumber asks which task a place meant when the tasks at those
// places have other numbers: it lists those, and the tasks numbered as
// the places, when there are such.
func (e *executor) askPlaceOrNumber(s grammar.Step, listed, targets []results.Task) {
	candidates := append([]results.Task(nil), targets...)
	for k := range targets {
		if t, found := results.FindTask(listed, int64(s.Ref.Index+k+1)); found {
			if _, dup := results.FindTask(candidates, t.ID); !dup {
				candidates = append(candidates, t)
			}
		}
	}
	e.ask(question{act: s.Act, title: s.Title, desc: s.Desc, candidates: candidates},
		fmt.Sprintf("Your task numbers have gaps, so I'm not sure which you meant:\n%s\nWhich one should I %s? Tell me its number, like \"%s\".",
			results.TaskLines(candidates), results.ActionVerbs[s.Act], results.Example(s.Act, candidates[0].ID)))
}

// askWhatToDo answers a reference said alone when no question is open
// ("the second one", "all of them", "3"): it says which tasks those are
// and asks what to do, so that "delete them" next acts on them.
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

// resolveAll reads "everything", "all my completed tasks": completing
// everything means every open task.
func (e *executor) resolveAll(s grammar.Step) ([]results.Task, bool) {
	listed, ok := e.tasks()
	if !ok {
		return nil, false
	}
	status := s.Ref.Status
	if s.Act == grammar.ActComplete && status == "all" {
		status = "pending"
	}
	var out []results.Task
	for _, t := range listed {
		if status == "all" || (status == "completed") == t.Completed {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		e.say("%s", results.NothingToDo(s.Act, status))
		return nil, false
	}
	return out, true
}

// resolveName finds the task whose title holds the words said. Several
// matches are asked about, unless the person said "all"; completing
// prefers the one that is still open.
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
	if len(matches) > 1 && s.Act == grammar.ActComplete {
		if open := results.OpenTasks(matches); len(open) == 1 {
			matches = open
		}
	}
	switch {
	case len(matches) == 0 && len(s.Parts) > 1:
		return e.resolveParts(s)
	case len(matches) == 0:
		e.notFound(s, listed)
		return nil, false
	case len(matches) > 1 && !r.Plural:
		q := question{act: s.Act, title: s.Title, desc: s.Desc, candidates: matches}
		e.ask(q, fmt.Sprintf("%d tasks match %q:\n%s\nWhich one should I %s? Tell me its number, like \"%s\".",
			len(matches), strings.Join(r.Words, " "), results.TaskLines(matches), results.ActionVerbs[s.Act], results.Example(s.Act, matches[0].ID)))
		return nil, false
	}
	return matches, true
}

// resolveParts resolves "the report and the dentist" part by part.
func (e *executor) resolveParts(s grammar.Step) ([]results.Task, bool) {
	var out []results.Task
	seen := map[int64]bool{}
	for _, p := range s.Parts {
		part := s
		part.Ref, part.Parts = p, nil
		targets, ok := e.resolve(part)
		if e.stopped() {
			return nil, false
		}
		for _, t := range targets {
			if ok && !seen[t.ID] {
				seen[t.ID] = true
				out = append(out, t)
			}
		}
	}
	return out, len(out) > 0
}

// notFound says no task matches the words; when one task shares some of
// them, it asks whether that one was meant.
func (e *executor) notFound(s grammar.Step, listed []results.Task) {
	phrase := strings.Join(s.Ref.Words, " ")
	close, _ := results.ClosestTasks(listed, s.Ref.Words)
	if len(close) != 1 {
		e.say("I couldn't find a task matching %q — want to see your list?", phrase)
		return
	}
	t := close[0]
	e.ask(question{act: s.Act, title: s.Title, desc: s.Desc, candidates: close, confirm: true},
		fmt.Sprintf("I couldn't find a task matching %q. Did you mean task %d, %s? Say \"yes\" and I'll %s.", phrase, t.ID, t.Title, actionOnIt[s.Act]))
}
