package chat_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/agent/agenttest"
	"github.com/taskchat/taskchat/internal/chat"
	"github.com/taskchat/taskchat/internal/logtest"
	"github.com/taskchat/taskchat/internal/mcptools"
	"github.com/taskchat/taskchat/internal/store"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/tasks"
)

func TestMain(m *testing.M) { os.Exit(storetest.Run(m)) }

// testConfig is a complete configuration with generous limits, on model.
func testConfig(model agent.Model) chat.Config {
	return chat.Config{
		Model:        model,
		Prompt:       agent.DefaultPrompt(),
		Limits:       agenttest.Limits(),
		HistoryLimit: 50, HistoryTokens: 8000, IdempotencyTTL: 24 * time.Hour,
	}
}

// engineEnv is an engine on the package's real database, with what a test
// reads back: the stored conversations, the user's tasks, the logs.
type engineEnv struct {
	engine *chat.Engine
	convs  *store.Conversations
	tasks  *store.Tasks
	logs   *logtest.Buffer
}

// mustEngine builds the engine as cmd/server does, on real PostgreSQL and
// the real MCP task tools, with model.
func mustEngine(tb testing.TB, model agent.Model) engineEnv {
	tb.Helper()
	return mustEngineWith(tb, model, nil, nil)
}

// mustEngineWith is mustEngine with the turn store wrapped by wrap and the
// configuration changed by adjust, when they are not nil.
func mustEngineWith(tb testing.TB, model agent.Model, wrap func(tasks.TurnStore) tasks.TurnStore, adjust func(*chat.Config)) engineEnv {
	tb.Helper()
	pool := storetest.Pool(tb)
	logs := &logtest.Buffer{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	taskStore := store.NewTasks(pool)
	var turns tasks.TurnStore = store.NewTurns(pool)
	if wrap != nil {
		turns = wrap(turns)
	}
	cfg := testConfig(model)
	if adjust != nil {
		adjust(&cfg)
	}
	engine, err := chat.New(log, turns, mcptools.NewServers(tasks.NewService(taskStore), 16), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return engineEnv{engine: engine, convs: store.NewConversations(pool), tasks: taskStore, logs: logs}
}

// mustTasks returns the user's tasks.
func (e engineEnv) mustTasks(tb testing.TB, user string) []tasks.Task {
	tb.Helper()
	return storetest.Tasks(tb, e.tasks, user, tasks.StatusAll)
}

// mustMessages reads the conversation as a client would, in one page.
func (e engineEnv) mustMessages(tb testing.TB, user string, convID int64) []tasks.Message {
	tb.Helper()
	page, err := e.convs.Messages(context.Background(), user, convID, 1000, 1<<30, "")
	if err != nil {
		tb.Fatalf("messages of conversation %d: %v", convID, err)
	}
	return page.Items
}

// mustNotLogErrors fails if the engine logged at level ERROR.
func (e engineEnv) mustNotLogErrors(tb testing.TB) {
	tb.Helper()
	if strings.Contains(e.logs.String(), `"level":"ERROR"`) {
		tb.Fatalf("the engine logged an error:\n%s", e.logs)
	}
}

// round is what a scripted model does in one model call of a turn.
type round func(ctx context.Context, onText func(string)) (agent.Response, error)

// script is a model that answers the nth model call of each turn with
// rounds[n], the last round repeating.
func script(rounds ...round) agent.Model {
	return agenttest.ModelFunc(func(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
		n := 0 // the assistant messages since the turn's user message
		for _, m := range req.Messages {
			switch m.Role {
			case agent.RoleUser:
				n = 0
			case agent.RoleAssistant:
				n++
			}
		}
		return rounds[min(n, len(rounds)-1)](ctx, onText)
	})
}

// calls is a round that asks for the given tool calls, written
// "id tool arguments", after saying text.
func calls(text string, specs ...string) round {
	return func(ctx context.Context, onText func(string)) (agent.Response, error) {
		resp := agent.Response{Text: text}
		onText(text)
		for _, s := range specs {
			parts := strings.SplitN(s, " ", 3)
			resp.ToolCalls = append(resp.ToolCalls, agent.ToolCall{ID: parts[0], Name: parts[1], Arguments: parts[2]})
		}
		return resp, nil
	}
}

// say is a round that streams text word by word and ends the turn.
func say(text string) round {
	return func(ctx context.Context, onText func(string)) (agent.Response, error) {
		for _, w := range strings.SplitAfter(text, " ") {
			onText(w)
		}
		return agent.Response{Text: text}, nil
	}
}

// failWith is a round whose model call fails with kind.
func failWith(kind error) round {
	return func(context.Context, func(string)) (agent.Response, error) {
		return agent.Response{}, &agent.ModelError{Kind: kind, Status: 500}
	}
}

// then runs before, then round r.
func then(before func(ctx context.Context), r round) round {
	return func(ctx context.Context, onText func(string)) (agent.Response, error) {
		before(ctx)
		return r(ctx, onText)
	}
}

// mustSameCall fails unless the stored call is the one the client was told of.
func mustSameCall(tb testing.TB, stored tasks.ToolCall, told chat.ToolCall) {
	tb.Helper()
	kept := told.Result // what the store keeps of it: a listing's summary (tasks.StoredResult)
	if !told.IsError && len(kept) > 0 {
		kept = tasks.StoredResult(told.Tool, kept)
	}
	if stored.CallID != told.ID || stored.Tool != told.Tool || stored.IsError != told.IsError ||
		!sameJSON(stored.Arguments, told.Arguments) || !sameJSON(stored.Result, kept) {
		tb.Fatalf("stored call %s %s(%s) = %s (error %v)\nclient was told %s %s(%s) = %s (error %v)",
			stored.CallID, stored.Tool, stored.Arguments, stored.Result, stored.IsError,
			told.ID, told.Tool, told.Arguments, told.Result, told.IsError)
	}
}

// mustSameOutcome fails unless two outcomes say the same, JSON compared by
// value: PostgreSQL's jsonb keeps a replay's JSON in its own spacing.
func mustSameOutcome(tb testing.TB, got, want chat.Outcome) {
	tb.Helper()
	same := got.ConversationID == want.ConversationID && got.Reply == want.Reply &&
		got.Interrupted == want.Interrupted && len(got.ToolCalls) == len(want.ToolCalls)
	for i := 0; same && i < len(got.ToolCalls); i++ {
		same = sameCall(got.ToolCalls[i], want.ToolCalls[i])
	}
	if !same {
		tb.Fatalf("outcome\n got %s\nwant %s", describeOutcome(got), describeOutcome(want))
	}
}

func sameCall(a, b chat.ToolCall) bool {
	return a.ID == b.ID && a.Tool == b.Tool && a.IsError == b.IsError &&
		sameJSON(a.Arguments, b.Arguments) && sameJSON(a.Result, b.Result)
}

func describeOutcome(o chat.Outcome) string {
	s := fmt.Sprintf("conversation %d, reply %q, interrupted %v, replayed %v", o.ConversationID, o.Reply, o.Interrupted, o.Replayed)
	for _, c := range o.ToolCalls {
		s += fmt.Sprintf("\n  %s %s(%s) = %s (error %v)", c.ID, c.Tool, c.Arguments, c.Result, c.IsError)
	}
	return s
}

// sameJSON reports whether a and b are the same JSON value.
func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return bytes.Equal(ja, jb)
}
