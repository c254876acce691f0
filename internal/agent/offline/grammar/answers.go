package grammar

import (
	"strings"

	"github.com/taskchat/taskchat/internal/agent/offline/lexicon"
	"github.com/taskchat/taskchat/internal/agent/offline/slots"
	"github.com/taskchat/taskchat/internal/agent/offline/words"
)

// This file reads answers to what the assistant asked, and yes and no
// said with more words: "yes do it", "ok? no wait", "no, keep them".

// takenBack reads the no's said after requests in the same message
// ("delete task 3, no wait", "delete task 3. no, keep it"), in order:
// each takes back the request just before it that still stands, which is
// never done, and a no that says so ("no, neither", "no, forget all of
// that") takes back every one; the requests before stand ("add buy milk,
// delete task 3, no wait" adds the milk). What follows a no is what the
// person asks instead ("no wait, delete task 4"); tasks named alone
// right after it ("complete task 3, no, task 4") are what the completion
// or deletion it took back was meant for.
func takenBack(steps []Step) []Step {
	var out []Step
	var taken *Step // what the no just before took back
	for i, s := range steps {
		if s.Act != ActNo || s.Bearing == Correcting {
			if taken != nil && (taken.Act == ActComplete || taken.Act == ActDelete) && namesTaskAlone(s) {
				s = Step{Act: taken.Act, Ref: s.Ref, Parts: s.Parts}
			}
			out, taken = append(out, s), nil
			continue
		}
		requests := 0
		for _, o := range out {
			if o.Act != ActNo {
				requests++
			}
		}
		if requests == 0 {
			if i+1 == len(steps) || len(out) == 0 {
				out = append(out, s) // a no with nothing to take back answers
			}
			taken = nil
			continue
		}
		back := len(out) - 1
		for out[back].Act == ActNo {
			back--
		}
		t := out[back]
		taken = &t
		if s.Bearing == TakingBackAll {
			out = nil
		} else {
			out = append(out[:back:back], out[back+1:]...)
		}
		if i+1 == len(steps) {
			if len(out) > 0 {
				s.Text = "Okay, I left out what you took back."
			}
			out = append(out, s)
		}
	}
	return out
}

// widens reports a no that takes back more than the request just before
// it: "no, neither", "no, not those", "forget all of that", "none of it".
func widens(ws []words.Word) bool {
	for _, w := range ws {
		if widenWords[w.Low] {
			return true
		}
	}
	return false
}

var widenWords = lexicon.Words("widen words")

// namesTaskAlone reports a bare reference that plainly points at a task:
// numbers ("just 4", "task 5"), or a name said as one ("the garage").
// Other words ("buy milk") may be a task to add, and name none.
func namesTaskAlone(s Step) bool {
	if s.Act != ActAnswer {
		return false
	}
	ws := words.Split(strings.ToLower(s.Text))
	return s.Ref.Kind == slots.RefIDs || s.Ref.Kind == slots.RefName && len(ws) > 0 && refLeads[ws[0].Low]
}

// doubtingYes reads a yes said with a doubt: as a question ("ok?"), or
// followed by a question or a hesitation ("yes? what would that do",
// "yes. wait, which ones"). Such a yes does nothing but ask again, which
// answers what followed it; one
// followed by a no ("ok? no wait") is dropped, and the no decides.
func doubtingYes(text string, steps []Step) []Step {
	yes := -1
	for i, s := range steps {
		if s.Act == ActYes {
			yes = i
			break
		}
	}
	if yes < 0 {
		return steps
	}
	for _, s := range steps[yes+1:] {
		if s.Act == ActNo {
			return append(append([]Step(nil), steps[:yes]...), steps[yes+1:]...)
		}
	}
	if !doubted(text) {
		return steps
	}
	// What follows asks what the yes would do: asking again says so.
	out := append([]Step(nil), steps[:yes+1]...)
	out[yes].Mood = doubting(out[yes].Mood)
	return out
}

