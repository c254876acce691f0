// Package results is the offline model's fifth layer: what the task tools
// said, and how a reply words it. It reads a turn's tool rounds into
// Outcomes and Tasks, plans the calls and numbers them (round.go,
// task.go), words what each call did (reply.go), the questions and
// offers a reply makes (questions.go) and what an added title says that a
// task cannot keep yet, such as a date (unkept.go), and finds tasks by
// what they are called or where they stand (match.go). It keeps no state
// of the conversation: every function answers from its arguments.
//
// A fix here changes how a result is read or said; what the model does
// with a result is the executor's, in the offline package. Run that
// package's tests after a fix: they hold the replies word for word.
package results
