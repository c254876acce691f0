// Package agent runs one chat turn: it gives a language model the
// conversation and the user's MCP task tools, runs the tools the model asks
// for, and returns the reply. A fresh run per turn, bounded in model calls,
// tool calls, tokens and time, and never brought down by a misbehaving model.
package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskchat/taskchat/internal/setting"
	"github.com/taskchat/taskchat/internal/tasks"
)

// Limits bound one turn. Every field must be positive; the service's
// defaults live with its configuration, in cmd/server.
type Limits struct {
	MaxModelCalls int           // model calls per turn
	MaxToolCalls  int           // tool calls per turn
	MaxTokens     int           // total tokens per turn, as the model reports them
	TurnTimeout   time.Duration // deadline for the whole turn
	ToolTimeout   time.Duration // deadline for one tool call
}

// Validate names each limit that is not positive (see setting.Error).
func (l Limits) Validate() error {
	var errs []error
	for _, f := range []struct {
		field    string
		value    any
		positive bool
	}{
		{"MaxModelCalls", l.MaxModelCalls, l.MaxModelCalls > 0},
		{"MaxToolCalls", l.MaxToolCalls, l.MaxToolCalls > 0},
		{"MaxTokens", l.MaxTokens, l.MaxTokens > 0},
		{"TurnTimeout", l.TurnTimeout, l.TurnTimeout > 0},
		{"ToolTimeout", l.ToolTimeout, l.ToolTimeout > 0},
	} {
		if !f.positive {
			errs = append(errs, setting.Invalid(f.field, "must be positive, got %v", f.value))
		}
	}
	return errors.Join(errs...)
}

// StopReason says why a turn ended.
type StopReason string

// The ways a turn ends. Only StopCompleted is a turn that ran its course;
// the limits end it early with a reply that says so.
const (
	StopCompleted     StopReason = "completed"
	StopMaxModelCalls StopReason = "max_model_calls"
	StopMaxToolCalls  StopReason = "max_tool_calls"
	StopMaxTokens     StopReason = "max_tokens"
	StopModelError    StopReason = "model_error"
	StopCanceled      StopReason = "canceled"
)

// Call is one tool call as the turn ran it: what the model asked for and
// what came back, both JSON. Arguments are the model's text as is, which
// may not be valid JSON when the model got them wrong.
type Call struct {
	ID        string
	Tool      string
	Arguments json.RawMessage
	Result    json.RawMessage
	IsError   bool
	Round     int // which model call asked for it, from 0
	Seq       int // its position among the turn's calls, from 0
	Duration  time.Duration
	// Awaiting is the approval the call waits for, when its source did not
	// run it but asked its person first (a tasks.AwaitingResult): the call
	// is that approval's placeholder.
	Awaiting int64
	// Approved is the approval under which the call runs: set on the
	// resolution of an approved call (see Input.Decisions), so that its
	// source runs it rather than asking again.
	Approved int64
}

// Result is the outcome of a turn, also when it failed part-way: Reply
// holds the text produced so far and Calls every tool call that ran.
type Result struct {
	Reply string
	Calls []Call
	Usage Usage
	Stop  StopReason
}

// Input is what one turn works on.
type Input struct {
	System  string    // the system prompt
	History []Message // earlier messages, oldest first
	Message string    // the user's new message
	// Resumed are the calls of an earlier run of this turn, when the turn
	// runs again to write its reply anew. The model sees them after the
	// message, with their results, as if it had just made them, so that it
	// goes on from their effects instead of making them again. They begin
	// the Result's Calls and count towards MaxToolCalls; new calls come in
	// rounds and positions after theirs.
	Resumed []tasks.ToolCall
	// Decisions are the calls of Resumed that waited for their person and
	// have been decided since: before the model is called, each approved
	// one runs, with the arguments it had, and each declined one is told
	// to the model as declined, as a new call with the placeholder's id,
	// its resolution, which the model sees in its place.
	Decisions []Decision
	Model     Model
	// Now is the turn's time in the user's time zone (Request.Now); the
	// zero time is now in UTC.
	Now      time.Time
	Tools    ToolSource // the user's task tools
	Limits   Limits
	Observer Observer // may be nil
}

