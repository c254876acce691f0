package grammar

import (
	"slices"
	"strings"

	"github.com/taskchat/taskchat/internal/agent/offline/slots"
	"github.com/taskchat/taskchat/internal/agent/offline/words"
)

// The builders turn a line of the table that matched into a step; one
// may refuse the match ("what's the weather?" is no listing), and the
// next line tries.

// smallTalk reads a sentence, as written, of only thanks and goodbyes:
// "thank u so much!! 😊", "ok thanks, bye", "gotta go".
func smallTalk(c clause) (Step, bool) {
	if len(c.text) > maxSmallTalk {
		return Step{}, false
	}
	ws := words.Split(c.text)
	thanks, bye := false, leaving(ws)
	if bye {
		ws = nil
	}
	for _, w := range ws {
		switch {
		case thanksWords[w.Low]:
			thanks = true
		case byeWords[w.Low]:
			bye = true
		case !talkFiller[w.Low] && w.Low != "":
			return Step{}, false
		}
	}
	if thanks {
		return Step{Act: ActChatter, Text: welcomeText}, true
	}
	return Step{Act: ActChatter, Text: "Bye for now — your list will be here when you're back."}, bye
}

// maxSmallTalk is the longest sentence, in bytes, read as small talk.
const maxSmallTalk = 160

// leaving reports "gotta go", "I have to go now": leaving, not a task.
func leaving(ws []words.Word) bool {
	n := len(ws)
	for n > 0 && (ws[n-1].Low == "now" || ws[n-1].Low == "") {
		n--
	}
	return n >= 2 && n <= 6 && ws[n-1].Low == "go" && !slices.ContainsFunc(ws[:n-1], func(w words.Word) bool {
		return !leavingWords[w.Low] && !thanksWords[w.Low] && w.Low != "," && w.Low != ""
	})
}

// refusal reads "keep them" or "don't delete it" as a no; "keep the
// receipts" names a task, and may be one.
func refusal(c clause) (Step, bool) {
	r := slots.ParseRef(c.words("task"))
	return Step{Act: ActNo}, r.Kind != slots.RefNone && r.Kind != slots.RefName
}

// correction reads "no, I meant task 4" or "make that buy AA batteries":
// the task or title the last change meant; "I meant to call mom" is none.
func correction(c clause) (Step, bool) {
	ws := c.words("value")
	if !allIn(c.words("lead"), correctionLeads) || len(ws) == 0 || ws[0].Low == "to" {
		return Step{}, false
	}
	s := Step{Act: ActCorrect, Ref: slots.ParseRef(ws), Parts: slots.RefParts(ws), Text: words.CapitalizeFirst(slots.CleanText(c.raw("value")))}
	if added, _ := add(clause{text: c.text, ws: c.ws, caps: words.Captures{"items": c.caps["value"]}}); len(added.Items) == 1 {
		s.Title, s.Desc = added.Items[0].Title, added.Items[0].Description
	}
	return s, true
}

// meantRequest reads a correction that is a request of its own ("no, I
// meant delete it"), never made a title.
func meantRequest(value string) (Step, bool) {
	r, ok := readAlone(value)
	r.Bearing = Correcting
	return r, ok && !slices.Contains([]Action{ActAdd, ActAnswer, ActSuggest, ActReply, ActChatter, ActYes, ActCorrect}, r.Act)
}

// onTask reads a request about the tasks in the {task} slot.
func onTask(a Action) func(clause) (Step, bool) {
	return func(c clause) (Step, bool) {
		ws := c.words("task")
		r, parts := slots.ParseRef(ws), slots.RefParts(ws)
		if r.Kind == slots.RefName && parts == nil && slots.TaskRefAt(ws, 0) > 0 && ws[0].Low != "the" {
			// "task 5 can be marked": another line reads the rest.
			return Step{}, false
		}
		return Step{Act: a, Ref: r, Parts: parts}, r.Kind != slots.RefNone
	}
}

// reported reads news of tasks done ("the report is done"): vague unless
// it names the list, and asked when said as a question.
func reported(c clause) (Step, bool) {
	s, ok := onTask(ActComplete)(c)
	if !slots.NamesList(c.words("task")) {
		s.Mood = Vaguely
	}
	if ok && strings.HasSuffix(strings.TrimSpace(c.text), "?") {
		return Step{Act: ActQuery, Ref: s.Ref, Parts: s.Parts}, true
	}
	return s, ok
}

