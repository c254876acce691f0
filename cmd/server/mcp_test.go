package main

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskchat/taskchat/internal/auth/authtest"
	"github.com/taskchat/taskchat/internal/store/storetest"
)

// The server that run builds serves /mcp with the token the token command
// mints, and logs neither the token nor what the tools were asked.
func TestRunServesMCP(t *testing.T) {
	t.Parallel()
	base, _, logs := mustRun(t, map[string]string{"PUBLIC_URL": "https://tasks.example.com/"})
	waitHealthy(t, base)
	tok := mustMint(t, storetest.UserID(t))
	client := mcp.NewClient(&mcp.Implementation{Name: "run-test", Version: "1.0.0"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: authtest.Bearer(tok)}, MaxRetries: -1,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "add_task", Arguments: map[string]any{"title": "Feed the cat"}})
	if err != nil || res.IsError {
		t.Fatalf("add_task: %v %+v", err, res)
	}

	resp, err := http.Post(base+"/mcp", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	want := `resource_metadata="https://tasks.example.com/.well-known/oauth-protected-resource/mcp"`
	if got := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != 401 || !strings.HasSuffix(got, want) {
		t.Fatalf("without a token: %d, WWW-Authenticate %q; want 401 pointing at PUBLIC_URL's metadata", resp.StatusCode, got)
	}
	if l := logs.String(); strings.Contains(l, tok) || strings.Contains(l, "Feed the cat") || !strings.Contains(l, `"path":"/mcp"`) {
		t.Fatalf("the log holds a token or a tool's arguments, or lacks the requests:\n%s", l)
	}
}

func TestConfigOfMCP(t *testing.T) {
	t.Parallel()
	base := map[string]string{"DATABASE_URL": "postgres://x@localhost/db", "JWT_SECRET": secret}
	with := func(vars map[string]string) func(string) string {
		all := map[string]string{}
		for k, v := range base {
			all[k] = v
		}
		for k, v := range vars {
			all[k] = v
		}
		return env(all)
	}
	t.Run("defaults", func(t *testing.T) {
		t.Parallel()
		cfg, err := loadConfig(with(nil))
		if err != nil || cfg.MCPRequestsPerMinute != 120 || cfg.MCPBurst != 30 || cfg.PublicURL != "" || cfg.MCPAuthorizationServers != nil {
			t.Fatalf("%+v, %v", cfg, err)
		}
	})
	t.Run("authorization servers", func(t *testing.T) {
		t.Parallel()
		for _, c := range []struct {
			vars map[string]string
			want []string
		}{
			{map[string]string{"JWT_ISSUER": "https://auth.example.com"}, []string{"https://auth.example.com"}},
			{map[string]string{"JWT_ISSUER": "taskchat"}, nil}, // not a URL: not an OAuth issuer
			{map[string]string{"JWT_ISSUER": "https://auth.example.com", "MCP_AUTHORIZATION_SERVERS": " https://a.example.com, https://b.example.com/x "},
				[]string{"https://a.example.com", "https://b.example.com/x"}},
		} {
			cfg, err := loadConfig(with(c.vars))
			if err != nil || !reflect.DeepEqual(cfg.MCPAuthorizationServers, c.want) {
				t.Errorf("%v: %v, %v; want %v", c.vars, cfg.MCPAuthorizationServers, err, c.want)
			}
		}
	})
	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		_, err := loadConfig(with(map[string]string{
			"PUBLIC_URL":                         "tasks.example.com",
			"MCP_AUTHORIZATION_SERVERS":          "https://a.example.com,auth",
			"RATE_LIMIT_MCP_REQUESTS_PER_MINUTE": "-1",
			"RATE_LIMIT_MCP_BURST":               "0",
		}))
		for _, name := range []string{"PUBLIC_URL", "MCP_AUTHORIZATION_SERVERS", "RATE_LIMIT_MCP_REQUESTS_PER_MINUTE", "RATE_LIMIT_MCP_BURST"} {
			if err == nil || !strings.Contains(err.Error(), name) {
				t.Errorf("the error does not name %s: %v", name, err)
			}
		}
	})
}