// Decision is a person's decision on a call that waited: Call is its
// placeholder, as the turn recorded it.
type Decision struct {
	Call       tasks.ToolCall
	ApprovalID int64
	Approved   bool
	Reason     string
	// Changed, for an approved call, says how what it acts on changed
	// since the person approved it: the call then does not run.
	Changed string
}

// Run runs one turn. It returns the turn's result and, when the turn could
// not finish, an error: a *ModelError when the model failed (also when the
// turn's deadline passed), or the context's error when ctx was canceled.
// The result is meaningful in both cases: it holds what the turn did.
func Run(ctx context.Context, in Input) (Result, error) {
	lim := in.Limits
	if err := lim.Validate(); err != nil {
		return Result{Stop: StopModelError}, err
	}
	ctx, cancel := context.WithTimeout(ctx, lim.TurnTimeout)
	defer cancel()
	r := &run{in: in, lim: lim, obs: in.Observer}
	if r.obs == nil {
		r.obs = func(Event) {}
	}
	res, err := r.loop(ctx)
	res.Reply = r.reply.String()
	r.obs(Event{Kind: EventDone, Result: &res, Err: err})
	return res, err
}

// run is the state of one turn.
type run struct {
	in    Input
	lim   Limits
	obs   Observer
	defs  []ToolDef
	known map[string]bool
	res   Result
	reply strings.Builder // the reply so far; res.Reply is set from it at the end
	msgs  []Message
	seq0  int // the Seq of the turn's first call made in this run, minus the resumed calls
}

func (r *run) loop(ctx context.Context) (Result, error) {
	if err := r.listTools(ctx); err != nil {
		if ctx.Err() != nil { // the turn's deadline or its caller ended it while the tools were listed
			return r.fail(ctx, err)
		}
		r.res.Stop = StopModelError
		return r.res, err
	}
	r.msgs = append(append(make([]Message, 0, len(r.in.History)+8), r.in.History...), Message{Role: RoleUser, Content: r.in.Message})
	first := r.resume()
	if err := r.decide(ctx); err != nil {
		return r.fail(ctx, err)
	}
	for round := 0; ; round++ {
		if round == r.lim.MaxModelCalls {
			return r.stop(StopMaxModelCalls, "I stopped because this request needed more steps than I'm allowed in one message."), nil
		}
		resp, err := r.callModel(ctx)
		r.res.Usage = r.res.Usage.Add(resp.Usage)
		if err != nil {
			return r.fail(ctx, err)
		}
		if len(resp.ToolCalls) == 0 {
			r.res.Stop = StopCompleted
			return r.res, nil
		}
		if r.res.Usage.TotalTokens >= r.lim.MaxTokens {
			return r.stop(StopMaxTokens, "I stopped because this request used up its token budget."), nil
		}
		r.uniqueIDs(resp.ToolCalls)
		r.msgs = append(r.msgs, Message{Role: RoleAssistant, Content: resp.Text, ToolCalls: resp.ToolCalls})
		for _, call := range resp.ToolCalls {
			if len(r.res.Calls) >= r.lim.MaxToolCalls {
				return r.stop(StopMaxToolCalls, "I stopped because this request needed more tool calls than I'm allowed in one message."), nil
			}
			c := r.runTool(ctx, call, first+round, 0)
			if ctx.Err() != nil {
				return r.fail(ctx, ctx.Err())
			}
			r.msgs = append(r.msgs, Message{Role: RoleTool, ToolCallID: call.ID, Content: string(c.Result)})
		}
	}
}

// uniqueIDs gives each call of a model response an id that no other call
// of the turn has: some servers number the calls of each response ("0",
// "1"…) or send none, and a turn's calls are told apart by id — a result
// from another's, a waiting call's resolution from a new call.
func (r *run) uniqueIDs(calls []ToolCall) {
	seen := make(map[string]bool, len(r.res.Calls)+len(calls))
	for _, c := range r.res.Calls {
		seen[c.ID] = true
	}
	for i := range calls {
		base, id := calls[i].ID, calls[i].ID
		if base == "" {
			base = "call"
		}
		for n := 2; id == "" || seen[id]; n++ {
			id = fmt.Sprintf("%s_%d", base, n)
		}
		calls[i].ID, seen[id] = id, true
	}
}