// answer reads a reference alone ("the second one", "4"): an answer, or,
// when nothing was asked, words that may be a task.
func answer(c clause) (Step, bool) {
	r := slots.ParseRef(c.words("task"))
	text := slots.CleanText(c.raw("task"))
	switch {
	case r.Kind == slots.RefNone, r.Kind == slots.RefAll && r.Status != "all":
		return Step{}, false
	case r.Kind == slots.RefName && (slots.IsQuestion(text, c.ws) || slots.AsksYesOrNo(c.ws) || slots.NamesField(c.ws) || cannotDo(c.ws) != ""):
		return Step{}, false
	}
	return Step{Act: ActAnswer, Ref: r, Text: words.CapitalizeFirst(text), Parts: slots.RefParts(c.words("task"))}, true
}

// otherThan reads an answer that says which task is not meant: "not the
// bank, the other one", "not the bank, grandma".
func otherThan(c clause) (Step, bool) {
	if not := words.TrimPunctuation(c.words("not")); len(not) > 0 && notYetWords[not[0].Low] {
		return Step{}, false // "no, not yet": no task is named
	}
	except := slots.ExceptionRefs(c.words("not"))
	if len(except) == 0 {
		return Step{}, false
	}
	rest := c.words("task")
	if _, other := otherPattern.Match(rest); len(rest) == 0 || other {
		several := len(rest) > 0 && strings.HasSuffix(rest[len(rest)-1].Low, "s") // "the others", "other tasks"
		return Step{Act: ActAnswer, Ref: slots.Ref{Kind: slots.RefOther, Except: except, Plural: several, Pointed: len(rest) > 0}}, true
	}
	r := slots.ParseRef(rest)
	return Step{Act: ActAnswer, Ref: r, Parts: slots.RefParts(rest)}, r.Kind != slots.RefNone && r.Kind != slots.RefAll
}

var otherPattern = words.CompilePattern("the? other|others one|ones|task|tasks?")

// deed reads "I called mom": a task done. "I deleted the passport one"
// may be news of another list: deleting it is asked first.
func deed(c clause) (Step, bool) {
	ws := c.words("deed")
	switch {
	case len(ws) < 2 || !slots.IsPastTense(ws[0].Low) || slots.IsQuestion(c.text, c.ws):
		return Step{}, false
	case ws[1].Low == "to" && (ws[0].Low == "got" || ws[0].Low == "had"),
		ws[1].Low == "i" || ws[1].Low == "we" || ws[1].Low == "you":
		return Step{}, false
	}
	r := slots.NameRef(ws[1:])
	if removedWords[ws[0].Low] {
		return Step{Act: ActDelete, Ref: r, Mood: Tentatively}, r.Kind != slots.RefNone
	}
	r.Words, r.Deed = append([]string{ws[0].Low}, r.Words...), true
	return Step{Act: ActComplete, Ref: r}, true
}

// queryDeed reads "did I email the landlord?".
func queryDeed(c clause) (Step, bool) {
	r := slots.NameRef(c.words("deed"))
	r.Deed = true
	return Step{Act: ActQuery, Ref: r}, r.Kind == slots.RefName
}

// bareDeed reads "called mom", in a past tense that is no present ("put").
func bareDeed(c clause) (Step, bool) {
	ws := c.words("deed")
	if base, ok := slots.IrregularPast[ws[0].Low]; ok && base == ws[0].Low {
		return Step{}, false
	}
	return deed(c)
}

// stateReached reads "the bathroom is clean now", "the car got washed": a
// state word says a task is done whatever its verb; a past tense only of
// a task of that verb ("the appointment got moved" is not done).
func stateReached(c clause) (Step, bool) {
	state := c.words("state")
	if len(state) != 1 || !(slots.IsPastTense(state[0].Low) || stateWords[state[0].Low]) {
		return Step{}, false
	}
	r := slots.NameRef(c.words("task"))
	r.Words, r.Deed = append([]string{state[0].Low}, r.Words...), stateWords[state[0].Low]
	return Step{Act: ActComplete, Ref: r}, r.Kind == slots.RefName
}

