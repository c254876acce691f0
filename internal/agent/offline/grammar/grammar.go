package grammar

import (
	"slices"

	"github.com/taskchat/taskchat/internal/agent/offline/lexicon"
	"github.com/taskchat/taskchat/internal/agent/offline/slots"
	"github.com/taskchat/taskchat/internal/agent/offline/words"
)

// Action is what a step of a message asks for.
type Action int

const (
	ActAdd      Action = iota + 1
	ActList            // show tasks in a state
	ActComplete        // mark tasks as complete
	ActDelete          // delete tasks
	ActUpdate          // give a task a new title or description
	ActNote            // add a note to a task's description
	ActQuery           // ask whether a task is done
	ActReply           // say something; no tool
	ActAnswer          // a bare reference ("the second one") answering the open question
	ActYes             // "yes" to the open question
	ActNo              // "no" to the open question
	ActSuggest         // words that might be a task: ask whether to add them
	ActCorrect         // "no, I meant task 4": the last change, made again on what was meant
	ActContinue        // "continue", "do the rest": carry on a request stopped at a limit
	ActChatter         // a greeting or thanks: said, and left out when the message asks for more
)

// Step is one thing a message asks for, in the order it was said.
type Step struct {
	Act    Action
	Items  []Item    // ActAdd; none when the person did not say what
	Status string    // ActList: "all", "pending" or "completed"
	Ref    slots.Ref // the tasks it acts on
	Title  string    // ActUpdate: the new title, if any
	Desc   string    // ActUpdate: the new description; ActNote: the note
	Text   string    // ActReply, ActChatter: the reply; ActSuggest: the title it would add
	// Parts are the references joined by "and" in Ref ("the report and
	// the dentist"), tried when the whole names no task.
	Parts   []slots.Ref
	Mood    Mood
	Bearing Bearing
	// Described are the unread words of a clause before a request about
	// "it" ("had the HR meeting scheduled, tick it off"), and Unread that
	// clause's own step: when the words name one task, "it" is that task;
	// otherwise Unread is done and "it" means what it would have.
	Described []string
	Unread    *Step
}

// Mood is how a request was put, where that changes what is done with it.
type Mood uint8

const (
	Plainly        Mood = iota
	Vaguely             // news of tasks done that names no list ("all done"): asked about first
	Tentatively         // a change asked about before it is made ("I need to finish task 3")
	Doubtfully          // a yes with a doubt ("yes? what would that do"): the question is asked again
	StillToDo           // a yes with a modal and no task ("yes, gotta do it"): tasks asked about stay open
	StillToDoAlone      // the modal alone ("I have to"): as StillToDo, but other questions are asked again
)

// Bearing is how a step stands to what was said before it.
type Bearing uint8

const (
	Fresh         Bearing = iota
	Continuing            // begins "and" or "also", or ends "too": after an add, maybe a task to add
	Confirming            // a request led by a yes ("yes, delete everything")
	Correcting            // a request said as a correction ("no, I meant delete it")
	TakingBackAll         // a no that takes back every request before it ("no, neither")
)

// Item is a task to add.
type Item struct{ Title, Description string }

// rule is one line of the grammar: its step, or the builder of a step
// from what matched. An alone rule reads only a whole sentence: after
// "and" or "then" its words belong to the clause before.
type rule struct {
	pattern string
	alone   bool
	step    Step
	build   func(c clause) (Step, bool)
	p       words.Pattern
}

// clause is a matched clause: its text, its words, and its slots' spans.
type clause struct {
	text string
	ws   []words.Word
	caps words.Captures
}

func (c clause) words(slot string) []words.Word {
	s := c.caps[slot]
	return c.ws[s[0]:s[1]]
}

func (c clause) raw(slot string) string {
	s := c.caps[slot]
	return words.Span(c.text, c.ws, s[0], s[1])
}

// aboutDates answers a due date or a priority said of a task; "task 2 to
// call mom about the deadline" is a new title.
func aboutDates(c clause) (Step, bool) {
	to := slices.ContainsFunc(c.words("task"), func(w words.Word) bool { return w.Low == "to" })
	return Step{Act: ActReply, Text: NoDatesText}, !to
}

