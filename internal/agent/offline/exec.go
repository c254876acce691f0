package offline

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/agent/offline/grammar"
	"github.com/taskchat/taskchat/internal/agent/offline/results"
)

// memory is what earlier turns left for this one.
type memory struct {
	focus    []results.Task // what "it", "them" and "the second one" mean
	question *question
	lastAct  grammar.Action // what the last change was: an add, a delete...
	shown    []results.Task // the last list shown, in its order
	run      []results.Task // see reading.changeRun
	offers   []*question    // the last reply's offers of a change: "yes" takes them all
	cutShort *executor      // the run of the request the last turn stopped at a limit
}

// question is what the assistant asked and waits an answer to.
type question struct {
	act         grammar.Action // what the answer lets it do
	title, desc string         // ActUpdate: the new title and description; ActNote: the note
	candidates  []results.Task // the tasks to choose among, or, when confirm, to act on
	items       []grammar.Item // ActAdd: the tasks it offered to add
	confirm     bool           // a yes-or-no question
	asksText    bool           // it asked what the task should say (ActAdd), or say instead (ActUpdate)
	ifDone      bool           // ActComplete: it asked whether tasks are done, or still to do
}

// executor runs one message's steps against the turn's tool rounds. The
// model keeps no state, so it runs them from the start on every model call
// of a turn, reading the rounds made: calls no round holds yet are sent.
type executor struct {
	mem     memory
	turn    int             // the turn whose request it carries out (see reading.play)
	rounds  []results.Round // the rounds this turn has made so far
	next    int             // the first round not yet read
	firstID int             // the number of the first call sent; 0 when replaying an earlier turn

	batch       []queued // calls for the round being built
	listing     []results.Task
	fresh       bool // listing reflects every change queued so far
	partial     bool // listing is the first page of more
	lines       []string
	focus       []results.Task
	focusStep   int            // the step that set focus
	shown       []results.Task // see memory.shown
	question    *question
	offers      []*question     // see memory.offers
	offerLine   int             // the line of the offer to add that question is, or -1
	unkeptSaid  map[string]bool // see results.UnkeptNote
	step        int
	sent        *agent.Response // the round to send: the run stops there
	broken      bool            // a round did not hold the calls expected
	sawRefusal  bool            // the person said no
	lastAct     grammar.Action  // the last change made
	made        map[string]bool // the deletes and completions queued, by tool and task
	quietRounds int             // the first rounds, said by the stopped turn this one carries on
}

// queued is a call waiting in the batch, and where its outcome goes.
type queued struct {
	call results.Planned
	line int // the reply line it fills; -1 for a lookup listing only
	step int
	act  grammar.Action
	// lookup marks a listing the steps read the task list from, a page a
	// round, to its end unless firstPage; listed holds the pages read.
	lookup, firstPage bool
	listed            []results.Task
}

// nextPage is the call that reads the page after out, if q reads on.
func nextPage(q queued, out results.Outcome) (queued, bool) {
	if !q.lookup || q.firstPage || out.Error != "" || out.NextCursor == "" {
		return queued{}, false
	}
	q.call.Args = maps.Clone(q.call.Args)
	q.call.Args["cursor"] = out.NextCursor
	q.listed = append(q.listed[:len(q.listed):len(q.listed)], out.Tasks...)
	return q, true
}

// run carries out steps until they are done or a round must be sent.
func (e *executor) run(steps []grammar.Step) {
	for i, s := range steps {
		e.step = i
		e.do(s)
		if e.stopped() {
			return
		}
	}
	e.flush()
	// Rounds the steps did not ask for were made for another reading.
	if !e.stopped() && e.next < len(e.rounds) {
		e.broken = true
	}
}

func (e *executor) stopped() bool { return e.sent != nil || e.broken }

func (e *executor) say(format string, args ...any) {
	e.lines = append(e.lines, e.fill(fmt.Sprintf(format, args...)))
}

// ask adds a question to the reply and remembers it for the next message.
func (e *executor) ask(q question, text string) {
	e.question, e.offerLine = &q, -1
	if q.confirm {
		e.offers = append(e.offers, &q)
	}
	e.lines = append(e.lines, e.fill(text))
}

// queue adds a call to the batch; its outcome will fill a reply line. A
// deletion or completion is queued once ("delete task 3 and remove it").
func (e *executor) queue(a grammar.Action, tool string, args map[string]any) {
	if id, ok := args["task_id"].(int64); ok && (tool == results.ToolDeleteTask || tool == results.ToolCompleteTask) {
		key := fmt.Sprintf("%s %d", tool, id)
		if e.made[key] {
			return
		}
		e.made[key] = true
	}
	e.lines = append(e.lines, "")
	e.fresh = e.fresh && tool == results.ToolListTasks
	e.batch = append(e.batch, queued{call: results.Planned{Tool: tool, Args: args}, line: len(e.lines) - 1, step: e.step, act: a})
}

