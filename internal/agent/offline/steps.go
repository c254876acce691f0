package offline

import (
	"fmt"
	"strings"
)

// This file is what each kind of step does: the calls it makes, the
// tasks it resolves its reference to, and the questions it asks when it
// cannot tell what was meant.

func (e *executor) do(s step) {
	if s.corrects {
		e.doMeant(s)
		return
	}
	if s.act == actYes && s.doubtful {
		e.askAgain()
		return
	}
	switch s.act {
	case actAdd:
		e.doAdd(s.items)
	case actList:
		if s.ref.kind != refNone {
			e.doFind(s)
			return
		}
		call := listCall(s.status)
		e.queue(actList, call.tool, call.args)
	case actComplete, actDelete, actUpdate, actNote, actQuery:
		if s.ref.kind == refNone {
			e.askWhich(question{act: s.act, title: s.title, desc: s.desc}, nil)
			return
		}
		if targets, ok := e.resolve(s); ok {
			e.act(s, targets)
		}
	case actAnswer:
		e.doAnswer(s)
	case actYes:
		e.doYes()
	case actNo:
		if e.sawRefusal { // "no. keep it": said once
			return
		}
		e.sawRefusal = true
		e.say("%s", e.refusedText())
	case actSuggest:
		e.doSuggest(s)
	case actCorrect:
		e.doCorrect(s)
	case actReply:
		e.say("%s", s.text)
	}
}

func (e *executor) doAdd(items []item) {
	if len(items) == 0 {
		e.ask(question{act: actAdd, askTitle: true}, `What should the task say? For example: "Add a task to buy groceries".`)
		return
	}
	for _, it := range items {
		args := map[string]any{"title": it.title}
		if it.description != "" {
			args["description"] = it.description
		}
		e.queue(actAdd, toolAddTask, args)
	}
}

// act makes the step's calls on the tasks it resolved to.
func (e *executor) act(s step, targets []listedTask) {
	switch s.act {
	case actComplete:
		if s.vague && s.ref.kind == refAll && len(s.ref.except) == 0 && len(targets) > 1 && !e.confirmedBefore(s, targets) {
			// "all done" says no more than a mood may: completing the
			// whole list on it is asked first.
			e.ask(question{act: actComplete, candidates: targets, confirm: true},
				fmt.Sprintf("Should I mark all %d open tasks as complete?\n%s\nSay \"yes\" to mark them.", len(targets), taskLines(targets)))
			return
		}
		if s.askFirst {
			e.askIfDone(targets)
			return
		}
		if s.ref.span {
			if targets = e.withStates(targets); e.stopped() {
				return
			}
		}
		for _, t := range targets {
			if t.Completed {
				// Completing it again would change nothing.
				e.say("Task %d was already complete: %s.", t.ID, t.Title)
				e.setFocus(e.step, t)
				continue
			}
			e.queue(actComplete, toolCompleteTask, map[string]any{"task_id": t.ID})
		}
	case actDelete:
		if s.ref.kind == refAll && s.ref.status == "all" && len(targets) > 1 && !e.confirmedBefore(s, targets) {
			what := fmt.Sprintf("all %d of your tasks", len(targets))
			if len(s.ref.except) > 0 {
				what = fmt.Sprintf("these %d tasks", len(targets))
			}
			e.ask(question{act: actDelete, candidates: targets, confirm: true},
				fmt.Sprintf("That would delete %s:\n%s\nShould I? Say \"yes\" to delete them.", what, taskLines(targets)))
			return
		}
		for _, t := range targets {
			e.queue(actDelete, toolDeleteTask, map[string]any{"task_id": t.ID})
		}
	case actUpdate, actNote:
		e.actOnOne(s, targets)
	case actQuery:
		e.answerQuery(targets)
	}
}

// askIfDone asks whether to mark tasks complete that the person said
// they still have to finish: "yes" marks them, anything else leaves them.
func (e *executor) askIfDone(targets []listedTask) {
	what := "them"
	if len(targets) == 1 {
		what = "it"
	}
	e.ask(question{act: actComplete, candidates: targets, confirm: true},
		fmt.Sprintf("Should I mark %s as complete? Say \"yes\" if %s done; otherwise I'll leave %s open.",
			describeTargets(targets), map[bool]string{true: "it's", false: "they're"}[len(targets) == 1], what))
}

