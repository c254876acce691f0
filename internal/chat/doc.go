// Package chat is the chat turn, as an engine of its own: it begins a turn
// (idempotency key, claim on the conversation, user message, history), runs
// a fresh agent with the user's MCP task tools, and finishes it (reply and
// audit) or abandons it — and it finishes the turns that a crash or an
// outage cut short, so that a tool's effect happens exactly once. It knows
// nothing of HTTP: every front (JSON, SSE, a page, another stream protocol)
// hands it a Request and an Observer and gets an Outcome or an error.
//
// The engine runs the tools through the MCP servers cmd/server gives it
// (ToolServers), and sends each call with its record, which those servers
// keep for the tool the call reaches (ToolServers.CallMeta, named in the
// call's _meta): that record, the contract between the turn and the tools,
// is what lets a task change be recorded with the change itself.
package chat