// doubted reports a message whose first sentence that reads as a yes is
// asked, or followed by a question or a hesitation.
func doubted(text string) bool {
	sentences := words.Sentences(text)
	for i, sentence := range sentences {
		ws := trimClause(words.TrimPunctuation(words.Split(sentence)))
		if s, ok := parseWords(sentence, ws, true); !ok || s.Act != ActYes {
			continue
		}
		if strings.HasSuffix(strings.TrimSpace(sentence), "?") {
			return true
		}
		for _, later := range sentences[i+1:] {
			lw := words.TrimPunctuation(words.Split(later))
			if len(lw) > 0 && (strings.HasSuffix(strings.TrimSpace(later), "?") || hesitations[lw[0].Low]) {
				return true
			}
		}
		return false
	}
	return false
}

// hesitations start what someone says when they are not sure yet.
var hesitations = lexicon.Words("hesitations")

// yesExcept reads words that leave tasks out, said alone or after a yes:
// "except the bike", "yes except the bike", "sure, but not task 3". They
// answer a question that offered
// a change on several tasks with all of them but those (see
// executor.offerAllBut); the words after the exception never name a
// task to act on.
func yesExcept(ws []words.Word) (Step, bool) {
	ws = words.TrimPunctuation(ws)
	k := words.LongestPhrase(exceptionWords, ws, 0)
	if k == 0 || k == 1 && ws[0].Low == "but" { // "yes but delete task 5"
		return Step{}, false
	}
	return Step{Act: ActAnswer, Ref: slots.Ref{Kind: slots.RefOther, Except: slots.ExceptionRefs(ws[k:]), Plural: true}}, true
}

// stillToDo reports a modal said with no task of its own: "I have to",
// "gotta do it", "I need to do it today". It says something is still to
// be done; what, the question before it said.
func stillToDo(ws []words.Word) bool {
	n := words.LongestPhrase(modals, ws, 0)
	if n == 0 {
		return false
	}
	for _, w := range ws[n:] {
		if !modalTails[w.Low] {
			return false
		}
	}
	return true
}

// modalTails may follow a modal that names no task: "gotta do it today".
var modalTails = lexicon.Words("modal tails")

// yesLeads and noLeads answer a question before saying more: "yes do it", "no, keep them".
var (
	yesLeads = lexicon.Phrases("yes leads")
	noLeads  = lexicon.Phrases("no leads")
)

// parseAnswer reads a clause led by a yes or a no: when what follows adds
// nothing ("yes do it", "yes thanks", "sure, go ahead", "no, keep
// them"), the yes or the no decides; what follows decides when it is a
// request of its own ("yes delete them"), or, after a pause, an answer
// ("yes, the second one", "nope, delete task 3"). Without the pause a no
// starts a phrase: "no need to delete task 3" deletes nothing.
func parseAnswer(sentence string, ws []words.Word, whole bool) (Step, bool) {
	yes, no := words.LongestPhrase(yesLeads, ws, 0), words.LongestPhrase(noLeads, ws, 0)
	n := max(yes, no)
	if n == 0 || n == len(ws) {
		return Step{}, false
	}
	paused := ws[n].Low == "," || ws[n].Low == "but" // "no but delete task 1"
	if s, ok := yesExcept(ws[n:]); ok && yes > no {
		return s, true
	}
	if stillToDo(trimClause(ws[n:])) {
		if no > yes { // "no, I have to": not done
			return Step{Act: ActNo}, true
		}
		return Step{Act: ActYes, Mood: StillToDo}, true
	}
	rest, ok := parseWords(sentence, ws[n:], whole)
	switch {
	case !ok:
		return Step{}, false
	case rest.Bearing == Correcting: // "no, I meant keep it": the correction decides
		return rest, true
	case rest.Act == ActChatter || rest.Act == ActYes || rest.Act == ActNo:
		if no > yes {
			return Step{Act: ActNo}, true
		}
		return Step{Act: ActYes}, rest.Act != ActNo
	case rest.Act == ActReply || rest.Act == ActSuggest:
		return Step{}, false
	case no > yes && rest.Act == ActAnswer && continues(ws[n:]):
		// "no, and task 4 too": the no goes for more tasks, and names
		// none to act on.
		return Step{Act: ActNo}, true
	case rest.Act == ActAnswer || no > yes:
		return rest, paused
	}
	rest.Bearing = Confirming
	return rest, true
}

// doubting is the mood of a yes said with a doubt: a modal alone asks
// again as a doubtful yes does.
func doubting(m Mood) Mood {
	if m == StillToDo || m == StillToDoAlone {
		return StillToDoAlone
	}
	return Doubtfully
}