// resume puts the calls of the turn's earlier run before the model, and
// into the result, and returns the round this run begins with. New calls
// are numbered after the highest position of theirs: a run cut short may
// have recorded only some of its calls. The model sees a placeholder's
// resolution in its place (tasks.Resolved), and no placeholder that a
// decision is about to resolve.
func (r *run) resume() int {
	if len(r.in.Resumed) == 0 {
		return 0
	}
	next, seq := 0, 0
	for _, c := range r.in.Resumed {
		r.res.Calls = append(r.res.Calls, Call{ID: c.CallID, Tool: c.Tool, Arguments: json.RawMessage(argumentsText(c.Arguments)),
			Result: c.Result, IsError: c.IsError, Round: c.Round, Seq: c.Seq, Duration: c.Duration, Awaiting: c.Awaiting})
		next, seq = max(next, c.Round+1), max(seq, c.Seq+1)
	}
	r.seq0 = seq - len(r.in.Resumed)
	shown := tasks.Resolved(r.in.Resumed)
	if len(r.in.Decisions) > 0 {
		decided := map[string]bool{}
		for _, d := range r.in.Decisions {
			decided[d.Call.CallID] = true
		}
		shown = slices.DeleteFunc(slices.Clone(shown), func(c tasks.ToolCall) bool { return c.Awaiting != 0 && decided[c.CallID] })
	}
	if len(shown) > 0 {
		r.msgs = appendStored(r.msgs, tasks.Message{Role: tasks.RoleAssistant, ToolCalls: shown})
	}
	return next
}

// decide resolves the decided calls (Input.Decisions), in the round of
// each: an approved call runs now, as the model asked for it; a declined
// one gets a result that says so. The model then reads them as its calls.
func (r *run) decide(ctx context.Context) error {
	if len(r.in.Decisions) == 0 {
		return nil
	}
	asked := make([]ToolCall, 0, len(r.in.Decisions))
	results := make([]Message, 0, len(r.in.Decisions))
	for _, d := range r.in.Decisions {
		tc := ToolCall{ID: d.Call.CallID, Name: d.Call.Tool, Arguments: argumentsText(d.Call.Arguments)}
		// Every decision is resolved, even once the turn is asked to
		// stop: a call decided and left unresolved would wait for nothing.
		// (Its source runs a call to its end whatever ctx does.)
		var c Call
		switch {
		case d.Approved && d.Changed == "":
			c = r.runTool(ctx, tc, d.Call.Round, d.ApprovalID)
		case d.Approved:
			c = r.unrun(tc, d, tasks.StaleJSON(d.Changed))
		default:
			c = r.unrun(tc, d, tasks.DeclinedJSON(d.Reason))
		}
		asked = append(asked, tc)
		results = append(results, Message{Role: RoleTool, ToolCallID: c.ID, Content: string(c.Result)})
	}
	r.msgs = append(append(r.msgs, Message{Role: RoleAssistant, ToolCalls: asked}), results...)
	return ctx.Err()
}

// unrun records a decided call that does not run, with the result that
// says why: declined, or stale.
func (r *run) unrun(tc ToolCall, d Decision, result json.RawMessage) Call {
	c := Call{ID: tc.ID, Tool: tc.Name, Arguments: json.RawMessage(tc.Arguments), Round: d.Call.Round, Seq: r.seq0 + len(r.res.Calls)}
	r.obs(Event{Kind: EventToolCall, Call: &c})
	c.Result, c.IsError = result, true
	r.res.Calls = append(r.res.Calls, c)
	r.obs(Event{Kind: EventToolResult, Call: &r.res.Calls[len(r.res.Calls)-1]})
	return c
}

