package grammar

import (
	"slices"
	"strings"

	"github.com/taskchat/taskchat/internal/agent/offline/slots"
	"github.com/taskchat/taskchat/internal/agent/offline/words"
)

// Answers to what the assistant asked, and yes and no said with more
// words: "yes do it", "ok? no wait", "no, keep them".

// takenBack reads each no said after a request ("delete task 3, no wait"):
// it takes back the request just before it that still stands, or, said
// so ("no, neither"), every one. Tasks named alone right after it
// ("complete task 3, no, task 4") are what that request meant.
func takenBack(steps []Step) []Step {
	var out []Step
	var taken Action // what the no just before took back
	for i, s := range steps {
		if s.Act != ActNo || s.Bearing == Correcting {
			if (taken == ActComplete || taken == ActDelete) && namesTaskAlone(s) {
				s = Step{Act: taken, Ref: s.Ref, Parts: s.Parts}
			}
			out, taken = append(out, s), 0
			continue
		}
		if !slices.ContainsFunc(out, func(o Step) bool { return o.Act != ActNo }) {
			if i+1 == len(steps) || len(out) == 0 {
				out = append(out, s) // a no with nothing to take back answers
			}
			taken = 0
			continue
		}
		back := len(out) - 1
		for out[back].Act == ActNo {
			back--
		}
		taken = out[back].Act
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

// namesTaskAlone reports a bare reference that plainly points at a task
// ("just 4", "the garage"), not words that may be one to add ("buy milk").
func namesTaskAlone(s Step) bool {
	ws := words.Split(strings.ToLower(s.Text))
	return s.Act == ActAnswer && (s.Ref.Kind == slots.RefIDs || s.Ref.Kind == slots.RefName && len(ws) > 0 && refLeads[ws[0].Low])
}

// doubtingYes reads a yes said with a doubt ("yes? what would that do"):
// it only asks again. A yes followed by a no ("ok? no wait") is dropped.
func doubtingYes(text string, steps []Step) []Step {
	yes := slices.IndexFunc(steps, func(s Step) bool { return s.Act == ActYes })
	if yes < 0 {
		return steps
	}
	if slices.ContainsFunc(steps[yes+1:], func(s Step) bool { return s.Act == ActNo }) {
		return slices.Delete(slices.Clone(steps), yes, yes+1)
	}
	if !doubted(text) {
		return steps
	}
	out := slices.Clone(steps[:yes+1])
	if m := out[yes].Mood; m == StillToDo || m == StillToDoAlone {
		out[yes].Mood = StillToDoAlone // a modal alone asks again too
	} else {
		out[yes].Mood = Doubtfully
	}
	return out
}

// doubted reports a message whose first sentence that reads as a yes is
// asked, or followed by a question or a hesitation.
func doubted(text string) bool {
	sentences := words.Sentences(text)
	i := slices.IndexFunc(sentences, func(sentence string) bool {
		s, ok := readAlone(sentence)
		return ok && s.Act == ActYes
	})
	switch {
	case i < 0:
		return false
	case strings.HasSuffix(strings.TrimSpace(sentences[i]), "?"):
		return true
	}
	return slices.ContainsFunc(sentences[i+1:], func(later string) bool {
		lw := words.TrimPunctuation(words.Split(later))
		return len(lw) > 0 && (strings.HasSuffix(strings.TrimSpace(later), "?") || hesitations[lw[0].Low])
	})
}

// yesExcept reads words that leave tasks out, alone or after a yes
// ("except the bike", "sure, but not task 3"): all the tasks offered but
// those (see executor.offerAllBut).
func yesExcept(ws []words.Word) (Step, bool) {
	ws = words.TrimPunctuation(ws)
	k := words.LongestPhrase(exceptionWords, ws, 0)
	if k == 0 || k == 1 && ws[0].Low == "but" { // "yes but delete task 5"
		return Step{}, false
	}
	return Step{Act: ActAnswer, Ref: slots.Ref{Kind: slots.RefOther, Except: slots.ExceptionRefs(ws[k:]), Plural: true}}, true
}

// stillToDo reports a modal with no task of its own: "I have to", "gotta
// do it today".
func stillToDo(ws []words.Word) bool {
	n := words.LongestPhrase(modals, ws, 0)
	return n > 0 && allIn(ws[n:], modalTails)
}

// parseAnswer reads a clause led by a yes or a no, which decides unless
// what follows is a request ("yes delete them") or, after a pause, an
// answer ("yes, the second one"). Without the pause a no starts a phrase:
// "no need to delete task 3".
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
	case rest.Bearing == Correcting: // "no, I meant keep it"
		return rest, true
	case rest.Act == ActChatter || rest.Act == ActYes || rest.Act == ActNo:
		if no > yes {
			return Step{Act: ActNo}, true
		}
		return Step{Act: ActYes}, rest.Act != ActNo
	case rest.Act == ActReply || rest.Act == ActSuggest:
		return Step{}, false
	case no > yes && rest.Act == ActAnswer && continues(ws[n:]):
		return Step{Act: ActNo}, true // "no, and task 4 too" names none to act on
	case rest.Act == ActAnswer || no > yes:
		return rest, paused
	}
	rest.Bearing = Confirming
	return rest, true
}