// grammar is the table of what people say: ordered patterns (notation in
// words/pattern.go), each with its step or the builder of what a match
// means. The first that matches a whole clause and builds a step decides.
var grammar = compileGrammar([]rule{
	// What the assistant is, and small talk.
	{pattern: "@help", alone: true, step: Step{Act: ActReply, Text: HelpText}},
	{pattern: "@greetings there?", alone: true, step: Step{Act: ActChatter, Text: "Hi! " + HelpText}},
	{pattern: "@thanks", alone: true, step: Step{Act: ActChatter, Text: welcomeText}},
	{pattern: "{words}", alone: true, build: smallTalk},
	{pattern: "undo|revert|reverse|take_back that|it|this|the_last_one|the_last_change?", alone: true, step: Step{Act: ActReply, Text: noUndoText}},
	// What the tools cannot do is said plainly, not offered as a task.
	{pattern: "reopen|re-open|uncomplete|un-complete|unmark|untick|uncheck|unfinish {task}", step: Step{Act: ActReply, Text: NoReopenText}},
	{pattern: "mark|set|put|move|make {task} as|to|back_to? not_done|not_complete|not_completed|not_finished|undone|incomplete|uncompleted|unfinished|pending|open|active|to_do|todo again?", step: Step{Act: ActReply, Text: NoReopenText}},
	// A due date or a priority, said of a task: "give task 4 a deadline".
	{pattern: "set|change|update|give|make|assign the|a|an? @dated of|for|on {task} to|: {value}", build: aboutDates},
	{pattern: "set|change|update|give|make|assign the|a|an? @dated of|for|on {task}", build: aboutDates},
	{pattern: "add|put|attach the|a|an? @dated to|on|onto {task}", build: aboutDates},
	{pattern: "set|change|update|give|make|assign {task} @dated to|: {value}", build: aboutDates},
	{pattern: "give|assign {task} a|an|the @dated :? {value}?", build: aboutDates},
	{pattern: "set|give|make|assign|add|put a|an|the? @dated", alone: true, step: Step{Act: ActReply, Text: NoDatesText}},
	// Carrying on a request the last turn stopped at a limit.
	{pattern: "continue|keep_going|carry_on|resume please?", alone: true, step: Step{Act: ActContinue}},
	{pattern: "and|now? do|add|finish|continue_with the rest|remaining of_them|of_the_list|ones?", alone: true, step: Step{Act: ActContinue}},
	{pattern: "and? the rest|remaining of_them|of_the_list|ones? too|please?", alone: true, step: Step{Act: ActContinue}},
	{pattern: "@yes", alone: true, step: Step{Act: ActYes}},
	{pattern: "@no", alone: true, step: Step{Act: ActNo}},
	// Keeping what was pointed at is a no: "keep them", "don't delete it".
	{pattern: "keep|leave {task} alone|as_is|as_it_is|as_they_are|there|for_now?", build: refusal},
	{pattern: "don't|dont|do_not delete|remove|erase|cancel|drop|trash|scrap|scratch|clear|complete|finish|do|touch|change|mark {task}", build: refusal},
	// A correction of the last change: "no, I meant task 4".
	{pattern: "{lead}? i_meant|i_mean|i_meant_to_say|i_mean_to_say|what_i_meant_was|i_said|make_that|make_that_one|change_that_to :? {value}", alone: true, build: correction},

	// Notes, before "add", which they start with.
	{pattern: "add|put|attach|append|write|leave a|an|the|another? @note to|on|for|onto {task} :|saying|that_says|reading|- {note}", build: note},
	{pattern: "add|put|attach|append|write {note} as a|the? @note to|on|for {task}", build: note},
	{pattern: "add|put|attach|append|write {note} to|on the? @note of|for|on {task}", build: note},
	{pattern: "@note for|on {task} :|- {note}", build: note},
	{pattern: "add|put|append|write to|on|onto|in|into {task} @note :|- {note}", build: note},
	// A note said of no task is for the task talked about.
	{pattern: "add|put|attach|append|write|leave a|an|the|another @note :|-|saying|that_says|reading {note}", build: note},
	{pattern: "set|change|update|edit|make|replace the? @note of|for|on {task} to|with|: :? {desc}", build: describe},
	{pattern: "@update|set {task} @note to|: :? {desc}", build: describe},
	{pattern: "give {task} the? @note :? {desc}", build: describe},

	// Changing a title.
	{pattern: "@update|set|make the? title|name of {task} to|into|: :? {title}", build: retitle},
	{pattern: "@update|make {task} to|into|: :? say|read? {title}", build: retitle},
	{pattern: "rename {task} as|: {title}", build: retitle},
	{pattern: "make {task} say|read {title}", build: retitle},
	{pattern: "call {task} {title} instead", build: retitle},
	{pattern: "set|make {task} title|name to|as|: :? {title}", build: retitle},
	{pattern: "@update {task}", build: onTask(ActUpdate)},
	{pattern: "@update", alone: true, step: Step{Act: ActUpdate}},

	// Listing.
	{pattern: "@show me|us? {what}?", build: list},
	{pattern: "@ask {what}", build: list},
	{pattern: "check my|the {what}", build: list},
	{pattern: "how|where am|are i|we|things {what}?", build: list},
	{pattern: "am i done|finished {what}?", build: list},
	{pattern: "{what}", alone: true, build: listShorthand},

	// Asking whether a task is done.
	{pattern: "did|have i|we @finish|finish|do|done|finished|completed {task} yet|already?", build: onTask(ActQuery)},
	{pattern: "is|are|was|were {task} done|finished|complete|completed|still_open|still_pending|pending|open|ticked_off|checked_off yet|already?", build: onTask(ActQuery)},
	{pattern: "have i|we already? @finished {task} yet|already?", build: onTask(ActQuery)},
	{pattern: "did|have|has i|we|you already? {deed} yet|already?", build: queryDeed},

	// Completing.
	{pattern: "mark|set|put|move {task} as|to? @done|done_already|off|as_done|as_complete", build: onTask(ActComplete)},
	{pattern: "mark|set as|to? @done", alone: true, step: Step{Act: ActComplete}},
	{pattern: "mark off|down? {task}", build: onTask(ActComplete)},
	{pattern: "tick|check|cross|strike|knock {task} off", build: onTask(ActComplete)},
	{pattern: "@finish|finish_up|finish_off {task}", build: onTask(ActComplete)},
	{pattern: "@finish|mark", alone: true, step: Step{Act: ActComplete}},
	{pattern: "@me already|just|finally|now? @finished {task}", build: reported},
	{pattern: "i'm|im|i_am|we're|we_are done|finished|through with {task}", build: reported},
	{pattern: "done|finished|through with {task}", build: reported},
	{pattern: "@me already|just|finally|now? {deed}", build: deed},
	{pattern: "@finished {task}", build: reported},

	// Deleting.
	{pattern: "@delete {task}", build: onTask(ActDelete)},
	{pattern: "@delete|@clear", alone: true, step: Step{Act: ActDelete}},
	{pattern: "@clear {task}", build: onTask(ActDelete)},
	{pattern: "take {task} off|out_of|from my|the? @list", build: onTask(ActDelete)},
	{pattern: "i|we don't|dont|do_not|no_longer|won't|wont|will_not need|want|have to? {thing} anymore|any_more|now|after_all?", build: dropByName},
	{pattern: "no_need|there_no_need|there_is_no_need|no_more_need to|for {thing} anymore|any_more|now|after_all?", build: dropByName},
	{pattern: "i|we can|can_now skip {thing}", build: dropByName},

	// Adding.
	{pattern: "@add {items}", build: add},
	{pattern: "put {items} on|in|onto|to my|the? @list", build: add},
	{pattern: "put {items} on|in|onto|to my|the|our @listkind list", build: add},
	{pattern: "put on|onto|in my|the? @list :? {items}", build: add},
	{pattern: "make|set_up|start|open a|an|another? new? task|todo|to-do|reminder|item|entry {items}", build: add},
	{pattern: "new|another task|todo|to-do|reminder|item|entry :? {items}", build: add},
	{pattern: "task|todo|to-do|reminder|note_to_self|note|reminder_to_self :|- {items}", build: add},
	{pattern: "todo|to-do|to_do {items}", build: add},
	{pattern: "remind me|us to|about|that|of? {items}", build: add},
	{pattern: "remember to|that|about? {items}", build: add},
	{pattern: "i|we need|have|ought|got|want to remember|remind_myself to|that|about? {items}", build: add},
	{pattern: "don't|dont|do_not let_me|let_us? forget to|about|that? {items}", build: add},
	{pattern: "make_sure|ensure i|we? {items}", build: add},
	{pattern: "i|we @must to? {items}", build: add},
	{pattern: "need_to|needs_to|gotta|got_to|have_to|has_to|have_got_to {items}", build: add},
	{pattern: "adding|creating|noting|logging :|-? {items}", build: add},
	{pattern: "i've|ive|we've|i_have|we_have got_to|gotta|to {items}", build: add},
	{pattern: "i'll|i_will|we'll need|have to {items}", build: add},
	{pattern: "i'm|im|i_am going_to|gonna|supposed_to|meant_to|planning_to {items}", build: add},
	{pattern: "i|we should|must|gotta {items}", build: add},
	{pattern: "i|we forgot to {items}", build: add},

	// Sentences that start with the task ("task 3 is done") or the deed.
	{pattern: "{task} can|could|should|needs_to|need_to|must be marked|set as|to? @done|done|complete|completed|finished now?", build: onTask(ActComplete)},
	{pattern: "{task} can|could|should|needs_to|need_to|must be ticked_off|checked_off|crossed_off|marked_off now?", build: onTask(ActComplete)},
	{pattern: "{deed}", build: bareDeed},
	{pattern: "{task} should say|read|be_called|be_named {title}", build: retitle},
	{pattern: "{task} should be {title}", build: retitleQuoted},
	{pattern: "{task} is|are|was|were|has_been|have_been|'s? now|already|finally|all|also? @done now|already|too|as_well|today|yesterday?", build: reported},
	{pattern: "{task} is|are|was|were|got|has_been|have_been no_longer|not? needed|cancelled|canceled|called_off|off|obsolete|irrelevant anymore|now?", build: onTask(ActDelete)},
	{pattern: "{task} is|are|was|were|got|has_been|have_been|'s now|already|finally|all? {state} now|already|too|today?", build: stateReached},
	{pattern: "{task} can_go|can_be_deleted|can_be_removed", build: onTask(ActDelete)},

	// What is not meant, and what is: "not the bank, the other one".
	{pattern: "not|but_not {not} ,|but|- {task}", alone: true, build: otherThan},
	{pattern: "not|but_not {not}", alone: true, build: otherThan},

	// A reference alone answers the open question ("the second one", "4").
	{pattern: "{task}", alone: true, build: answer},
})

