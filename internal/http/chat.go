package http

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/mcptools"
	"github.com/taskchat/taskchat/internal/tasks"
)

// maxChatBody is the largest chat request body accepted.
const maxChatBody = 64 << 10

// maxCachedServers is how many users' MCP servers a replica keeps built
// (a few kilobytes each); see mcptools.Servers.
const maxCachedServers = 1024

// persistTimeout bounds the writes that end a turn. They run on a context
// detached from the request, so a client that left still gets its turn saved.
const persistTimeout = 10 * time.Second

type chatRequest struct {
	ConversationID *int64 `json:"conversation_id"`
	Message        string `json:"message"`
}

type chatResponse struct {
	ConversationID int64          `json:"conversation_id"`
	Response       string         `json:"response"`
	ToolCalls      []toolCallJSON `json:"tool_calls"`
	// Interrupted is set only on a replay of a keyed turn that did not
	// complete (its client left, or the model failed after a tool ran).
	Interrupted bool `json:"interrupted,omitempty"`
}

type toolCallJSON struct {
	ID        string          `json:"id"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Result    json.RawMessage `json:"result"`
	IsError   bool            `json:"is_error"`
}

// chatTurn is one POST /chat request on its way through the turn.
type chatTurn struct {
	userID  string
	convID  int64
	message string
	key     string // Idempotency-Key, "" when absent
	stream  bool
}

// handleChatCreate runs one chat turn: verify (done by the middleware),
// load or create the conversation and store the message, run a fresh agent
// with the user's tools, store the reply and its audit, answer.
func handleChatCreate(log *slog.Logger, svc *tasks.Service, convs tasks.ConversationStore, cfg ChatConfig) http.Handler {
	limits := newUserLimits(cfg.TurnsPerMinute, cfg.TurnBurst, cfg.MaxStreams)
	defs := &toolDefs{svc: svc}
	servers := mcptools.NewServers(svc, maxCachedServers)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t, err := parseChat(w, r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		if err := limits.allowTurn(t.userID); err != nil {
			writeRateLimited(w, err)
			return
		}
		if t.stream {
			release, err := limits.openStream(t.userID)
			if err != nil {
				writeRateLimited(w, err)
				return
			}
			defer release()
		}
		h := &chatHandler{log: log, svc: svc, convs: convs, cfg: cfg, defs: defs, servers: servers}
		h.serve(w, r, t)
	})
}

// parseChat reads and validates the request.
func parseChat(w http.ResponseWriter, r *http.Request) (chatTurn, error) {
	var req chatRequest
	if err := decodeJSON(w, r, maxChatBody, &req); err != nil {
		return chatTurn{}, err
	}
	t := chatTurn{userID: userFrom(r.Context()), stream: wantsStream(r)}
	if req.ConversationID != nil {
		if *req.ConversationID <= 0 {
			return chatTurn{}, tasks.Invalid("conversation_id", "must be a positive integer")
		}
		t.convID = *req.ConversationID
	}
	msg, err := tasks.ValidateMessage(req.Message)
	if err != nil {
		return chatTurn{}, err
	}
	t.message = msg
	if keys := r.Header.Values("Idempotency-Key"); len(keys) > 0 {
		if len(keys) > 1 || !validKey(keys[0]) {
			return chatTurn{}, tasks.Invalid("Idempotency-Key", "must be one header of 1 to 255 visible ASCII characters")
		}
		t.key = strings.Trim(keys[0], `"`)
	}
	return t, nil
}

// wantsStream reports whether the client asked for Server-Sent Events.
func wantsStream(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		for _, part := range strings.Split(v, ",") {
			mt, _, _ := strings.Cut(part, ";")
			if strings.EqualFold(strings.TrimSpace(mt), "text/event-stream") {
				return true
			}
		}
	}
	return false
}

