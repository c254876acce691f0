package http

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/agent/agenttest"
	"github.com/taskchat/taskchat/internal/agent/openaitest"
	"github.com/taskchat/taskchat/internal/auth"
	"github.com/taskchat/taskchat/internal/chat"
	"github.com/taskchat/taskchat/internal/logtest"
	"github.com/taskchat/taskchat/internal/mcptools"
	"github.com/taskchat/taskchat/internal/runs"
	"github.com/taskchat/taskchat/internal/store"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/tasks"
)

func TestMain(m *testing.M) { os.Exit(storetest.Run(m)) }

var testSecret = []byte("a-test-secret-that-is-long-enough-for-hs256")

// testServer is the real handler on real PostgreSQL behind httptest.
type testServer struct {
	*httptest.Server
	logs  *logtest.Buffer
	hub   *runs.Hub
	tools *mcptools.Servers // the engine's
}

// testAPIConfig lets a test send as many turns and streams as it likes.
var testAPIConfig = Config{MaxStreams: 100,
	Stream: StreamConfig{PingInterval: 15 * time.Second, WriteTimeout: 10 * time.Second}, WriteTimeout: 30 * time.Second,
	MCP: MCPConfig{RequestsPerMinute: 6000, Burst: 1000}}

// serverConfig is what a test server is built with. wrapTurns, when set,
// wraps the engine's store, for tests that inject faults into its writes.
type serverConfig struct {
	chat      chat.Config
	api       Config
	wrapTurns func(tasks.TurnStore) tasks.TurnStore
	// runs is how the turns' runs are written and followed; noListen
	// leaves the replica without its listening connection, so it polls.
	runs     runs.Config
	noListen bool
}

// testRuns writes a turn's events and polls for them sooner than a
// server does, so that tests wait less.
var testRuns = runs.Config{FlushEvery: 20 * time.Millisecond, PollEvery: 100 * time.Millisecond, StopWait: 3 * time.Second}

// mustServer starts NewServer with the given model; adjust may change the
// configuration before it starts.
func mustServer(tb testing.TB, model agent.Model, adjust ...func(*serverConfig)) *testServer {
	tb.Helper()
	pool := storetest.Pool(tb)
	return mustServerOn(tb, pool, model, adjust...)
}

func mustServerOn(tb testing.TB, db *pgxpool.Pool, model agent.Model, adjust ...func(*serverConfig)) *testServer {
	tb.Helper()
	verifier, err := auth.NewVerifier(auth.Config{Secret: testSecret})
	if err != nil {
		tb.Fatal(err)
	}
	cfg := serverConfig{
		chat: chat.Config{
			Model: model, Prompt: agent.DefaultPrompt(),
			Limits:       agenttest.Limits(),
			HistoryLimit: 50, HistoryTokens: 8000, IdempotencyTTL: 24 * time.Hour,
		},
		api:       withLimits(testAPIConfig, db),
		wrapTurns: func(t tasks.TurnStore) tasks.TurnStore { return t },
		runs:      testRuns,
	}
	for _, f := range adjust {
		f(&cfg)
	}
	logs := &logtest.Buffer{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	svc := tasks.NewService(store.NewTasks(db))
	tools := mcptools.NewServers(svc, 16)
	engine, err := chat.New(log, cfg.wrapTurns(store.NewTurns(db)), tools, cfg.chat)
	if err != nil {
		tb.Fatal(err)
	}
	hub := mustHub(tb, log, db, cfg)
	mcp := mcptools.NewHTTPHandler(mcptools.NewRemoteServers(svc, 16), log)
	h := NewServer(log, verifier, db, svc, store.NewConversations(db), engine, hub, mcp, cfg.api)
	s := &testServer{Server: httptest.NewServer(h), logs: logs, hub: hub, tools: tools}
	tb.Cleanup(func() { hub.Close(); s.Close() }) // followers end first
	return s
}

// withLimits is cfg with the streams' leases and /mcp's rate kept in db,
// as a server keeps them.
func withLimits(cfg Config, db *pgxpool.Pool) Config {
	cfg.Streams = store.NewLimits(db)
	cfg.MCP.Buckets = cfg.Streams.(*store.Limits)
	// A loaded test machine may take longer than a replica's usual wait to
	// answer; the tests of the rate itself must not meet the fallback
	// (TestMCPRateFallsBackToTheReplicaWhenTheDatabaseStalls sets its own).
	cfg.MCP.BucketWait = 10 * time.Second
	return cfg
}

// mustHub starts a replica's runs, with its listening connection on db's
// database unless cfg says none.
func mustHub(tb testing.TB, log *slog.Logger, db *pgxpool.Pool, cfg serverConfig) *runs.Hub {
	tb.Helper()
	hub, err := runs.New(log, store.NewRuns(db), cfg.runs)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(hub.Close)
	if !cfg.noListen {
		l := store.Listen(db.Config().ConnString(), log, []string{tasks.StopChannel}, hub.Notify, hub.Reconnected)
		tb.Cleanup(l.Close)
		hub.SetNotifier(l)
	}
	return hub
}

func mustToken(tb testing.TB, user string) string {
	tb.Helper()
	tok, err := auth.MintToken(testSecret, user, time.Hour, "", "", time.Now())
	if err != nil {
		tb.Fatal(err)
	}
	return tok
}

// call is one HTTP request of a test.
type call struct {
	method, path, token string
	body                string
	header              http.Header
	host                string // the request's Host, when not the server's address
}

// reply is a finished response with its body read.
type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) json(tb testing.TB) map[string]any {
	tb.Helper()
	var v map[string]any
	if err := json.Unmarshal(r.body, &v); err != nil {
		tb.Fatalf("body %q is not a JSON object: %v", r.body, err)
	}
	return v
}