// describeTargets names tasks for a question: "task 3, Call mom", or
// "tasks 3 and 4".
func describeTargets(targets []listedTask) string {
	if len(targets) == 1 && targets[0].Title != "" {
		return fmt.Sprintf("task %d, %s,", targets[0].ID, targets[0].Title)
	}
	ids := make([]int64, len(targets))
	for i, t := range targets {
		ids[i] = t.ID
	}
	return taskNumbers(ids)
}

// confirmedBefore reports a request led by a yes that answers the
// question asking whether to do just that: "yes, delete everything" after
// "That would delete all 7 of your tasks. Should I?".
func (e *executor) confirmedBefore(s step, targets []listedTask) bool {
	q := e.mem.question
	if !s.confirmed || q == nil || !q.confirm || q.act != s.act || len(q.candidates) != len(targets) {
		return false
	}
	for i, t := range targets {
		if q.candidates[i].ID != t.ID {
			return false
		}
	}
	return true
}

// withStates returns targets known by number with their titles and
// states, from the list: "complete tasks 1 thru 4" says which of those
// were done already. A number no task has stays as it was, for the tool
// to say so.
func (e *executor) withStates(targets []listedTask) []listedTask {
	listed, ok := e.tasks()
	if !ok {
		return nil
	}
	out := make([]listedTask, len(targets))
	for i, t := range targets {
		if current, found := findTask(listed, t.ID); found {
			t = current
		}
		out[i] = t
	}
	return out
}

// actOnOne changes one task: its title, its description, or a note added
// to its description.
func (e *executor) actOnOne(s step, targets []listedTask) {
	if len(targets) > 1 {
		e.askWhich(question{act: s.act, title: s.title, desc: s.desc}, targets)
		return
	}
	t := targets[0]
	if s.act == actUpdate && s.title == "" && s.desc == "" {
		e.ask(question{act: actUpdate, candidates: targets, askValue: true},
			fmt.Sprintf(`What should task %d say instead? For example: "Change task %d to 'Call mom tonight'".`, t.ID, t.ID))
		return
	}
	args := map[string]any{"task_id": t.ID}
	if s.title != "" {
		args["title"] = s.title
	}
	desc := s.desc
	if s.act == actNote {
		listed, ok := e.tasks()
		if !ok {
			return
		}
		current, found := findTask(listed, t.ID)
		if !found {
			e.say("%s", taskNotFound(t.ID))
			return
		}
		if current.Description != "" {
			desc = current.Description + "; " + desc
		}
	}
	if desc != "" {
		args["description"] = desc
	}
	e.queue(s.act, toolUpdateTask, args)
}

// doFind answers a question about some tasks ("show me task 5", "do I
// have anything about the dentist?") with those tasks alone, read from
// the list, and makes them what the conversation is about: "delete it"
// next deletes the one found.
func (e *executor) doFind(s step) {
	listed, ok := e.tasks()
	if !ok {
		return
	}
	var found []listedTask
	var missing []int64
	if s.ref.kind == refIDs {
		for _, id := range s.ref.ids {
			if t, ok := findTask(listed, id); ok {
				found = append(found, t)
			} else {
				missing = append(missing, id)
			}
		}
		if len(found) > 0 {
			ids := make([]int64, len(found))
			for i, t := range found {
				ids[i] = t.ID
			}
			verb := "are"
			if len(ids) == 1 {
				verb = "is"
			}
			e.say("Here %s %s:", verb, taskNumbers(ids))
		}
	} else {
		found = matchTasks(listed, s.ref.words, false)
		if s.status != "all" {
			found = tasksWhere(found, func(t listedTask) bool { return t.Completed == (s.status == "completed") })
		}
		if len(found) == 0 {
			e.say("You have no %s matching %q.", map[string]string{"all": "task", "pending": "pending task", "completed": "completed task"}[s.status],
				strings.Join(s.ref.words, " "))
			return
		}
		e.say("You have %s matching %q:", plural(len(found), "task"), strings.Join(s.ref.words, " "))
	}
	if len(found) > 0 {
		e.say("%s", taskLines(found))
		e.setFocus(e.step, found...)
		e.shown = found
	}
	for _, id := range missing {
		e.say("%s", taskNotFound(id))
	}
}

