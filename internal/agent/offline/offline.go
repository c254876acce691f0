package offline

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/agent/offline/grammar"
	"github.com/taskchat/taskchat/internal/agent/offline/results"
)

const (
	wordsPerChunk = 3 // how many words each streamed piece of text holds
	memoryTurns   = 4 // how many earlier turns are searched for what "it" means
)

// Model is the offline agent.Model. Like a real model it keeps no state
// between calls: each answer is derived from the request's messages alone.
type Model struct {
	pace time.Duration // how long each streamed piece of text waits
}

// New returns the offline model.
func New() *Model { return &Model{} }

// NewPaced returns the offline model writing its replies a few words every
// pace, as a slow model would (OFFLINE_MODEL_PACE).
func NewPaced(pace time.Duration) *Model { return &Model{pace: pace} }

// Name identifies the offline model in logs and stored replies.
func (*Model) Name() string { return "offline" }

// Stream answers req deterministically, its text a few words at a time and
// its usage estimated, so token limits can be exercised offline.
func (m *Model) Stream(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
	if err := ctx.Err(); err != nil {
		return agent.Response{}, err
	}
	resp := respond(req.Messages)
	resp.Usage = agent.EstimateUsage(req, resp)
	if err := streamText(ctx, resp.Text, m.pace, onText); err != nil {
		// Cut short, as a client that leaves is: the usage counts all the
		// same, or leaving early would dodge the daily budget.
		return agent.Response{Usage: resp.Usage}, err
	}
	return resp, nil
}

// respond carries out the last user message: its next calls, or the reply.
func respond(msgs []agent.Message) agent.Response {
	turns := splitTurns(msgs)
	if len(turns) == 0 {
		return agent.Response{Text: results.FillExamples(grammar.HelpText, nil)}
	}
	r := &reading{turns: turns, read: map[int][]grammar.Step{}, recalled: map[[2]int]memory{}}
	last := len(turns) - 1
	mem := r.recall(last, 1)
	if mem.question == nil && len(mem.focus) == 1 {
		mem.run = r.changeRun(last, mem.lastAct)
	}
	firstID := 1 // numbered after the turn's calls so far, ids stay unique without any stored state
	for _, m := range msgs {
		firstID += len(m.ToolCalls)
	}
	e := r.play(last, mem, firstID)
	switch {
	case e.sent != nil:
		return *e.sent
	case e.broken:
		return agent.Response{Text: results.ConfirmRound(turns[last].rounds[len(turns[last].rounds)-1])}
	}
	if lines := slices.DeleteFunc(e.lines, func(l string) bool { return l == "" }); len(lines) > 0 {
		return agent.Response{Text: strings.Join(lines, "\n")}
	}
	return agent.Response{Text: e.fill(grammar.HelpText)}
}

// play carries out turn i's message over its rounds, remembering mem. A
// "continue" carries on a request stopped at a limit, saying what it adds.
func (r *reading) play(i int, mem memory, firstID int) *executor {
	steps, rounds, quiet, asked := r.steps(i), r.turns[i].rounds, 0, i
	carryOn := len(steps) == 1 && (steps[0].Act == grammar.ActContinue ||
		steps[0].Act == grammar.ActYes && steps[0].Mood == grammar.Plainly && mem.question == nil)
	if cut := mem.cutShort; cut != nil && carryOn {
		asked, mem = cut.turn, r.recall(cut.turn, 1)
		steps, quiet = r.steps(cut.turn), len(cut.rounds)
		rounds = append(slices.Clone(cut.rounds), rounds...)
	}
	e := &executor{mem: mem, turn: asked, rounds: rounds, firstID: firstID, quietRounds: quiet, focusStep: -1, offerLine: -1,
		shown: mem.shown, unkeptSaid: map[string]bool{}, made: map[string]bool{}}
	e.run(steps)
	return e
}