func compileGrammar(rules []rule) []rule {
	for i := range rules {
		rules[i].p = words.CompilePattern(rules[i].pattern)
	}
	return rules
}

// parseClause reads one clause with the first rule that matches it whole.
func parseClause(text string, ws []words.Word, whole bool) (Step, bool) {
	for _, r := range grammar {
		if r.alone && !whole {
			continue
		}
		caps, ok := r.p.Match(ws)
		if !ok {
			continue
		}
		s, ok := r.step, true
		if r.build != nil {
			s, ok = r.build(clause{text: text, ws: ws, caps: caps})
		}
		if ok && !(s.Act == ActComplete && slots.HasNegation(ws)) {
			return s, true
		}
	}
	return Step{}, false
}

// The lexicon's sections the grammar reads: lexicon/data says what each
// holds and what it is for.
var (
	addVerbs        = lexicon.Phrases("@add")
	asideEnds       = lexicon.Words("aside ends")
	asideStarts     = lexicon.Words("aside starts")
	byeWords        = lexicon.Words("bye words")
	connectors      = lexicon.Words("connectors")
	continuing      = lexicon.Words("continuing")
	correctionLeads = lexicon.Words("correction leads")
	exceptionWords  = lexicon.Phrases("exception words")
	followingWords  = lexicon.Words("following words")
	hesitations     = lexicon.Words("hesitations")
	leadIns         = lexicon.Phrases("lead-ins")
	leavingWords    = lexicon.Words("leaving words")
	markVerbs       = lexicon.Words("mark verbs")
	modals          = lexicon.Phrases("modals")
	modalTails      = lexicon.Words("modal tails")
	noLeads         = lexicon.Phrases("no leads")
	notYetWords     = lexicon.Words("not yet words")
	offWords        = lexicon.Words("tick tails")
	orderWords      = lexicon.Words("order words")
	reasonWords     = lexicon.Words("reason words")
	refLeads        = lexicon.Words("ref leads")
	remarkTails     = lexicon.Words("remark tails")
	removedWords    = lexicon.Words("removed words")
	stateTails      = lexicon.Phrases("state tails")
	stateWords      = lexicon.Words("state words")
	talkFiller      = lexicon.Words("talk filler")
	thanksWords     = lexicon.Words("thanks words")
	tickVerbs       = lexicon.Words("tick verbs")
	topicLeads      = lexicon.Phrases("topic leads")
	trailers        = lexicon.Phrases("trailers")
	widenWords      = lexicon.Words("widen words")
	yesLeads        = lexicon.Phrases("yes leads")
	// TopicStarts start a task named as the topic of a request about "it"
	// ("the dentist one, mark it done").
	TopicStarts = lexicon.Words("topic starts")
)
