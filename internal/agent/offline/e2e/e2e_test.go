package e2e

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/agent/offline"
	"github.com/taskchat/taskchat/internal/agent/offline/evaltest"
	"github.com/taskchat/taskchat/internal/chat"
	"github.com/taskchat/taskchat/internal/mcptools"
	"github.com/taskchat/taskchat/internal/store"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/tasks"
)

// TestMain gives the evaluation a database of this package's own.
func TestMain(m *testing.M) { os.Exit(storetest.Run(m)) }

var all = flag.Bool("all", false, "run every case of the evaluation through the engine, not a sample")

// sampleEvery picks the sample: every 15th case of each kind, from the
// first: cases of every kind, conversations of several messages among
// them.
const sampleEvery = 15

// TestEvaluation runs a sample of the evaluation's cases through the real
// chat engine, MCP tools and PostgreSQL, judged as the offline package
// judges them in memory, and prints the pass rate by kind. Each case is
// then played again on the in-memory chat the offline package's
// evaluation runs on, which must answer every message with the same reply
// and the same tool calls: a case that behaves differently in memory is a
// flaw of the in-memory store or turn, never of the case.
func TestEvaluation(t *testing.T) {
	cases, err := evaltest.Load("../testdata/eval")
	if err != nil {
		t.Fatal(err)
	}
	if !*all {
		cases = evaltest.Sample(cases, sampleEvery)
	}
	results := evaltest.Run(t, mustEngine(t), cases)
	memory := evaltest.NewMemory(offline.New())
	for _, want := range results {
		if got := evaltest.Play(t, memory, want.Case); got.Transcript != want.Transcript {
			t.Errorf("%s: in memory, the conversation went\n%s\nthrough the engine\n%s", want.Case.Name(), got.Transcript, want.Transcript)
		}
	}
	multi := 0
	for _, c := range cases {
		if len(c.Say) > 1 {
			multi++
		}
	}
	t.Logf("%d cases through the engine, %d of them conversations of several messages", len(cases), multi)
}

// engineChat is the chat engine on PostgreSQL, with the offline model.
type engineChat struct {
	engine *chat.Engine
	svc    *tasks.Service
}

func mustEngine(tb testing.TB) engineChat {
	tb.Helper()
	pool := storetest.Pool(tb)
	svc := tasks.NewService(store.NewTasks(pool))
	cfg := chat.Config{
		Model:          offline.New(),
		Prompt:         agent.DefaultPrompt(),
		Limits:         evaltest.Limits,
		HistoryLimit:   evaltest.HistoryLimit,
		HistoryTokens:  evaltest.HistoryTokens,
		IdempotencyTTL: time.Hour,
	}
	engine, err := chat.New(slog.New(slog.NewTextHandler(io.Discard, nil)), store.NewTurns(pool), mcptools.NewServers(svc, 16), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return engineChat{engine: engine, svc: svc}
}

func (e engineChat) Tasks() *tasks.Service { return e.svc }

func (e engineChat) NewUser(tb testing.TB) string { return storetest.UserID(tb) }

func (e engineChat) Say(ctx context.Context, userID string, conversationID int64, message string) (evaltest.Turn, error) {
	out, err := e.engine.Run(ctx, chat.Request{UserID: userID, ConversationID: conversationID, Message: message}, nil)
	if err != nil {
		return evaltest.Turn{}, err
	}
	turn := evaltest.Turn{ConversationID: out.ConversationID, Reply: out.Reply}
	for _, c := range out.ToolCalls {
		turn.Calls = append(turn.Calls, evaltest.Call{Tool: c.Tool, Arguments: c.Arguments})
	}
	return turn, nil
}