// turn is one user message, the tool rounds that followed it, and the
// reply that ended it, if any.
type turn struct {
	user, reply string
	rounds      []results.Round
}

func splitTurns(msgs []agent.Message) []turn {
	var turns []turn
	for i, m := range msgs {
		switch {
		case m.Role == agent.RoleUser:
			turns = append(turns, turn{user: m.Content})
		case len(turns) == 0:
		case m.Role == agent.RoleAssistant && len(m.ToolCalls) > 0:
			turns[len(turns)-1].rounds = append(turns[len(turns)-1].rounds, results.RoundAt(msgs, i))
		case m.Role == agent.RoleAssistant:
			turns[len(turns)-1].reply = m.Content
		}
	}
	return turns
}

// reading is one model call's reading of the conversation: each message,
// and each look back, is read once, so a call costs what its text is long.
type reading struct {
	turns    []turn
	read     map[int][]grammar.Step
	recalled map[[2]int]memory // by the turns looked back from, and depth
}

func (r *reading) steps(i int) []grammar.Step {
	if _, ok := r.read[i]; !ok {
		r.read[i] = grammar.Parse(r.turns[i].user)
	}
	return r.read[i]
}

// recall is what the turns before end left open: that of the newest that
// made calls, asked, pointed at tasks or was told no. Only the last reply's
// question is still open. depth bounds how far back each looks in turn.
func (r *reading) recall(end, depth int) (found memory) {
	key := [2]int{end, depth}
	if mem, ok := r.recalled[key]; ok {
		return mem
	}
	defer func() { r.recalled[key] = found }()
	for i := end - 1; i >= 0 && i >= end-memoryTurns; i-- {
		var before memory
		if depth > 0 {
			before = r.recall(i, depth-1)
		}
		e := r.play(i, before, 0)
		if e.broken {
			return memory{focus: results.LastTouched(r.turns[i].rounds)}
		}
		if e.question == nil && len(r.turns[i].rounds) == 0 && !e.sawRefusal && e.focusStep < 0 {
			continue
		}
		mem := memory{focus: e.focus, lastAct: e.lastAct, shown: e.shown}
		switch {
		case e.question != nil:
			if mem.focus = e.question.candidates; len(mem.focus) == 0 {
				mem.focus = e.heldFocus() // "delete" after a listing: which of those?
			}
			if i == end-1 {
				mem.question, mem.offers = e.question, e.offers
			}
		case e.sent != nil && i == end-1 && strings.Contains(r.turns[i].reply, agent.StoppedNote):
			// Stopped at a limit; a turn the person stopped is not.
			mem.cutShort = e
		}
		return mem
	}
	return memory{}
}

// changeRun is what the turns before end changed by act alone, oldest first:
// after "add walk the dog", "add feed the cat", "the first one" is the dog.
func (r *reading) changeRun(end int, act grammar.Action) []results.Task {
	var run []results.Task
	for i := end - 1; i >= 0 && i >= end-memoryTurns && act != 0; i-- {
		other := func(s grammar.Step) bool { return s.Act != act }
		if len(r.turns[i].rounds) == 0 || slices.ContainsFunc(r.steps(i), other) {
			break
		}
		e := r.play(i, r.recall(i, 0), 0)
		if e.broken || e.question != nil || e.lastAct != act || e.focusStep < 0 {
			break
		}
		run = append(slices.Clone(e.focus), run...)
	}
	return run
}

// streamText hands text to onText a few words at a time, pace apart; the
// pieces join back into text exactly. It stops when ctx is done.
func streamText(ctx context.Context, text string, pace time.Duration, onText func(string)) error {
	if text == "" || onText == nil {
		return ctx.Err()
	}
	pieces := strings.SplitAfter(text, " ")
	for i := 0; i < len(pieces); i += wordsPerChunk {
		if i > 0 && pace > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(pace):
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		onText(strings.Join(pieces[i:min(i+wordsPerChunk, len(pieces))], ""))
	}
	return nil
}