// flush ends the batch: it reads the round that holds it, or sends it.
func (e *executor) flush() {
	for len(e.batch) > 0 {
		if e.next >= len(e.rounds) {
			e.sent = &agent.Response{}
			for i, q := range e.batch {
				if e.firstID > 0 {
					e.sent.ToolCalls = append(e.sent.ToolCalls, q.call.Call(e.firstID+i))
				}
			}
			return
		}
		round := e.rounds[e.next]
		e.next++
		// A round that holds the first calls of the batch only was cut
		// short at a limit: the rest of the batch goes on to the next.
		held := len(round.Calls)
		made := func(q queued, c agent.ToolCall) bool { return q.call.Holds(c) }
		if held == 0 || held > len(e.batch) || !slices.EqualFunc(e.batch[:held], round.Calls, made) {
			e.broken = true
			return
		}
		batch, rest := e.batch[:held], e.batch[held:]
		e.batch = append([]queued(nil), rest...)
		for i, q := range batch {
			out := round.Outcome(round.Calls[i])
			if next, more := nextPage(q, out); more {
				e.batch = append(e.batch, next)
				continue
			}
			out.Tasks = append(q.listed, out.Tasks...)
			e.record(q, out, round.Calls[i])
			if e.next <= e.quietRounds && q.line >= 0 {
				e.lines[q.line] = "" // said by the turn that made it
			}
		}
	}
}

func (e *executor) record(q queued, out results.Outcome, call agent.ToolCall) {
	if q.lookup {
		// A first page of more is no whole list: what needs one reads on.
		e.listing, e.fresh = out.Tasks, out.Error == "" && (!q.firstPage || out.NextCursor == "")
		e.partial = q.firstPage && out.NextCursor != ""
	}
	if q.line < 0 {
		if out.Error != "" {
			e.say("%s", results.Sentence(out.Error))
		}
		return
	}
	e.lines[q.line] = results.ConfirmCall(call, out)
	if out.Error != "" {
		return
	}
	if _, titled := q.call.Args["title"]; titled && (q.act == grammar.ActAdd || q.act == grammar.ActUpdate) {
		if note := results.UnkeptNote(out.Title, e.unkeptSaid); note != "" {
			e.lines[q.line] += " " + note
		}
	}
	switch q.act {
	case grammar.ActList:
		e.setFocus(q.step, out.Tasks...)
		e.shown = out.Tasks
	case grammar.ActComplete, grammar.ActDelete, grammar.ActAdd, grammar.ActUpdate, grammar.ActNote:
		e.lastAct = q.act
		e.setFocus(q.step, results.Task{ID: out.TaskID, Title: out.Title, Completed: q.act == grammar.ActComplete, Deleted: q.act == grammar.ActDelete})
		if q.act == grammar.ActDelete {
			e.shown = slices.Clone(e.shown) // maybe an earlier turn's
			if i := slices.IndexFunc(e.shown, func(t results.Task) bool { return t.ID == out.TaskID }); i >= 0 {
				e.shown[i].Deleted = true
			}
		}
	}
}

// setFocus makes tasks what the conversation is about: a step's add up.
func (e *executor) setFocus(step int, tasks ...results.Task) {
	if step != e.focusStep {
		e.focus, e.focusStep = nil, step
	}
	e.focus = append(e.focus, tasks...)
}

// tasks returns the task list after every change said so far; ok is
// false when the run must stop here or the list could not be read.
func (e *executor) tasks() ([]results.Task, bool) { return e.list(false) }

// list is tasks, or with firstPage its first page only, enough to look up
// a few tasks by number; e.partial says there are more.
func (e *executor) list(firstPage bool) ([]results.Task, bool) {
	if e.fresh {
		return e.listing, true
	}
	if n := len(e.batch); !firstPage && n > 0 && e.batch[n-1].act == grammar.ActList && reflect.DeepEqual(e.batch[n-1].call, results.ListCall("all")) {
		// Listing every task is already the batch's last call: it is read
		// whole and serves both.
		e.batch[n-1].lookup = true
	} else {
		e.batch = append(e.batch, queued{call: results.ListCall("all"), line: -1, step: e.step, lookup: true, firstPage: firstPage})
	}
	e.flush()
	if e.stopped() || !e.fresh && !e.partial {
		return nil, false
	}
	return e.listing, true
}

// currentFocus is heldFocus once the calls queued are made.
func (e *executor) currentFocus() ([]results.Task, bool) {
	if e.focusPending() {
		e.flush()
	}
	return e.heldFocus(), !e.stopped()
}

// heldFocus is what this message did so far, else what earlier turns left.
func (e *executor) heldFocus() []results.Task {
	if e.focusStep >= 0 {
		return e.focus
	}
	return e.mem.focus
}

func (e *executor) focusPending() bool {
	return slices.ContainsFunc(e.batch, func(q queued) bool { return q.line >= 0 })
}

// fill names tasks the conversation knows in text's examples: those this
// turn listed, or else those it showed or is about, still there.
func (e *executor) fill(text string) string {
	if !strings.Contains(text, grammar.AnyTask) {
		return text
	}
	for _, tasks := range [][]results.Task{e.listing, e.shown, e.focus, e.mem.focus} {
		if known := results.WithoutDeleted(tasks); len(known) > 0 {
			return results.FillExamples(text, known)
		}
	}
	return results.FillExamples(text, nil)
}
