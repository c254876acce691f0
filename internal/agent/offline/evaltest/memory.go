package evaltest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/mcptools"
	"github.com/taskchat/taskchat/internal/tasks"
	"github.com/taskchat/taskchat/internal/tasks/memstore"
)

// Limits bound a turn of the evaluation, in memory and through the engine
// alike: generous, so that a case is judged by what the model does, never
// by a limit.
var Limits = agent.Limits{MaxModelCalls: 10, MaxToolCalls: 20, MaxTokens: 1_000_000,
	TurnTimeout: 30 * time.Second, ToolTimeout: 10 * time.Second}

// The history a turn of the evaluation sees, as the chat engine is
// configured to give it: the newest HistoryLimit stored messages, within
// HistoryTokens.
const (
	HistoryLimit  = 50
	HistoryTokens = 8000
)

// Memory is a Chat that runs turns as the chat engine does, without a
// database: agent.Run with the model, the real MCP task tools
// (mcptools.NewServers) on an in-memory store (memstore), and each
// conversation kept as the engine stores it — the user's message, then
// the reply with its tool calls, arguments and results made storable — so
// that the model sees on each turn the history the engine would give it
// (agent.History). What it leaves out is what the engine adds around a
// turn and a model never sees: claims, idempotency keys, budgets, the
// audit's own rows and runs.
type Memory struct {
	model   agent.Model
	prompt  agent.Prompt
	svc     *tasks.Service
	servers *mcptools.Servers

	mu            sync.Mutex
	defs          []agent.ToolDef // listed once, as the engine lists them
	users         int
	conversations []conversation // by id, from 1
}

// conversation is one conversation's stored messages, oldest first.
type conversation struct {
	userID   string
	messages []tasks.Message
}

var _ Chat = (*Memory)(nil)

// NewMemory returns a Memory whose turns run on model.
func NewMemory(model agent.Model) *Memory {
	svc := tasks.NewService(memstore.NewTasks())
	return &Memory{model: model, prompt: agent.DefaultPrompt(), svc: svc, servers: mcptools.NewServers(svc, 16)}
}

// Tasks is the service over the in-memory store.
func (m *Memory) Tasks() *tasks.Service { return m.svc }

// NewUser returns the next of user-1, user-2…
func (m *Memory) NewUser(testing.TB) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.users++
	return fmt.Sprintf("user-%d", m.users)
}

// Say runs one turn as the chat engine's runAgent does, and stores it as
// the engine's finish does: a turn that produced nothing stores no reply.
func (m *Memory) Say(ctx context.Context, userID string, conversationID int64, message string) (Turn, error) {
	defs, err := m.definitions(ctx, userID)
	if err != nil {
		return Turn{}, err
	}
	id, history, err := m.start(userID, conversationID, message)
	if err != nil {
		return Turn{}, err
	}
	tools := agent.NewLazyTools(defs, func(ctx context.Context) (*mcp.ClientSession, func(bool), error) {
		return m.servers.Session(ctx, userID)
	})
	defer tools.Close()
	res, err := agent.Run(ctx, agent.Input{
		System:  m.prompt.Render(userID, m.model.Name(), time.Now()),
		History: agent.History(history, HistoryTokens),
		Message: message,
		Model:   m.model,
		Tools:   tools,
		Limits:  Limits,
	})
	reply := m.finish(id, res, err != nil)
	if err != nil {
		return Turn{}, err
	}
	turn := Turn{ConversationID: id, Reply: res.Reply}
	for _, c := range reply.ToolCalls {
		turn.Calls = append(turn.Calls, Call{Tool: c.Tool, Arguments: c.Arguments})
	}
	return turn, nil
}

// definitions lists the tools over MCP once, from the first turn's
// session, as the engine does.
func (m *Memory) definitions(ctx context.Context, userID string) ([]agent.ToolDef, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.defs != nil {
		return m.defs, nil
	}
	cs, release, err := m.servers.Session(ctx, userID)
	if err != nil {
		return nil, err
	}
	defs, err := agent.ListTools(ctx, cs)
	release(err == nil)
	m.defs = defs
	return defs, err
}

// start stores the user's message in the conversation, a new one when
// conversationID is 0, and returns the conversation and the history
// before the message: its newest HistoryLimit messages, as StartTurn
// loads them.
func (m *Memory) start(userID string, conversationID int64, message string) (int64, []tasks.Message, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if conversationID == 0 {
		m.conversations = append(m.conversations, conversation{userID: userID})
		conversationID = int64(len(m.conversations))
	}
	if conversationID < 0 || conversationID > int64(len(m.conversations)) || m.conversations[conversationID-1].userID != userID {
		return 0, nil, tasks.NotFound("conversation", conversationID)
	}
	c := &m.conversations[conversationID-1]
	history := c.messages[max(0, len(c.messages)-HistoryLimit):]
	history = append([]tasks.Message(nil), history...)
	c.messages = append(c.messages, tasks.Message{ConversationID: conversationID, Role: tasks.RoleUser, Content: message})
	return conversationID, history, nil
}

// finish stores the turn's reply with its tool calls, made storable as
// the engine and the store make them, unless the turn failed having
// produced nothing; it returns the reply as stored.
func (m *Memory) finish(conversationID int64, res agent.Result, failed bool) tasks.Message {
	reply := tasks.Message{ConversationID: conversationID, Role: tasks.RoleAssistant, Content: tasks.StorableText(res.Reply), Interrupted: failed}
	for _, c := range res.Calls {
		reply.ToolCalls = append(reply.ToolCalls, tasks.ToolCall{CallID: c.ID, Tool: c.Tool, Arguments: storableArguments(c.Arguments),
			Result: storableResult(c.Tool, c.Result, c.IsError), IsError: c.IsError, Round: c.Round, Seq: c.Seq, Duration: c.Duration})
	}
	if failed && res.Reply == "" && len(res.Calls) == 0 {
		return reply
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	c := &m.conversations[conversationID-1]
	c.messages = append(c.messages, reply)
	return reply
}

// storableArguments are a call's arguments as the engine stores them: the
// object the model wrote, or its text as a JSON string when that was not
// a storable object.
func storableArguments(raw json.RawMessage) json.RawMessage {
	if b, ok := tasks.StorableJSON(raw); ok && bytes.HasPrefix(bytes.TrimLeft(b, " \t\r\n"), []byte("{")) {
		return tasks.StoredJSON(b)
	}
	b, _ := json.Marshal(tasks.StorableText(string(raw)))
	return tasks.StoredJSON(b)
}

// storableResult is a call's result as the store keeps it: null when the
// call never ran, a listing's summary (tasks.StoredResult), anything else
// bounded (tasks.StoredJSON).
func storableResult(tool string, raw json.RawMessage, isError bool) json.RawMessage {
	switch {
	case len(raw) == 0:
		return json.RawMessage("null")
	case isError:
		return tasks.StoredJSON(raw)
	}
	return tasks.StoredResult(tool, raw)
}