func validKey(k string) bool {
	k = strings.Trim(k, `"`) // the draft's sf-string form, quotes optional here
	if k == "" || len(k) > 255 {
		return false
	}
	for _, c := range []byte(k) {
		if c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

// fingerprint identifies what a keyed request asked for, so a retry can be
// told from a reuse of the key with another body.
func (t chatTurn) fingerprint() []byte {
	h := sha256.New()
	_ = binary.Write(h, binary.BigEndian, t.convID)
	h.Write([]byte(t.message))
	return h.Sum(nil)
}

// chatHandler carries a turn's dependencies.
type chatHandler struct {
	log     *slog.Logger
	svc     *tasks.Service
	convs   tasks.ConversationStore
	cfg     ChatConfig
	defs    *toolDefs
	servers *mcptools.Servers
}

func (h *chatHandler) serve(w http.ResponseWriter, r *http.Request, t chatTurn) {
	// The turn can be cancelled by the client leaving, or by the stream
	// finding that the client no longer reads.
	ctx, cancel := context.WithCancelCause(r.Context())
	defer cancel(nil)
	var out output = &jsonOutput{w: w, r: r, log: h.log}
	if t.stream {
		out = newSSEOutput(w, r, h.log, h.cfg, cancel)
	}
	defer out.close()
	turn, ok := h.begin(ctx, w, t, out)
	if !ok {
		return
	}
	infoFrom(ctx).conversationID = turn.Conversation.ID
	out.start(turn.Conversation.ID)
	res, runErr := h.run(ctx, t, turn, out)
	h.finish(ctx, t, turn, res, runErr, out)
}

// begin makes the turn's first writes: the idempotency key, if any, then
// StartTurn. It answers the request itself, and reports false, when the
// turn must not run: a replay, or a failure. The writes must not be
// half-known to us, so once sent their outcome is read even if the client
// leaves meanwhile; their deadline ends with them, not with the turn.
func (h *chatHandler) begin(ctx context.Context, w http.ResponseWriter, t chatTurn, out output) (tasks.Turn, bool) {
	ctx, cancel := context.WithTimeout(detach(ctx), persistTimeout)
	defer cancel()
	if t.key != "" {
		replay, err := h.convs.BeginIdempotent(ctx, tasks.IdempotentRequest{
			UserID: t.userID, Key: t.key, Hash: t.fingerprint(),
			LockFor: h.claimFor(), KeepFor: h.cfg.IdempotencyTTL,
		})
		if err != nil {
			out.fail(err)
			return tasks.Turn{}, false
		}
		if replay != nil {
			w.Header().Set("Idempotent-Replayed", "true")
			out.replay(replay)
			return tasks.Turn{}, false
		}
	}
	turn, err := h.convs.StartTurn(ctx, tasks.TurnStart{
		UserID: t.userID, ConversationID: t.convID, Message: t.message,
		HistoryLimit: h.cfg.HistoryLimit, ClaimFor: h.claimFor(),
	})
	if err != nil {
		h.forgetKey(ctx, t)
		out.fail(err)
		return tasks.Turn{}, false
	}
	return turn, true
}

// claimFor is how long a turn holds its conversation: its deadline plus a
// margin for storing the reply. A crashed replica's claim lapses after it.
func (h *chatHandler) claimFor() time.Duration {
	return h.cfg.Limits.TurnTimeout + persistTimeout + 5*time.Second
}

// run runs the agent with the user's tools, streaming events to out. The
// user's MCP session is opened only if the model calls a tool.
func (h *chatHandler) run(ctx context.Context, t chatTurn, turn tasks.Turn, out output) (agent.Result, error) {
	defs, err := h.defs.get(ctx)
	if err != nil {
		return agent.Result{Stop: agent.StopCanceled}, err
	}
	tools := agent.NewLazyTools(defs, func(ctx context.Context) (*mcp.ClientSession, error) {
		return h.servers.Connect(ctx, t.userID)
	})
	defer tools.Close()
	return agent.Run(ctx, agent.Input{
		System:   h.cfg.Prompt.Render(t.userID, h.cfg.Model.Name(), time.Now()),
		History:  agent.History(turn.History, h.cfg.HistoryTokens),
		Message:  t.message,
		Model:    h.cfg.Model,
		Tools:    tools,
		Limits:   h.cfg.Limits,
		Observer: out.event,
	})
}

// toolDefs holds the task tools' definitions, the same for every user, so
// they are listed over MCP once per process rather than once per turn.
type toolDefs struct {
	svc  *tasks.Service
	mu   sync.Mutex
	defs []agent.ToolDef
}

func (d *toolDefs) get(ctx context.Context) ([]agent.ToolDef, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.defs != nil {
		return d.defs, nil
	}
	cs, err := mcptools.Connect(ctx, "", d.svc) // listing touches no user's data
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	defs, err := agent.ListTools(ctx, cs)
	if err != nil {
		return nil, err
	}
	d.defs = defs
	return defs, nil
}

// finish stores what the turn did and answers. A turn that produced
// anything — text or tool calls — is stored, marked interrupted when it
// did not complete; one that produced nothing only releases its claim.
func (h *chatHandler) finish(ctx context.Context, t chatTurn, turn tasks.Turn, res agent.Result, runErr error, out output) {
	ctx, cancel := context.WithTimeout(detach(ctx), persistTimeout)
	defer cancel()
	resp := responseOf(turn.Conversation.ID, res, runErr)
	if runErr != nil && res.Reply == "" && len(res.Calls) == 0 {
		h.forgetKey(ctx, t)
		// AbandonTurn is also the durable commit that StartTurn's lazy one
		// waits for: until it succeeds the message may not be on disk, and
		// the client must not hear that it was saved.
		if err := h.convs.AbandonTurn(ctx, t.userID, turn.Conversation.ID, turn.ClaimToken); err != nil {
			h.log.ErrorContext(ctx, "release conversation", "conversation_id", turn.Conversation.ID, "err", err)
			out.fail(storeFailure(err))
			return
		}
		out.fail(runErr)
		return
	}
	end := tasks.TurnEnd{
		UserID: t.userID, ConversationID: turn.Conversation.ID, ClaimToken: turn.ClaimToken,
		Reply: res.Reply, Interrupted: runErr != nil, ToolCalls: auditOf(res.Calls),
	}
	// A keyed request keeps its key, with what the turn did to replay, when
	// the turn completed or changed something: a retry must not run the
	// tools again. A turn cut short before any tool ran frees the key, so a
	// retry gets a whole answer rather than a replay of a partial one.
	keep := t.key != "" && (runErr == nil || len(res.Calls) > 0)
	if keep {
		end.IdempotencyKey = t.key
		end.Response, _ = json.Marshal(resp)
	}
	if _, err := h.convs.FinishTurn(ctx, end); err != nil {
		h.log.ErrorContext(ctx, "store turn", "conversation_id", turn.Conversation.ID, "err", err)
		// Free the conversation now if the database allows, rather than
		// when the claim lapses. A key whose turn ran tools stays locked
		// until its lock lapses: a quick retry must not run them again.
		_ = h.convs.AbandonTurn(ctx, t.userID, turn.Conversation.ID, turn.ClaimToken)
		if len(res.Calls) == 0 {
			h.forgetKey(ctx, t)
		}
		out.fail(storeFailure(err))
		return
	}
	if !keep {
		h.forgetKey(ctx, t)
	}
	if runErr != nil {
		h.logTurnError(ctx, turn.Conversation.ID, runErr)
		out.fail(runErr)
		return
	}
	out.done(resp)
}

func (h *chatHandler) logTurnError(ctx context.Context, convID int64, err error) {
	if errors.Is(err, context.Canceled) {
		h.log.InfoContext(ctx, "turn interrupted: the client went away or the server is shutting down", "conversation_id", convID)
		return
	}
	h.log.WarnContext(ctx, "turn failed", "conversation_id", convID, "err", err)
}

// forgetKey lets a retry of a failed keyed request run again.
func (h *chatHandler) forgetKey(ctx context.Context, t chatTurn) {
	if t.key == "" {
		return
	}
	if err := h.convs.ForgetIdempotent(detach(ctx), t.userID, t.key); err != nil {
		h.log.ErrorContext(ctx, "forget idempotency key", "err", err)
	}
}

// storeFailure is what the client hears when the turn could not be stored:
// the database being down is 503, anything else is our fault (500), never
// the client's, whatever the database said about the model's output.
func storeFailure(err error) error {
	if errors.Is(err, tasks.ErrUnavailable) {
		return err
	}
	return fmt.Errorf("store turn: %v", err) // %v: not the domain's kinds
}

func responseOf(convID int64, res agent.Result, runErr error) chatResponse {
	calls := make([]toolCallJSON, len(res.Calls))
	for i, c := range res.Calls {
		calls[i] = toolCallOf(c.ID, c.Tool, c.Arguments, c.Result, c.IsError)
	}
	return chatResponse{ConversationID: convID, Response: res.Reply, ToolCalls: calls, Interrupted: runErr != nil}
}

// toolCallOf shapes a tool call for a client. Arguments that were not a
// JSON object are given as the model's raw text, a JSON string.
func toolCallOf(id, tool string, args, result json.RawMessage, isError bool) toolCallJSON {
	if !isJSONObject(args) {
		args, _ = json.Marshal(string(args))
	}
	if len(result) == 0 {
		result = json.RawMessage("null")
	}
	return toolCallJSON{ID: id, Tool: tool, Arguments: args, Result: result, IsError: isError}
}

func isJSONObject(raw json.RawMessage) bool {
	var obj map[string]json.RawMessage
	return json.Unmarshal(raw, &obj) == nil && obj != nil
}

func auditOf(calls []agent.Call) []tasks.ToolCall {
	out := make([]tasks.ToolCall, len(calls))
	for i, c := range calls {
		out[i] = tasks.ToolCall{CallID: c.ID, Tool: c.Tool, Arguments: c.Arguments, Result: c.Result,
			IsError: c.IsError, Round: c.Round, Duration: c.Duration}
	}
	return out
}
