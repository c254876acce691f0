package chat

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/setting"
	"github.com/taskchat/taskchat/internal/tasks"
	"github.com/taskchat/taskchat/internal/telemetry"
)

// persistTimeout bounds the writes that begin and end a turn. They run on
// a context detached from the request: once sent, their outcome must be
// known, and a client that left still gets its turn saved.
const persistTimeout = 10 * time.Second

// Config is how turns run. Every field is required: the defaults live with
// the rest of the configuration, in cmd/server.
type Config struct {
	Model          agent.Model
	Prompt         agent.Prompt
	Limits         agent.Limits
	HistoryLimit   int           // stored messages replayed to the model
	HistoryTokens  int           // their estimated token budget
	IdempotencyTTL time.Duration // how long an Idempotency-Key is kept
	// DailyTokenBudget, when positive, is the tokens a user's turns may use
	// in a UTC day: past it, turns are refused with a *tasks.BudgetError.
	// 0 is no budget.
	DailyTokenBudget int64
	// MaxRunningTurns, when positive, is how many turns a user may run at
	// once, on all replicas together: past it, turns are refused with a
	// *tasks.RunningTurnsError. 0 is no cap.
	MaxRunningTurns int
	// TurnRate, when it limits, is each user's token bucket of turns, kept
	// in the database and so shared by every replica: a turn takes a token
	// as it starts, in the statement that starts it, and one past it is
	// refused with a *tasks.RateLimitError. The zero Rate is none.
	TurnRate tasks.Rate
	// ApprovalTools are the tools whose calls wait for their person: such a
	// call does not run, but asks for an approval (tasks.Approval), which
	// expires after ApprovalTTL. Empty: every call runs.
	ApprovalTools []string
	ApprovalTTL   time.Duration
	// Telemetry counts turns by outcome and observes each tool execution;
	// nil observes nothing. (The model is observed by wrapping it, see
	// telemetry.Model.)
	Telemetry *telemetry.Telemetry
}

// validate names each field of c that is wrong (see setting.Error).
func (c Config) validate() error {
	var errs []error
	if c.Model == nil {
		errs = append(errs, setting.Invalid("Model", "is required"))
	}
	if c.Prompt == (agent.Prompt{}) {
		errs = append(errs, setting.Invalid("Prompt", "is required (agent.DefaultPrompt, or agent.LoadPrompt)"))
	}
	errs = append(errs, setting.Within("Limits", c.Limits.Validate()))
	for _, f := range []struct {
		field string
		value any
		ok    bool
		rule  string
	}{
		{"HistoryLimit", c.HistoryLimit, c.HistoryLimit > 0, "must be positive"},
		{"HistoryTokens", c.HistoryTokens, c.HistoryTokens > 0, "must be positive"},
		{"IdempotencyTTL", c.IdempotencyTTL, c.IdempotencyTTL > 0, "must be positive"},
		{"DailyTokenBudget", c.DailyTokenBudget, c.DailyTokenBudget >= 0, "must not be negative (0 is none)"},
		{"MaxRunningTurns", c.MaxRunningTurns, c.MaxRunningTurns >= 0, "must not be negative (0 is none)"},
		{"TurnRate.PerMinute", c.TurnRate.PerMinute, c.TurnRate.PerMinute >= 0, "must not be negative (0 is none)"},
		{"TurnRate.Burst", c.TurnRate.Burst, c.TurnRate.Burst >= 0, "must not be negative (0 is none)"},
		{"ApprovalTTL", c.ApprovalTTL, c.ApprovalTTL > 0 || len(c.ApprovalTools) == 0, "must be positive when ApprovalTools are set"},
	} {
		if !f.ok {
			errs = append(errs, setting.Invalid(f.field, "%s, got %v", f.rule, f.value))
		}
	}
	return errors.Join(errs...)
}

// Engine runs chat turns. It keeps nothing between turns but the tools'
// definitions: any replica can take any turn.
type Engine struct {
	log     *slog.Logger
	turns   tasks.TurnStore
	servers ToolServers
	cfg     Config
	defs    toolDefs
}

// New returns an Engine over its dependencies.
func New(log *slog.Logger, turns tasks.TurnStore, servers ToolServers, cfg Config) (*Engine, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg.Telemetry.DeclareTurnOutcomes(outcomes...)
	return &Engine{log: log, turns: turns, servers: servers, cfg: cfg}, nil
}

