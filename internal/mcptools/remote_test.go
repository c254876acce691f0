package mcptools_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskchat/taskchat/internal/auth/authtest"
	"github.com/taskchat/taskchat/internal/mcptools"
	"github.com/taskchat/taskchat/internal/store"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/tasks"
)

// tokenIsUser is a test's token verifier: the token is the user's id. The
// HTTP front verifies real tokens (internal/http); here only the binding
// of a request to its user is under test.
func tokenIsUser(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	return &auth.TokenInfo{UserID: token, Expiration: time.Now().Add(time.Hour)}, nil
}

// serveMCP serves h behind the SDK's bearer middleware, with tokenIsUser.
func serveMCP(tb testing.TB, h http.Handler) string {
	tb.Helper()
	s := httptest.NewServer(auth.RequireBearerToken(tokenIsUser, nil)(h))
	tb.Cleanup(s.Close)
	return s.URL
}

func connectHTTP(tb testing.TB, url, token string) (*mcp.ClientSession, error) {
	tb.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "remote-test", Version: "1.0.0"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: url, HTTPClient: &http.Client{Transport: authtest.Bearer(token)}, MaxRetries: -1, DisableStandaloneSSE: true,
	}, nil)
	if err == nil {
		tb.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

func mustConnectHTTP(tb testing.TB, url, token string) *mcp.ClientSession {
	tb.Helper()
	cs, err := connectHTTP(tb, url, token)
	if err != nil {
		tb.Fatalf("connect as %s: %v", token, err)
	}
	return cs
}

// NewHTTPHandler serves each request on the server of its token's user,
// however the cache evicts and whoever asked before.
func TestHTTPHandlerBindsEachRequestToItsTokensUser(t *testing.T) {
	t.Parallel()
	svc := tasks.NewService(store.NewTasks(storetest.Pool(t)))
	url := serveMCP(t, mcptools.NewHTTPHandler(mcptools.NewRemoteServers(svc, 1), nil)) // every other request evicts
	alice, bob := storetest.UserID(t), storetest.UserID(t)
	ca, cb := mustConnectHTTP(t, url, alice), mustConnectHTTP(t, url, bob)
	for i := range 3 {
		mustCall(t, ca, "add_task", map[string]any{"title": fmt.Sprintf("alice's %d", i)})
		mustCall(t, cb, "add_task", map[string]any{"title": fmt.Sprintf("bob's %d", i)})
	}
	for user, cs := range map[string]*mcp.ClientSession{"alice's": ca, "bob's": cb} {
		list := mustCall(t, cs, "list_tasks", nil)["tasks"].([]any)
		for _, task := range list {
			if title := task.(map[string]any)["title"].(string); !strings.HasPrefix(title, user) {
				t.Fatalf("%s list holds %q", user, title)
			}
		}
		if len(list) != 3 {
			t.Fatalf("%s list = %v", user, list)
		}
	}
}

// A request that reaches the handler without a token's user gets no
// server at all.
func TestHTTPHandlerWithoutAUserServesNothing(t *testing.T) {
	t.Parallel()
	svc := tasks.NewService(store.NewTasks(storetest.Pool(t)))
	s := httptest.NewServer(mcptools.NewHTTPHandler(mcptools.NewRemoteServers(svc, 1), nil)) // no bearer middleware
	defer s.Close()
	if _, err := connectHTTP(t, s.URL, "alice"); err == nil {
		t.Fatal("a session opened with no token's user behind it")
	}
}

// A remote server acts only for requests whose token names its user. One
// handed another user's request (a routing bug) refuses it; one reached in
// process, with no token at all, refuses everything.
func TestRemoteServerServesOnlyItsUser(t *testing.T) {
	t.Parallel()
	svc := tasks.NewService(store.NewTasks(storetest.Pool(t)))
	alice, bob := storetest.UserID(t), storetest.UserID(t)
	alicesServer := mcptools.NewRemoteServer(alice, svc)
	misrouted := serveMCP(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return alicesServer },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true}))

	mustCall(t, mustConnectHTTP(t, misrouted, alice), "add_task", map[string]any{"title": "alice's"})
	if _, err := connectHTTP(t, misrouted, bob); err == nil || !strings.Contains(err.Error(), "not for this server's user") {
		t.Fatalf("bob's session on alice's server: %v, want it refused", err)
	}
	if _, err := mcptools.NewRemoteServers(svc, 1).Connect(context.Background(), alice); err == nil {
		t.Fatal("an in-process session, with no token, was served")
	}
	alicesList := mustCall(t, mustConnectHTTP(t, misrouted, alice), "list_tasks", nil)["tasks"].([]any)
	if len(alicesList) != 1 {
		t.Fatalf("alice's tasks = %v", alicesList)
	}
}

// BenchmarkNewRemoteServer is what building a server for every request
// would cost, against BenchmarkRemoteServerCached, what a cached one costs.
func BenchmarkNewRemoteServer(b *testing.B) {
	svc := tasks.NewService(store.NewTasks(storetest.Pool(b)))
	b.ReportAllocs()
	for b.Loop() {
		mcptools.NewRemoteServer("bench-user", svc)
	}
}

func BenchmarkRemoteServerCached(b *testing.B) {
	servers := mcptools.NewRemoteServers(tasks.NewService(store.NewTasks(storetest.Pool(b))), 16)
	b.ReportAllocs()
	for b.Loop() {
		servers.Server("bench-user")
	}
}

// BenchmarkRemoteAddTask measures one add_task over HTTP, from the go-sdk
// client to PostgreSQL and back: the request's session on the user's
// cached server, the change and its audit row in one statement.
func BenchmarkRemoteAddTask(b *testing.B) {
	svc := tasks.NewService(store.NewTasks(storetest.Pool(b)))
	url := serveMCP(b, mcptools.NewHTTPHandler(mcptools.NewRemoteServers(svc, 16), nil))
	cs := mustConnectHTTP(b, url, storetest.UserID(b))
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add_task", Arguments: map[string]any{"title": fmt.Sprintf("task %d", i)}})
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}
