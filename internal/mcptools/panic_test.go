package mcptools_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskchat/taskchat/internal/logtest"
	"github.com/taskchat/taskchat/internal/mcptools"
	"github.com/taskchat/taskchat/internal/store"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/tasks"
)

// panickyStore is the PostgreSQL store but for adding a task called
// "panic", which panics: a bug anywhere under a tool's handler.
type panickyStore struct{ tasks.Store }

func (s panickyStore) CreateTask(ctx context.Context, userID string, t tasks.NewTask, rec *tasks.CallRecord) (tasks.Task, error) {
	if t.Title == "panic" {
		panic("a bug under add_task")
	}
	return s.Store.CreateTask(ctx, userID, t, rec)
}

// A tool handler that panics does not take the process down (the SDK runs
// handlers on goroutines of its own, with no recover): the call is
// answered as a tool error, the panic is logged with its stack to the
// servers' own logger (slog's default one when they have none), the same
// server serves the next call, and an outside client's call is recorded
// with the answer it got. Not parallel: it reads slog's default logger.
func TestAPanickingToolAnswersAnError(t *testing.T) {
	defaults := &logtest.Buffer{}
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.NewJSONHandler(defaults, nil)))

	svc := tasks.NewService(panickyStore{store.NewTasks(storetest.Pool(t))})
	remote, local := storetest.UserID(t), storetest.UserID(t)
	remoteLogs, localLogs := &logtest.Buffer{}, &logtest.Buffer{}
	remoteServers, localServers := mcptools.NewRemoteServers(svc, 4), mcptools.NewServers(svc, 4)
	remoteServers.Log = slog.New(slog.NewJSONHandler(remoteLogs, nil))
	localServers.Log = slog.New(slog.NewJSONHandler(localLogs, nil))
	inProcess, err := localServers.Connect(context.Background(), local)
	if err != nil {
		t.Fatal(err)
	}
	defer inProcess.Close()
	unlogged, err := mcptools.Connect(context.Background(), storetest.UserID(t), svc)
	if err != nil {
		t.Fatal(err)
	}
	defer unlogged.Close()
	for _, c := range []struct {
		name string
		cs   *mcp.ClientSession
		logs *logtest.Buffer
	}{
		{"over HTTP", mustConnectHTTP(t, serveMCP(t, mcptools.NewHTTPHandler(remoteServers, nil)), remote), remoteLogs},
		{"in process", inProcess, localLogs},
		{"in process, with no logger", unlogged, defaults},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := mustCallResult(t, c.cs, "add_task", map[string]any{"title": "panic"})
			if !res.IsError || text(res) != "The task operation failed unexpectedly." {
				t.Fatalf("the panicking call answered %q (error %v)", text(res), res.IsError)
			}
			if got := mustCall(t, c.cs, "add_task", map[string]any{"title": "Buy milk"}); got["title"] != "Buy milk" {
				t.Fatalf("the next call answered %v", got)
			}
			// Each case's panic is logged once, where its servers log:
			// none in another's log, slog's default one above all.
			if l := c.logs.String(); strings.Count(l, `"msg":"MCP handler panicked"`) != 1 || !strings.Contains(l, `"panic":"a bug under add_task"`) || !strings.Contains(l, "panic_test.go") {
				t.Errorf("the log does not say once what panicked, and where:\n%s", l)
			}
		})
	}
	var isError bool
	var result string
	err = storetest.Pool(t).QueryRow(context.Background(),
		`SELECT is_error, result->>'error' FROM tool_calls WHERE user_id = $1 AND source = 'mcp' ORDER BY id LIMIT 1`, remote).Scan(&isError, &result)
	if err != nil || !isError || result != "The task operation failed unexpectedly." {
		t.Errorf("the panicking call's record: %v, %v, %q", err, isError, result)
	}
}