// callModel makes one model call, streaming its text to the observer. Text
// of later rounds is set off from earlier text by a blank line, sent as a
// delta too, so the deltas always add up to the reply.
func (r *run) callModel(ctx context.Context) (Response, error) {
	started := r.reply.Len() > 0
	first := true
	return r.in.Model.Stream(ctx, Request{System: r.in.System, Messages: r.msgs, Tools: r.defs, Now: r.now()}, func(text string) {
		if text == "" {
			return
		}
		if first && started {
			r.emitText("\n\n")
		}
		first = false
		r.emitText(text)
	})
}

func (r *run) emitText(text string) {
	r.reply.WriteString(text)
	r.obs(Event{Kind: EventDelta, Text: text})
}

// StoppedNote is in the reply of every turn stopped at a limit: a model
// that reads the conversation again (the offline model) knows from it that
// the turn asked for more than it did, and may carry it on.
const StoppedNote = "What I did so far is saved"

// stop ends the turn at a limit, telling the person why.
func (r *run) stop(reason StopReason, why string) Result {
	r.res.Stop = reason
	if r.reply.Len() > 0 {
		r.emitText("\n\n")
	}
	r.emitText(why + " " + StoppedNote + progress(r.res.Calls) + "; tell me how you'd like to continue.")
	return r.res
}

// progress says what the calls of a turn stopped at a limit changed, so
// the person knows where it stopped: ": I added 20 tasks (Bread, Eggs, …)".
// It reads the task tools' results; other calls say nothing here.
func progress(calls []Call) string {
	var order []string
	done := map[string][]string{}
	for _, c := range calls {
		var res tasks.ChangeResult
		if c.IsError || json.Unmarshal(c.Result, &res) != nil || res.Title == "" || progressVerbs[res.Status] == "" {
			continue
		}
		if _, ok := done[res.Status]; !ok {
			order = append(order, res.Status)
		}
		done[res.Status] = append(done[res.Status], res.Title)
	}
	var parts []string
	for _, status := range order {
		titles := done[status]
		noun := "tasks"
		if len(titles) == 1 {
			noun = "task"
		}
		shown := titles[:min(len(titles), progressTitles)]
		more := ""
		if len(titles) > len(shown) {
			more = fmt.Sprintf(" and %d more", len(titles)-len(shown))
		}
		parts = append(parts, fmt.Sprintf("I %s %d %s (%s%s)", progressVerbs[status], len(titles), noun, strings.Join(shown, ", "), more))
	}
	if len(parts) == 0 {
		return ""
	}
	return ": " + strings.Join(parts, "; ")
}

// progressVerbs say what each change did; progressTitles is how many
// titles of each are named.
var progressVerbs = map[string]string{
	tasks.StatusCreated: "added", tasks.StatusDone: "completed", tasks.StatusDeleted: "deleted", tasks.StatusUpdated: "changed",
}

const progressTitles = 25