// dropByName reads "I don't need to buy milk anymore".
func dropByName(c clause) (Step, bool) {
	r := slots.ParseRef(c.words("thing"))
	return Step{Act: ActDelete, Ref: r}, r.Kind != slots.RefNone
}

// note reads a note on one task; said of none ("add a note: …"), on the
// task talked about.
func note(c clause) (Step, bool) {
	r := slots.Ref{Kind: slots.RefFocus}
	if _, ok := c.caps["task"]; ok {
		r = slots.ParseRef(c.words("task"))
	}
	text := slots.CleanText(c.raw("note"))
	return Step{Act: ActNote, Ref: r, Desc: text}, r.Kind != slots.RefNone && r.Kind != slots.RefAll && text != ""
}

func describe(c clause) (Step, bool) {
	r := slots.ParseRef(c.words("task"))
	text := slots.CleanText(c.raw("desc"))
	return Step{Act: ActUpdate, Ref: r, Desc: text}, r.Kind != slots.RefNone && text != ""
}

// retitle reads a new title, with a new description if it says one.
func retitle(c clause) (Step, bool) {
	r := slots.ParseRef(slots.WithoutFieldWords(c.words("task")))
	title, desc := slots.SplitDescription(c.raw("title"))
	title = slots.CleanText(title)
	if n := len(title) - len(" instead"); n > 0 && strings.EqualFold(title[n:], " instead") { // "rename it to clean the attic instead"
		title = slots.CleanText(title[:n])
	}
	title = words.CapitalizeFirst(title)
	return Step{Act: ActUpdate, Ref: r, Title: title, Desc: slots.CleanText(desc)}, r.Kind != slots.RefNone && title != ""
}

// retitleQuoted reads "task 2 should be 'Buy milk'", but not "the fence
// should be fixed".
func retitleQuoted(c clause) (Step, bool) {
	raw := strings.TrimSpace(c.raw("title"))
	if words.Unquote(raw) == raw {
		return Step{}, false
	}
	return retitle(c)
}

// list reads a request to see tasks, whose words must be about the list.
func list(c clause) (Step, bool) {
	ws := c.words("what")
	topic := slots.TopicRef(ws)
	return Step{Act: ActList, Status: slots.StatusOf(c.ws), Ref: topic}, len(ws) == 0 || topic.Kind != slots.RefNone || slots.AboutTheList(ws)
}

// listShorthand reads only listing words: "my tasks", "pending?".
func listShorthand(c clause) (Step, bool) {
	named := false
	for _, w := range c.ws {
		switch {
		case w.Low == "complete":
			return Step{}, false
		case slots.ListNouns[w.Low] || words.StatusWord(w.Low) == "pending":
			named = true
		case slots.ListFiller[w.Low] || words.StatusWord(w.Low) != "":
		default:
			return Step{}, false
		}
	}
	return Step{Act: ActList, Status: slots.StatusOf(c.ws)}, named
}

// add reads one task, or several when the lead-in says so ("add three
// tasks: a, b and c") or the infinitive repeats ("to call mom and to pay
// rent").
func add(c clause) (Step, bool) {
	if from := c.caps["items"][0]; slots.PointsAtTask(c.ws, from) || from > 0 && slots.PointsAtTask(c.ws, from-1) || slots.NamesField(c.words("items")) {
		// "remind me about task 3 tomorrow": a task of the list is no new one.
		return Step{}, false
	}
	ws, plural := slots.StripAddLeadIns(c.words("items"))
	ws = slots.StripListTail(words.StripTrailing(ws, slots.AddTails))
	if len(ws) == 0 || (len(ws) == 1 && (ws[0].Low == "" || slots.AddFrameOnly[ws[0].Low])) || onlyFollowing(ws) {
		// "add", "add these": the executor asks what.
		return Step{Act: ActAdd}, true
	}
	text := words.Span(c.text, ws, 0, len(ws))
	return Step{Act: ActAdd, Items: items(slots.SplitItems(text, plural || slots.AllQuoted(text)))}, true
}

// items reads each text as a task's title and maybe its description.
func items(texts []string) []Item {
	var out []Item
	for _, text := range texts {
		title, desc := slots.SplitDescription(text)
		if t := words.CapitalizeFirst(slots.CleanText(slots.StripInfinitive(title))); t != "" {
			out = append(out, Item{Title: t, Description: slots.CleanText(desc)})
		}
	}
	return out
}