// answerQuery says whether each task is done, from the task list.
func (e *executor) answerQuery(targets []listedTask) {
	listed, ok := e.tasks()
	if !ok {
		return
	}
	for _, t := range targets {
		current, found := findTask(listed, t.ID)
		switch {
		case !found:
			e.say("%s", taskNotFound(t.ID))
		case current.Completed:
			e.say("Yes — task %d, %s, is done.", current.ID, current.Title)
		default:
			e.say("Not yet — task %d, %s, is still open.", current.ID, current.Title)
		}
		if found {
			e.setFocus(e.step, current)
		}
	}
}

// doAnswer reads a bare reference ("the second one", "4", "both") as the
// answer to the question the last reply asked, or, with none open and an
// "and" or a "too", as more tasks for the last turn's change.
func (e *executor) doAnswer(s step) {
	q := e.mem.question
	if q == nil && s.continues && (e.mem.lastAct == actComplete || e.mem.lastAct == actDelete) {
		// "and the garage", "also task 3", "the bike one too": one more
		// for the change the last turn made.
		if s.ref.kind == refName {
			names, ok := e.namesTask(s)
			if !ok {
				return
			}
			if !names { // "and buy milk": no task of the list, maybe a new one
				e.doSuggest(s)
				return
			}
		}
		more := step{act: e.mem.lastAct, ref: s.ref, parts: s.parts}
		if targets, ok := e.resolve(more); ok {
			e.act(more, targets)
		}
		return
	}
	if q == nil || q.askTitle || q.askValue || (q.confirm && q.act == actAdd) {
		// No question takes tasks for an answer: words may be a task, and
		// tasks pointed at are asked about, never acted on by a guess.
		if s.ref.kind == refName {
			e.doSuggest(s)
		} else {
			e.askWhatToDo(s.ref)
		}
		return
	}
	// The answer names tasks among those the question listed.
	follow := step{act: q.act, ref: s.ref, title: q.title, desc: q.desc}
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

// namesTask reports whether a name said alone, or one of its parts,
// matches a task of the list: only then is it one more for the last
// change, for a guess at a task that cannot be undone is no guess to make.
// ok is false when the run must stop to list the tasks.
func (e *executor) namesTask(s step) (names, ok bool) {
	listed, ok := e.tasks()
	if !ok {
		return false, false
	}
	if len(matchTasks(listed, s.ref.words, false)) > 0 {
		return true, true
	}
	for _, p := range s.parts {
		if p.kind != refName || len(matchTasks(listed, p.words, false)) > 0 {
			return true, true
		}
	}
	return false, true
}

// doCorrect reads "no, I meant …": an open question is answered by what
// was meant; a task just added, or just renamed, gets the title meant;
// a completion or a deletion is made on the task meant, and the reply
// says the one made before stays made, for the tools cannot undo it.
func (e *executor) doCorrect(s step) {
	q, last, before := e.mem.question, e.mem.lastAct, withoutDeleted(e.mem.focus)
	switch {
	case q != nil && q.askTitle, q != nil && q.askValue:
		e.doSuggest(step{act: actSuggest, text: s.title})
	case q != nil:
		e.doAnswer(step{act: actAnswer, ref: s.ref, parts: s.parts, text: s.text})
	case (last == actAdd || last == actUpdate) && len(e.mem.focus) == 1 && len(before) == 1 && s.ref.kind != refIDs && s.title != "":
		e.act(step{act: actUpdate, title: s.title, desc: s.desc}, before)
	case (last == actComplete || last == actDelete) && s.ref.kind != refNone:
		e.redo(step{act: last, ref: s.ref, parts: s.parts})
	default: // no change to correct: what was meant, said alone
		text := s.title
		if text == "" {
			text = s.text
		}
		e.doAnswer(step{act: actAnswer, ref: s.ref, parts: s.parts, text: text})
	}
}

// doMeant carries out a request said as a correction ("no, I meant
// delete task 5") and says what became of the last change, which stays
// made: a no ("I meant keep it") after a change is told the change
// stands, never that the list was left as it was.
func (e *executor) doMeant(s step) {
	s.corrects = false
	last := withoutDeleted(e.mem.focus)
	if s.act == actNo {
		e.sawRefusal = true
		if e.mem.lastAct == 0 || len(e.mem.focus) == 0 {
			e.do(s)
			return
		}
		for _, t := range e.mem.focus {
			e.say("%s", stays(e.mem.lastAct, t))
		}
		return
	}
	e.do(s)
	if e.mem.lastAct != actAdd || e.stopped() || s.ref.kind != refIDs {
		return
	}
	for _, t := range last {
		if !containsID(s.ref.ids, t.ID) {
			e.say("Task %d, %s, that I added before is still on your list.", t.ID, t.Title)
		}
	}
}

// stays says that the change a turn made on t stays made.
func stays(a action, t listedTask) string {
	switch a {
	case actDelete:
		return fmt.Sprintf("Task %d, %s, stays deleted: I can't bring a deleted task back, but I can add it again.", t.ID, t.Title)
	case actComplete:
		return fmt.Sprintf("Task %d, %s, stays complete: I can't reopen a task.", t.ID, t.Title)
	}
	return fmt.Sprintf("Okay — task %d, %s, stays on your list as it is.", t.ID, t.Title)
}

func containsID(ids []int64, id int64) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// redo makes the last turn's completion or deletion on the tasks meant
// instead, and says what became of those it was made on: a task meant
// that it was made on already is said so, not acted on again.
func (e *executor) redo(s step) {
	targets, ok := e.resolve(s)
	if !ok {
		return
	}
	done := map[action]string{actDelete: "deleted", actComplete: "marked as complete"}[s.act]
	var fresh []listedTask
	for _, t := range targets {
		if before, again := findTask(e.mem.focus, t.ID); again {
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
		if _, meant := findTask(targets, t.ID); meant {
			continue
		}
		if s.act == actDelete {
			e.say("Task %d, %s, stays deleted: I can't bring a deleted task back, but I can add it again.", t.ID, t.Title)
		} else {
			e.say("Task %d, %s, stays complete: I can't reopen a task.", t.ID, t.Title)
		}
	}
}

// amongCandidates reads an answer naming tasks by words of their titles,
// or "all", among those the question listed. handled is false when the
// answer names none of them; targets is empty when it asked again.
func (e *executor) amongCandidates(s step, candidates []listedTask) ([]listedTask, bool) {
	switch {
	case s.ref.kind == refAll && s.ref.status == "all":
		return candidates, true
	case s.ref.kind == refOther:
		return e.otherThan(s, candidates), true
	case s.ref.kind != refName:
		return nil, false
	}
	matches := matchTasks(candidates, s.ref.words, true)
	switch {
	case len(matches) == 0:
		return nil, false
	case len(matches) > 1 && !s.ref.plural:
		e.askWhich(question{act: s.act, title: s.title, desc: s.desc}, matches)
		return nil, true
	}
	return matches, true
}

// doYes carries out what the last reply offered.
func (e *executor) doYes() {
	q := e.mem.question
	switch {
	case q == nil || q.askTitle || q.askValue:
		e.say(`Okay — what should I do? For example: "Add a task to buy groceries" or "What's pending?"`)
	case q.act == actAdd:
		e.doAdd(q.items)
	case len(q.candidates) == 1 || q.confirm:
		e.act(step{act: q.act, title: q.title, desc: q.desc}, q.candidates)
	default:
		e.askWhich(*q, q.candidates)
	}
}

// askAgain answers a yes said with a doubt: nothing is done, and the
// open question is asked again with what a "yes" would do.
func (e *executor) askAgain() {
	q := e.mem.question
	switch {
	case q == nil || q.askTitle || q.askValue || !q.confirm:
		e.doYes()
	case q.act == actAdd:
		e.ask(*q, fmt.Sprintf("I haven't added anything yet. A \"yes\" adds %q to your list; a \"no\" leaves it as it is.", q.items[0].title))
	default:
		e.ask(*q, fmt.Sprintf("I haven't changed anything yet. A \"yes\" would %s:\n%s\nSay \"yes\" to go ahead, or \"no\" to leave your list as it is.",
			actionVerbs[q.act], taskLines(q.candidates)))
	}
}

// refusedText answers a no: the list stays as it was, unless this
// message changed it before the no.
func (e *executor) refusedText() string {
	for _, q := range e.batch {
		if q.act != actList && q.line >= 0 {
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
func (e *executor) doSuggest(s step) {
	q, text := e.mem.question, s.text
	switch {
	case q != nil && q.askTitle:
		e.doAdd([]item{{title: text}})
	case q != nil && q.askValue:
		e.act(step{act: actUpdate, title: text}, q.candidates)
	case s.continues && e.mem.lastAct == actAdd:
		e.doAdd([]item{{title: text}})
	case !mayBeTask(splitWords(text)):
		e.say("Sorry, I'm not sure what you mean. %s", helpText)
	default:
		e.ask(question{act: actAdd, items: []item{{title: text}}, confirm: true},
			fmt.Sprintf("Should I add %q to your list? Say \"yes\" to add it.", text))
	}
}

// askWhich asks which task an action is for, listing the candidates.
func (e *executor) askWhich(q question, candidates []listedTask) {
	verb := actionVerbs[q.act]
	q.candidates = candidates
	if len(candidates) == 0 {
		e.ask(q, fmt.Sprintf("Which task should I %s? Tell me its number, like \"%s\", or a word from its title.", verb, fmt.Sprintf(actionExamples[q.act], 2)))
		return
	}
	e.ask(q, fmt.Sprintf("Which one should I %s?\n%s\nTell me its number, like \"%s\".", verb, taskLines(candidates), fmt.Sprintf(actionExamples[q.act], candidates[0].ID)))
}

// actionVerbs and actionExamples word the questions about each action.
var (
	actionVerbs = map[action]string{
		actComplete: "mark as complete", actDelete: "delete", actUpdate: "change", actNote: "add the note to", actQuery: "check",
	}
	actionExamples = map[action]string{
		actComplete: "Complete task %d", actDelete: "Delete task %d", actUpdate: "Change task %d to 'Call mom tonight'",
		actNote: "Task %d", actQuery: "Is task %d done?",
	}
)

// actionOnIt says what "yes" to a question about one task does.
var actionOnIt = map[action]string{
	actComplete: "mark it as complete", actDelete: "delete it", actUpdate: "change it", actNote: "add the note to it",
	actQuery: "check it",
}

// resolve finds the tasks a step's reference points at. When it cannot
// tell, it says so or asks, and returns false.
func (e *executor) resolve(s step) ([]listedTask, bool) {
	targets, ok := e.resolveRef(s)
	if !ok || len(s.ref.except) == 0 {
		return targets, ok
	}
	return e.leaveOut(s, targets)
}

// leaveOut takes the tasks a step's exceptions name out of its targets.
// An exception that names no task stops the step: acting on everything
// the person wanted kept would be the one wrong way to read them.
func (e *executor) leaveOut(s step, targets []listedTask) ([]listedTask, bool) {
	listed, ok := e.tasks()
	if !ok {
		return nil, false
	}
	out := map[int64]bool{}
	for _, x := range s.ref.except {
		switch x.kind {
		case refIDs:
			for _, id := range x.ids {
				if _, found := findTask(listed, id); !found {
					e.say("You have no task %d to leave out, so I left your list as it was.", id)
					return nil, false
				}
				out[id] = true
			}
		case refName:
			matches := matchTasks(listed, x.words, false)
			if len(matches) == 0 {
				e.say("I couldn't find a task matching %q to leave out, so I left your list as it was.", strings.Join(x.words, " "))
				return nil, false
			}
			for _, t := range matches {
				out[t.ID] = true
			}
		case refOrdinal, refFocus:
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
	kept := tasksWhere(targets, func(t listedTask) bool { return !out[t.ID] })
	if len(kept) == 0 {
		e.say("Leaving those out, there was nothing left to %s.", actionVerbs[s.act])
		return nil, false
	}
	return kept, true
}

// exceptAmongFocus reads an exception said by place or pronoun: "the
// last one" of "mark them all done except the last one" is a place in
// what the conversation is about, or in the list last shown. A pronoun
// can't leave out part of the tasks "them" already means.
func (e *executor) exceptAmongFocus(s step, x ref) ([]listedTask, bool) {
	if x.kind == refFocus && s.ref.kind == refFocus {
		return nil, false
	}
	focus := e.heldFocus()
	if x.kind == refOrdinal && len(focus) <= 1 && len(e.shown) > 1 {
		focus = e.shown
	}
	return pickFromFocus(focus, x)
}

// resolveRef finds the tasks a step's reference points at, exceptions
// aside.
func (e *executor) resolveRef(s step) ([]listedTask, bool) {
	r := s.ref
	switch r.kind {
	case refIDs:
		return idTasks(r.ids), true
	case refFocus, refOrdinal:
		if len(s.described) > 0 {
			if t, handled := e.describedTarget(s); handled || e.stopped() {
				return t, len(t) > 0
			}
		}
		if r.ofList && e.focusStep < 0 && !e.focusStepPending() && len(e.mem.focus) == 0 && len(e.shown) == 0 {
			return e.placeInList(s)
		}
		return e.resolveFocus(s)
	case refAll:
		return e.resolveAll(s)
	case refName:
		return e.resolveName(s)
	case refOther:
		focus, ok := e.currentFocus()
		if !ok {
			return nil, false
		}
		if len(focus) <= 1 && len(e.shown) > 1 {
			focus = e.shown
		}
		targets := e.otherThan(s, withoutDeleted(focus))
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
func (e *executor) describedTarget(s step) (targets []listedTask, handled bool) {
	listed, ok := e.tasks()
	if !ok {
		return nil, true
	}
	if matches := matchTasks(listed, s.described, true); len(matches) == 1 {
		return matches, true
	}
	if close := closestTasks(listed, s.described); len(close) == 1 && sharedWords(close[0], s.described) >= 2 {
		t := close[0]
		e.ask(question{act: s.act, title: s.title, desc: s.desc, candidates: close, confirm: true},
			fmt.Sprintf("Did you mean task %d, %s? Say \"yes\" if so.", t.ID, t.Title))
		return nil, true
	}
	if s.unread != nil {
		e.do(*s.unread)
	}
	return nil, false
}

// sharedWords counts the words of a name that a task's title holds.
func sharedWords(t listedTask, words []string) int {
	title, n := stems(titleWords(t.Title)), 0
	for _, q := range stems(words) {
		if containsAll(title, []string{q}) {
			n++
		}
	}
	return n
}

// otherThan reads "not the bank, the other one" among the tasks being
// chosen from: those the exception leaves. When one is left and "the
// other one" was said, it is meant; otherwise the ones left are asked
// about, and the ones left out are never offered.
func (e *executor) otherThan(s step, candidates []listedTask) []listedTask {
	out := map[int64]bool{}
	for _, x := range s.ref.except {
		switch x.kind {
		case refIDs:
			for _, id := range x.ids {
				out[id] = true
			}
		case refName:
			for _, t := range matchTasks(candidates, x.words, true) {
				out[t.ID] = true
			}
		}
	}
	left := tasksWhere(candidates, func(t listedTask) bool { return !out[t.ID] })
	q := question{act: s.act, title: s.title, desc: s.desc}
	switch {
	case len(left) == 0 || len(out) == 0:
		e.askWhich(q, candidates)
	case len(left) == 1 && s.ref.pointed:
		return left
	case len(left) == 1:
		t := left[0]
		q.candidates, q.confirm = left, true
		e.ask(q, fmt.Sprintf("Did you mean task %d, %s? Say \"yes\" if so.", t.ID, t.Title))
	case s.ref.plural && s.ref.pointed:
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
func (e *executor) resolveFocus(s step) ([]listedTask, bool) {
	focus, ok := e.currentFocus()
	if !ok {
		return nil, false
	}
	var targets []listedTask
	if s.ref.kind == refOrdinal && len(focus) <= 1 {
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
			e.askWhich(question{act: s.act, title: s.title, desc: s.desc}, withoutDeleted(focus))
			return nil, false
		}
	}
	if s.ref.kind == refFocus && s.ref.plural && len(focus) <= 1 && e.focusStep < 0 && len(e.mem.run) > 1 {
		// "both" or "them" after tasks added one message at a time: the
		// tasks of those messages.
		focus = e.mem.run
	}
	targets, ok = pickFromFocus(focus, s.ref)
	if !ok {
		e.askWhich(question{act: s.act, title: s.title, desc: s.desc}, withoutDeleted(focus))
		return nil, false
	}
	for _, t := range targets {
		if t.deleted {
			e.say("Task %d was deleted already.", t.ID)
		}
	}
	targets = withoutDeleted(targets)
	return targets, len(targets) > 0
}

// placeInList finds "the 3rd task" when the conversation has shown no
// list and done nothing yet: the task at that place in the whole list, in
// its order.
func (e *executor) placeInList(s step) ([]listedTask, bool) {
	listed, ok := e.tasks()
	if !ok {
		return nil, false
	}
	targets, ok := pickFromFocus(listed, s.ref)
	if !ok {
		e.say("You have %s, so I couldn't tell which one you meant. Tell me its number, like \"%s\".",
			plural(len(listed), "task"), fmt.Sprintf(actionExamples[s.act], 2))
	}
	if ok && s.ref.kind == refOrdinal && s.ref.index >= 0 && placesDiffer(listed, targets, s.ref.index) {
		e.askPlaceOrNumber(s, listed, targets)
		return nil, false
	}
	return targets, ok
}

// placesDiffer reports targets, from place i of listed on, whose numbers
// are not their places: once a task is deleted, "the 2nd task" may be the
// second in the list or task 2.
func placesDiffer(listed, targets []listedTask, i int) bool {
	for k, t := range targets {
		if t.ID != int64(i+k+1) {
			return true
		}
	}
	return false
}

// askPlaceOrNumber asks which task a place meant when the tasks at those
// places have other numbers: it lists those, and the tasks numbered as
// the places, when there are such.
func (e *executor) askPlaceOrNumber(s step, listed, targets []listedTask) {
	candidates := append([]listedTask(nil), targets...)
	for k := range targets {
		if t, found := findTask(listed, int64(s.ref.index+k+1)); found {
			if _, dup := findTask(candidates, t.ID); !dup {
				candidates = append(candidates, t)
			}
		}
	}
	e.ask(question{act: s.act, title: s.title, desc: s.desc, candidates: candidates},
		fmt.Sprintf("Your task numbers have gaps, so I'm not sure which you meant:\n%s\nWhich one should I %s? Tell me its number, like \"%s\".",
			taskLines(candidates), actionVerbs[s.act], fmt.Sprintf(actionExamples[s.act], candidates[0].ID)))
}

// pickFromFocus returns the tasks of focus a pronoun or an ordinal points
// at; ok is false when the reference does not fit the focus ("it" among
// three, "the fourth one" among two).
func pickFromFocus(focus []listedTask, r ref) ([]listedTask, bool) {
	switch {
	case len(focus) == 0:
		return nil, false
	case r.kind == refOrdinal:
		n := max(r.count, 1)
		i := r.index
		if i < 0 {
			i = len(focus) - n
		}
		if i < 0 || i+n > len(focus) {
			return nil, false
		}
		return focus[i : i+n], true
	case r.count == 2 && len(focus) != 2, !r.plural && len(focus) > 1:
		return nil, false
	}
	return focus, true
}

// askWhatToDo answers a reference said alone when no question is open
// ("the second one", "all of them", "3"): it says which tasks those are
// and asks what to do, so that "delete them" next acts on them.
func (e *executor) askWhatToDo(r ref) {
	var targets []listedTask
	switch r.kind {
	case refIDs:
		targets = idTasks(r.ids)
	case refFocus, refOrdinal:
		focus, ok := e.currentFocus()
		if !ok {
			return
		}
		targets, _ = pickFromFocus(focus, r)
	}
	e.say("%s", whatToDoText(targets))
	if len(targets) > 0 {
		e.setFocus(e.step, targets...)
	}
}

func whatToDoText(targets []listedTask) string {
	switch {
	case len(targets) == 0:
		return `What should I do? For example: "Mark task 3 as complete", "Delete task 3" or "What's pending?"`
	case targets[0].Title == "": // known by number only
		ids := make([]int64, len(targets))
		for i, t := range targets {
			ids[i] = t.ID
		}
		return fmt.Sprintf("What should I do with %s? For example: \"Mark task %d as complete\" or \"Delete task %d\".", taskNumbers(ids), ids[0], ids[0])
	case len(targets) == 1:
		return fmt.Sprintf("What should I do with task %d, %s? For example: \"Mark it as complete\" or \"Delete it\".", targets[0].ID, targets[0].Title)
	}
	return fmt.Sprintf("What should I do with these %d tasks?\n%s\nFor example: \"Mark them as complete\" or \"Delete them\".", len(targets), taskLines(targets))
}

// resolveAll reads "everything", "all my completed tasks": completing
// everything means every open task.
func (e *executor) resolveAll(s step) ([]listedTask, bool) {
	listed, ok := e.tasks()
	if !ok {
		return nil, false
	}
	status := s.ref.status
	if s.act == actComplete && status == "all" {
		status = "pending"
	}
	var out []listedTask
	for _, t := range listed {
		if status == "all" || (status == "completed") == t.Completed {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		e.say("%s", nothingToDo(s.act, status))
		return nil, false
	}
	return out, true
}

func nothingToDo(a action, status string) string {
	what := map[string]string{"all": "no tasks", "pending": "no open tasks", "completed": "no completed tasks"}[status]
	return fmt.Sprintf("You have %s, so there was nothing to %s.", what, actionVerbs[a])
}

// resolveName finds the task whose title holds the words said. Several
// matches are asked about, unless the person said "all"; completing
// prefers the one that is still open.
func (e *executor) resolveName(s step) ([]listedTask, bool) {
	listed, ok := e.tasks()
	if !ok {
		return nil, false
	}
	r := s.ref
	matches := matchTasks(listed, r.words, r.deed)
	if len(matches) == 0 && r.deed && len(r.words) > 1 {
		matches = matchTasks(listed, r.words[1:], true)
	}
	if len(matches) > 1 && s.act == actComplete {
		if open := openTasks(matches); len(open) == 1 {
			matches = open
		}
	}
	switch {
	case len(matches) == 0 && len(s.parts) > 1:
		return e.resolveParts(s)
	case len(matches) == 0:
		e.notFound(s, listed)
		return nil, false
	case len(matches) > 1 && !r.plural:
		q := question{act: s.act, title: s.title, desc: s.desc, candidates: matches}
		e.ask(q, fmt.Sprintf("%d tasks match %q:\n%s\nWhich one should I %s? Tell me its number, like \"%s\".",
			len(matches), strings.Join(r.words, " "), taskLines(matches), actionVerbs[s.act], fmt.Sprintf(actionExamples[s.act], matches[0].ID)))
		return nil, false
	}
	return matches, true
}

// idTasks are the tasks numbered ids, known by number only.
func idTasks(ids []int64) []listedTask {
	out := make([]listedTask, len(ids))
	for i, id := range ids {
		out[i] = listedTask{ID: id}
	}
	return out
}

func openTasks(ts []listedTask) []listedTask {
	return tasksWhere(ts, func(t listedTask) bool { return !t.Completed })
}

func findTask(ts []listedTask, id int64) (listedTask, bool) {
	for _, t := range ts {
		if t.ID == id {
			return t, true
		}
	}
	return listedTask{}, false
}

func taskLines(ts []listedTask) string {
	lines := make([]string, len(ts))
	for i, t := range ts {
		lines[i] = taskLine(t)
	}
	return strings.Join(lines, "\n")
}

func taskNumbers(ids []int64) string {
	if len(ids) == 1 {
		return fmt.Sprintf("task %d", ids[0])
	}
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprint(id)
	}
	return "tasks " + strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// resolveParts resolves "the report and the dentist" part by part.
func (e *executor) resolveParts(s step) ([]listedTask, bool) {
	var out []listedTask
	seen := map[int64]bool{}
	for _, p := range s.parts {
		part := s
		part.ref, part.parts = p, nil
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
func (e *executor) notFound(s step, listed []listedTask) {
	phrase := strings.Join(s.ref.words, " ")
	close := closestTasks(listed, s.ref.words)
	if len(close) != 1 {
		e.say("I couldn't find a task matching %q — want to see your list?", phrase)
		return
	}
	t := close[0]
	e.ask(question{act: s.act, title: s.title, desc: s.desc, candidates: close, confirm: true},
		fmt.Sprintf("I couldn't find a task matching %q. Did you mean task %d, %s? Say \"yes\" and I'll %s.", phrase, t.ID, t.Title, actionOnIt[s.act]))
}
