package grammar

import (
	"github.com/taskchat/taskchat/internal/agent/offline/slots"
	"github.com/taskchat/taskchat/internal/agent/offline/words"
)

// What is said around a request without being one: a reason ("because I
// sold it"), a remark ("all sorted"), a topic ("the bike, delete it").

// stateRemark reports a few words on how things stand, with no verb and
// no task: "all done", "that's all good". After a request they say it is
// all there is, not that every task is done.
func stateRemark(ws []words.Word) bool {
	ws = words.TrimPunctuation(ws)
	for len(ws) > 0 && (ws[len(ws)-1].Low == "" || remarkTails[ws[len(ws)-1].Low]) {
		ws = ws[:len(ws)-1]
	}
	_, ok := stateRemarkPattern.Match(ws)
	return ok
}

var stateRemarkPattern = words.CompilePattern("and|so|oh? it|its|that|i'm|im|we're|i_am|we_are|everything? all? " +
	"@done|good|set|fine|ok|okay|clear|good_to_go|squared_away|all_good|all_set")

// continues reports a clause that starts "and", "also" or "plus", or ends
// "too", "also" or "as well".
func continues(ws []words.Word) bool {
	ws = words.TrimPunctuation(ws)
	n := len(ws)
	return n > 0 && (continuing[ws[0].Low] || ws[n-1].Low == "too" || ws[n-1].Low == "also" ||
		n > 1 && ws[n-2].Low == "as" && ws[n-1].Low == "well")
}

// aboutIt reads an unread clause said before a request about "it": the
// tasks it names ("the dentist one, mark it done"), or, before a change,
// a statement whose words may describe the task ("I won't be booking the
// table at Luigi's after all, remove it"; see executor.describedTarget).
func aboutIt(sentence string, before []words.Word, s Step) (topic slots.Ref, described []string) {
	if len(before) == 0 || s.Ref.Kind != slots.RefFocus || s.Ref.Count != 0 {
		return slots.Ref{}, nil
	}
	if _, ok := parseWords(sentence, before, false); ok {
		return slots.Ref{}, nil
	}
	ws := trimClause(before)
	if t := words.StripLeading(ws, topicLeads); len(t) >= 2 && (TopicStarts[t[0].Low] || slots.TaskRefAt(t, 0) != 0) {
		if r := slots.ParseRef(t); r.Kind == slots.RefName || r.Kind == slots.RefIDs {
			return r, nil
		}
	}
	if s.Ref.Plural || !changes(s) || s.Act == ActAdd || len(ws) == 0 || !saysNews(ws[0].Low) {
		return slots.Ref{}, nil
	}
	if r := slots.NameRef(ws); len(r.Words) >= 2 {
		return slots.Ref{}, r.Words
	}
	return slots.Ref{}, nil
}

// deedTopic reports a deed ("I moved the dentist appointment") said just
// before a change other than a completion about "it" ("update it").
func deedTopic(prev, s Step, before []words.Word) bool {
	return len(before) > 0 && prev.Act == ActComplete && prev.Ref.Deed && s.Ref.Kind == slots.RefFocus &&
		!s.Ref.Plural && s.Ref.Count == 0 && changes(s) && s.Act != ActComplete && s.Act != ActAdd
}

// saysNews reports the first word of a statement ("I won't…", "had the
// meeting scheduled"), not of an order, which may be a task.
func saysNews(first string) bool {
	return slots.NotATaskStart[first] || slots.IsPastTense(first) || first == "had" || first == "got"
}

// asideAt reports a reason from ws[i] on: "because it's done", ", its
// done anyway".
func asideAt(ws []words.Word, i int) bool {
	return reasonWords[ws[i].Low] || ws[i].Low == "," && i+1 < len(ws) &&
		(reasonWords[ws[i+1].Low] || asideStarts[ws[i+1].Low] && asideEnds[ws[len(ws)-1].Low])
}

// asideEnd returns where a reason that starts at ws[i] ends: before a
// connector and a request ("…, and add buy a helmet") or more tasks for
// the request before it ("… and task 7", where more is true), or at the
// end of the sentence.
func asideEnd(sentence string, ws []words.Word, i int) (end int, more bool) {
	for j := i + 1; j < len(ws); j++ {
		next := afterConnectors(ws, j)
		if next == j || connectors[ws[j-1].Low] {
			continue
		}
		if next == len(ws) {
			break
		}
		if moreTasks(sentence, ws[next:]) {
			return j, true
		}
		if startsRequest(sentence, ws[next:]) && !aboutFocus(sentence, ws[next:]) {
			return j, false
		}
	}
	return len(ws), false
}

// moreTasks reports words, up to the next connector, that only point at
// tasks: numbers ("task 7"), or "the" or "my" and one or two words ("the
// garage one too"); "the new one is better" goes on with the reason.
func moreTasks(sentence string, ws []words.Word) bool {
	ref := trimClause(toConnector(ws))
	s, ok := parseWords(sentence, ref, true)
	switch {
	case !ok || s.Act != ActAnswer:
		return false
	case s.Ref.Kind == slots.RefIDs:
		return true
	}
	if s.Ref.Kind != slots.RefName || !refLeads[ref[0].Low] {
		return false
	}
	words := ref[1:]
	if n := len(words); n > 1 && (words[n-1].Low == "one" || words[n-1].Low == "task") {
		words = words[:n-1]
	}
	return len(words) <= 2
}

// aboutFocus reports a request about "it" up to the next connector: after
// a reason ("because it's done and I don't need it") it goes on with it.
func aboutFocus(sentence string, ws []words.Word) bool {
	s, ok := parseWords(sentence, toConnector(ws), false)
	return ok && s.Ref.Kind == slots.RefFocus
}
