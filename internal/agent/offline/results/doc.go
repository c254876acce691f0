// Package results is the offline model's fifth layer: what the task tools
// said, and how a reply words it. It reads a turn's tool rounds and plans
// its calls (round.go), words replies and questions (reply.go) and what an
// added title says that a task cannot keep yet, such as a date
// (unkept.go), and finds tasks by name or place (match.go). It keeps no
// state: every function answers from its arguments.
//
// What the model does with a result is the executor's, in the offline
// package, whose tests hold the replies word for word.
package results
