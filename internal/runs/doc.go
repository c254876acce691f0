// Package runs lets a chat turn outlive the connection that started it. A
// turn runs on a context of its own, not its request's; its events go to
// PostgreSQL as they happen, a batch at a time (tasks.RunStore), so that
// any replica can follow it from the start or from an event's id, and
// anyone can stop it: the stop reaches the replica that runs the turn by
// NOTIFY, or, where nothing listens, by that replica asking.
//
// A Hub is one replica's share of this: the turns it runs (to stop them),
// the followers waiting on it (to wake them), and one listening connection
// for them all (a Notifier). It keeps nothing another replica needs.
package runs