// fail ends the turn on an error: the caller's cancellation stays a context
// error, the turn's own deadline becomes a model timeout.
func (r *run) fail(ctx context.Context, err error) (Result, error) {
	var me *ModelError
	switch {
	case errors.As(err, &me):
		r.res.Stop = StopModelError
		return r.res, err
	case errors.Is(context.Cause(ctx), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		r.res.Stop = StopModelError
		return r.res, &ModelError{Kind: ErrModelTimeout, Err: fmt.Errorf("turn deadline of %s passed", r.lim.TurnTimeout)}
	case ctx.Err() != nil:
		r.res.Stop = StopCanceled
		return r.res, ctx.Err()
	}
	r.res.Stop = StopModelError
	return r.res, &ModelError{Kind: ErrModelStream, Err: err}
}

// now is the turn's time in the user's zone.
func (r *run) now() time.Time {
	if r.in.Now.IsZero() {
		return time.Now().UTC()
	}
	return r.in.Now
}

// listTools gets the tools' definitions for the model.
func (r *run) listTools(ctx context.Context) error {
	defs, err := r.in.Tools.Definitions(ctx)
	if err != nil {
		return err
	}
	r.defs = defs
	r.known = make(map[string]bool, len(defs))
	for _, d := range defs {
		r.known[d.Name] = true
	}
	return nil
}

// runTool runs one call through the MCP session and records it. Whatever
// goes wrong becomes a compact error result the model can act on.
func (r *run) runTool(ctx context.Context, tc ToolCall, round int, approved int64) Call {
	c := Call{ID: tc.ID, Tool: tc.Name, Arguments: withoutNulls(json.RawMessage(tc.Arguments)), Round: round, Seq: r.seq0 + len(r.res.Calls),
		Approved: approved}
	if strings.TrimSpace(tc.Arguments) == "" {
		c.Arguments = json.RawMessage(`{}`)
	}
	r.obs(Event{Kind: EventToolCall, Call: &c})
	start := time.Now()
	c.Result, c.IsError = r.callTool(ctx, c)
	c.Duration = time.Since(start)
	c.Awaiting = tasks.AwaitingID(c.Result)
	r.res.Calls = append(r.res.Calls, c)
	r.obs(Event{Kind: EventToolResult, Call: &r.res.Calls[len(r.res.Calls)-1]})
	return c
}

func (r *run) callTool(ctx context.Context, c Call) (json.RawMessage, bool) {
	name, raw := c.Tool, c.Arguments
	if !r.known[name] {
		return toolFailure(fmt.Sprintf("Unknown tool %q. Available tools: %s.", name, strings.Join(r.toolNames(), ", ")))
	}
	if !isObject(raw) {
		return toolFailure(fmt.Sprintf("The arguments for %s must be a JSON object; got %s.", name, clip(string(raw), 120)))
	}
	ctx, cancel := context.WithTimeout(ctx, r.lim.ToolTimeout)
	defer cancel()
	res, err := r.in.Tools.Call(ctx, c)
	switch {
	// A result is the truth even when it came late: a source may finish a
	// call it cannot take back (see chat's turnTools).
	case err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return toolFailure(fmt.Sprintf("The %s tool timed out after %s.", name, r.lim.ToolTimeout))
	case err != nil:
		return toolFailure(fmt.Sprintf("The %s tool failed: %s", name, clip(err.Error(), 200)))
	case res.IsError:
		return toolFailure(clip(textOf(res), 500))
	case res.StructuredContent != nil:
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			return b, false
		}
	}
	return tasks.TextJSON(textOf(res)), false
}

func (r *run) toolNames() []string {
	names := make([]string, len(r.defs))
	for i, d := range r.defs {
		names[i] = d.Name
	}
	return names
}

// isObject reports whether raw is one valid JSON object. The tool decodes
// it, against its schema; here it is only checked, not decoded.
func isObject(raw json.RawMessage) bool {
	return json.Valid(raw) && bytes.HasPrefix(bytes.TrimLeft(raw, " \t\r\n"), []byte("{"))
}

// withoutNulls returns the object raw without its members whose value is
// null. Several models fill every optional argument they leave out with
// null, meaning "not given" (a strict schema makes them send every one):
// the tools' schemas, which type them as strings or integers, would refuse
// the whole call, and a null that cleared a field (update_task's due) would
// clear it whenever the model meant to leave it alone. A model clears a
// field with "" instead. The call is sent, streamed and recorded as it
// runs, without them; the other members keep their order and their text.
// raw comes back as it is when it is not an object or holds no null
// member.
func withoutNulls(raw json.RawMessage) json.RawMessage {
	if !bytes.Contains(raw, []byte("null")) {
		return raw
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if open, err := dec.Token(); err != nil || open != json.Delim('{') {
		return raw
	}
	out := []byte{'{'}
	dropped := false
	for dec.More() {
		start := dec.InputOffset() // before the member's name, and its comma
		if _, err := dec.Token(); err != nil {
			return raw
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return raw
		}
		if string(value) == "null" {
			dropped = true
			continue
		}
		member := bytes.TrimLeft(raw[start:dec.InputOffset()], " \t\r\n,")
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(out, member...)
	}
	if !dropped {
		return raw
	}
	return append(out, '}')
}

// toolFailure is the result of a failed tool call, a tasks.ErrorResult,
// and its isError.
func toolFailure(message string) (json.RawMessage, bool) {
	return tasks.ErrorJSON(message), true
}

func textOf(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// clip shortens s to at most n bytes, on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
