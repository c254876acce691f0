// Package turnstream writes a chat turn onto the wire: the engine's events
// as taskchat's Server-Sent Events (SSE) or as the Vercel AI SDK's UI
// message stream (UI), each event with an id a client resumes after
// (EventID), and the events as a turn's run keeps them (EncodeEvent,
// EncodeDone, EncodeError), which Replay sends again to a stream that
// follows or resumes the turn.
//
// It knows the shape of every frame, not what an error means: the http
// package, which routes requests here, holds the one table from error to
// code and status and passes it in (Problems), so a failure before a
// stream's first frame is problem JSON with its status and one after it an
// error event with the same code.
package turnstream