// ModelName names the model the turns run on.
func (e *Engine) ModelName() string { return e.cfg.Model.Name() }

// claimFor is how long a turn holds its conversation, and a keyed request
// its key: the turn's deadline plus a margin for its last writes. A crashed
// replica's claim lapses after it, and the turn is then finished by
// whoever next touches the conversation or retries the request.
func (e *Engine) claimFor() time.Duration {
	return e.cfg.Limits.TurnTimeout + persistTimeout + 5*time.Second
}

// Run runs one turn and tells obs what happens as it happens. It returns
// the outcome, or an error: a domain error (tasks.ErrNotFound,
// ErrConversationBusy, ErrRequestInProgress, ErrKeyMismatch,
// ErrUnavailable, a *tasks.BudgetError), an *agent.ModelError, the
// context's error, each wrapped in a *PartialError when the turn had
// changed tasks before it failed.
func (e *Engine) Run(ctx context.Context, req Request, obs Observer) (Outcome, error) {
	if obs == nil {
		obs = func(Event) {}
	}
	turn, replay, err := e.begin(ctx, req)
	if req.Continue != 0 {
		turn, replay, err = e.beginContinued(ctx, req, turn, replay, err)
	}
	if err != nil || replay != nil {
		e.cfg.Telemetry.CountTurn(unstarted(err))
		return deref(replay), err
	}
	obs(startedEvent(turn, req.Continue != 0))
	// Run stays small, and the turn is passed by pointer: an idle stream
	// waits on its model at the bottom of this call chain, and every byte of
	// its frames is held by each of them (a few hundred more cost 16 KiB a
	// stream, when they push the goroutine's stack past a power of two).
	res, asked, runErr := e.runAgent(ctx, req, turn, obs)
	return e.finish(ctx, req, turn, res, asked, runErr)
}

// beginContinued begins a turn's continuation again while its
// conversation is busy: the turn that asked for the approvals may still be
// writing its reply when the person decides. It waits, as long as a turn
// may hold a conversation, for the conversation to be free.
func (e *Engine) beginContinued(ctx context.Context, req Request, turn *tasks.Turn, replay *Outcome, err error) (*tasks.Turn, *Outcome, error) {
	deadline := time.Now().Add(e.claimFor())
	for wait := 50 * time.Millisecond; errors.Is(err, tasks.ErrConversationBusy) && time.Now().Before(deadline); wait = min(2*wait, time.Second) {
		select {
		case <-ctx.Done():
			return turn, replay, err
		case <-time.After(wait):
		}
		turn, replay, err = e.begin(ctx, req)
	}
	return turn, replay, err
}

func deref(o *Outcome) Outcome {
	if o == nil {
		return Outcome{}
	}
	return *o
}

// begin makes the turn's first writes: the idempotency key, if any, then
// StartTurn. It returns a replay instead of a turn when the key already
// holds an outcome, or held a turn cut short after its tools ran. The
// writes must not be half-known, so once sent their outcome is read even
// if the client leaves meanwhile; their deadline ends with them.
func (e *Engine) begin(ctx context.Context, req Request) (*tasks.Turn, *Outcome, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), persistTimeout)
	defer cancel()
	if req.IdempotencyKey != "" {
		st, err := e.beginKey(ctx, req)
		switch {
		case err != nil:
			return nil, nil, err
		case st.Replay != nil:
			o, err := decodeOutcome(st.Replay)
			return nil, &o, err
		case st.CutShort != nil && req.Continue == 0:
			o, err := e.finishCutShort(ctx, req, *st.CutShort)
			return nil, &o, err
		}
		// A continuation cut short runs again: it runs no call twice (the
		// calls it made are its turn's, and are not made again), and the
		// decided calls it did not resolve still have to be.
	}
	turn, err := e.start(ctx, req)
	if err != nil {
		e.forgetKey(ctx, req)
		return nil, nil, err
	}
	return &turn, nil, nil
}

// beginKey begins a keyed request. The decisions that continue a turn
// come at once, from one person's clicks or retries, with one key (see
// Decide): one that finds the key taken before its turn started waits for
// the turn to start, to follow it (an *InProgressError) or replay it,
// rather than be refused.
func (e *Engine) beginKey(ctx context.Context, req Request) (tasks.KeyState, error) {
	wait := 10 * time.Millisecond
	for {
		st, err := e.turns.BeginIdempotent(ctx, tasks.IdempotentRequest{
			UserID: req.UserID, Key: req.IdempotencyKey, Hash: fingerprint(req),
			LockFor: e.claimFor(), KeepFor: e.cfg.IdempotencyTTL,
		})
		var started *tasks.InProgressError
		if req.Continue == 0 || !errors.Is(err, tasks.ErrRequestInProgress) || errors.As(err, &started) {
			return st, err
		}
		select {
		case <-ctx.Done():
			return st, err
		case <-time.After(wait):
			wait = min(2*wait, 200*time.Millisecond)
		}
	}
}