func (s *testServer) do(tb testing.TB, c call) reply {
	tb.Helper()
	req, err := http.NewRequest(c.method, s.URL+c.path, strings.NewReader(c.body))
	if err != nil {
		tb.Fatal(err)
	}
	if c.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	for k, v := range c.header {
		req.Header[k] = v
	}
	if c.host != "" {
		req.Host = c.host
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: body}
}

// chat sends one JSON chat turn as user and checks it against the spec.
func (s *testServer) chat(tb testing.TB, user string, convID int64, message string) reply {
	tb.Helper()
	r := s.do(tb, call{method: "POST", path: "/api/" + user + "/chat", token: mustToken(tb, user), body: chatBody(convID, message)})
	mustMatchSpec(tb, "POST", "/api/{user_id}/chat", r.status, r.header, r.body)
	return r
}

// stream opens a streamed chat turn for user; ctx may end it early. The
// caller closes the body.
func (s *testServer) stream(tb testing.TB, ctx context.Context, user, body string, header http.Header) *http.Response {
	tb.Helper()
	req, err := http.NewRequestWithContext(ctx, "POST", s.URL+"/api/"+user+"/chat", strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+mustToken(tb, user))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	return resp
}

func chatBody(convID int64, message string) string {
	m := map[string]any{"message": message}
	if convID != 0 {
		m["conversation_id"] = convID
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// sseEvent is one parsed Server-Sent Event.
type sseEvent struct {
	id, name string
	data     map[string]any
}

// readEvents parses a whole event stream, failing on anything malformed.
func readEvents(tb testing.TB, body io.Reader) (events []sseEvent, pings int) {
	tb.Helper()
	sc := bufio.NewScanner(body)
	var cur sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.name != "" {
				events = append(events, cur)
			}
			cur = sseEvent{}
		case line == ": ping":
			pings++
		case strings.HasPrefix(line, "id: "):
			cur.id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &cur.data); err != nil {
				tb.Fatalf("event data %q is not JSON: %v", line, err)
			}
		default:
			tb.Fatalf("unexpected stream line %q", line)
		}
	}
	return events, pings
}

func eventNames(events []sseEvent) string {
	var names []string
	for _, e := range events {
		names = append(names, e.name)
	}
	return strings.Join(names, ",")
}

// newFakeOpenAI starts an OpenAI-compatible fake answering from script.
func newFakeOpenAI(tb testing.TB, script ...openaitest.Step) *openaitest.Server {
	tb.Helper()
	f := openaitest.New(script...)
	tb.Cleanup(f.Close)
	return f
}

// waitFor polls cond until it holds, failing tb if it has not come about
// within a deadline generous enough for a busy machine running the race
// detector: what is tested is that it comes about, not how fast.
func waitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			tb.Fatalf("timed out waiting for %s", what)
		case <-time.After(5 * time.Millisecond):
		}
	}
}
