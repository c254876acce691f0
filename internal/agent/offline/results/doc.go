// Package results is the offline model's fifth layer: what the task tools
// said, and how a reply words it. It reads a turn's tool rounds (round.go:
// the calls an assistant message made and the tool messages that answered
// them, each call's Outcome), holds the tasks those results name (task.go),
// writes what each call did and how tasks are named in a sentence or a
// list (reply.go), finds what an added title says that a task cannot keep
// yet — a date, a priority, a repeat — and says so (unkept.go), words the
// questions and offers a reply makes (questions.go), finds tasks by what
// they are called (match.go), and fills the
// examples of a fixed text with the person's own tasks (examples.go). It
// keeps no state of the conversation: every function answers from its
// arguments. It imports the lexicon, package words, and the grammar for
// its actions and AnyTask, the place an example's task number goes.
//
// It also holds the calls the executor plans (calls.go: Planned, which a
// recorded call Holds or not, ListCall and ListPage, and CallIDs, which
// number them).
//
// It gives the executor above it Round and RoundAt to read the rounds,
// Outcome and Task to read them into, the tool names (ToolAddTask …), the
// list helpers (FindTask, TasksWhere, WithoutDeleted …), and the wording:
// ConfirmCall and ConfirmRound, TaskLines, TaskNumbers, TaskNotFound,
// Sentence, Plural, UnkeptNote, FillExamples, and the questions' words
// (OfferText, OfferAddText, WhatToDoText, NothingToDo, Stays, Example,
// ActionVerbs), and MatchTasks, ClosestTasks and PickItems.
//
// A fix here changes how a result is read or said: a sentence of a reply,
// a tool's result field the replies need, a word of the lexicon's date,
// priority or repeat sections. What the model does with a result — which
// calls it makes, what it asks, what "it" means afterwards — is the
// executor's, in the offline package. Run the offline package's tests
// after a fix here: its tests hold the replies word for word.
package results