// finishCutShort answers a keyed retry whose first run was cut short after
// its tools changed tasks: it finishes that turn (the calls go to an
// interrupted reply) and replays what it did, marked interrupted. It never
// runs the turn again.
func (e *Engine) finishCutShort(ctx context.Context, req Request, ref tasks.TurnRef) (Outcome, error) {
	calls, err := e.turns.RecoverTurn(ctx, req.UserID, ref)
	if err != nil {
		return Outcome{}, err
	}
	o := Outcome{ConversationID: ref.ConversationID, TurnID: ref.TurnID, Interrupted: true, Replayed: true, ToolCalls: make([]ToolCall, len(calls))}
	for i, c := range calls {
		o.ToolCalls[i] = ToolCall{ID: c.CallID, Tool: c.Tool, Arguments: c.Arguments, Result: c.Result, IsError: c.IsError}
	}
	if err := e.turns.CompleteIdempotent(ctx, req.UserID, req.IdempotencyKey, encodeOutcome(o)); err != nil {
		return Outcome{}, err
	}
	e.log.InfoContext(ctx, "finished a turn cut short, for a retry of its request", "user_id", req.UserID, "conversation_id", ref.ConversationID, "tool_calls", len(calls))
	return o, nil
}

// runAgent runs a fresh agent with the user's tools, passing its events on.
// It returns, with the agent's result, the approvals its calls asked for.
func (e *Engine) runAgent(ctx context.Context, req Request, turn *tasks.Turn, obs Observer) (agent.Result, []tasks.Approval, error) {
	defs, err := e.defs.get(ctx, e.servers, req.UserID)
	if err != nil {
		return agent.Result{Stop: agent.StopCanceled}, nil, err
	}
	decisions, waiting, err := e.earlierApprovals(ctx, req, turn)
	if err != nil {
		return agent.Result{Stop: agent.StopCanceled}, nil, err
	}
	tools := newTurnTools(defs, e.servers, req.UserID, turn, e.cfg.Limits.ToolTimeout, e.cfg.Telemetry)
	tools.gate(e.turns, e.cfg.ApprovalTools, e.cfg.ApprovalTTL)
	tools.asked = waiting
	defer tools.Close()
	summary := turn.Conversation.Summary
	if turn.Compact {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, e.turnDeadline())
		defer cancel()
		summary = e.compactTurn(ctx, req.UserID, turn)
	}
	now := time.Now().In(tasks.Zone(turn.TimeZone))
	res, err := agent.Run(ctx, agent.Input{
		System:    agent.WithSummary(e.cfg.Prompt.Render(req.UserID, e.cfg.Model.Name(), now), summaryText(summary)),
		Now:       now,
		History:   agent.History(after(turn.History, summaryThrough(summary)), e.cfg.HistoryTokens),
		Message:   turn.UserMessage.Content,
		Resumed:   turn.Earlier,
		Decisions: decisions,
		Model:     e.cfg.Model,
		Tools:     tools,
		Limits:    e.cfg.Limits,
		Observer:  forward(obs, tools),
	})
	return res, tools.asked, err
}

// forward passes the agent's events on as the engine's, and, after the
// result of a call that waits, its approval.
func forward(obs Observer, tools *turnTools) agent.Observer {
	return func(ev agent.Event) {
		switch ev.Kind {
		case agent.EventDelta:
			obs(Event{Kind: EventDelta, Text: ev.Text})
		case agent.EventToolCall:
			c := toolCallOf(ev.Call)
			c.Result = nil
			obs(Event{Kind: EventToolCall, Call: &c, Round: ev.Call.Round})
		case agent.EventToolResult:
			c := toolCallOf(ev.Call)
			obs(Event{Kind: EventToolResult, Call: &c, Round: ev.Call.Round})
			if a := tools.approval(ev.Call.Awaiting); a != nil {
				obs(Event{Kind: EventApproval, Approval: a})
			}
		}
	}
}
