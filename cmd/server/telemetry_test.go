package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/taskchat/taskchat/internal/store/storetest"
)

var metricsListening = regexp.MustCompile(`"msg":"metrics listening","addr":"([^"]+)"`)

// collector is an OTLP/HTTP endpoint that counts the trace exports it gets.
type collector struct {
	*httptest.Server
	mu      sync.Mutex
	exports int
	bad     []string
}

func newCollector(tb testing.TB) *collector {
	c := &collector{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		c.mu.Lock()
		defer c.mu.Unlock()
		if r.Method != "POST" || r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" || len(body) == 0 {
			c.bad = append(c.bad, r.Method+" "+r.URL.Path+" "+r.Header.Get("Content-Type"))
		} else {
			c.exports++
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	tb.Cleanup(c.Close)
	return c
}

func get(tb testing.TB, url string) (int, string) {
	tb.Helper()
	resp, err := http.Get(url)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestRunServesMetricsApartAndExportsSpans(t *testing.T) {
	t.Parallel()
	otlp := newCollector(t)
	base, stop, logs := mustRun(t, map[string]string{
		"METRICS_ADDR":                "127.0.0.1:0",
		"OTEL_EXPORTER_OTLP_ENDPOINT": otlp.URL,
		"USER_DAILY_TOKEN_BUDGET":     "1000000",
	})
	waitHealthy(t, base)
	m := metricsListening.FindStringSubmatch(logs.String())
	if m == nil {
		t.Fatalf("no metrics listener in the log:\n%s", logs)
	}
	user := storetest.UserID(t)
	tok := mustMint(t, user)
	postChat(t, base, tok, user, `{"message":"Add a task to buy milk"}`)

	status, text := get(t, "http://"+m[1]+"/metrics")
	for _, want := range []string{
		`taskchat_turns_total{outcome="completed"} 1`,
		`http_server_request_duration_seconds_count{http_request_method="POST",http_response_status_code="200",http_route="/api/{user_id}/chat"} 1`,
		`gen_ai_client_token_usage_count{gen_ai_operation_name="chat",gen_ai_provider_name="offline",gen_ai_request_model="offline",gen_ai_token_type="input"} `, // a call or two, as the offline model goes
		`gen_ai_execute_tool_duration_seconds_count{error_type="",gen_ai_tool_name="add_task"} 1`,
		`taskchat_db_pool_connections{state="idle"}`,
		`taskchat_open_streams 0`,
		`taskchat_connections_evicted_total 0`,
		`go_goroutines`,
	} {
		if status != 200 || !strings.Contains(text, want) {
			t.Errorf("metrics (%d) lack %s", status, want)
		}
	}
	if status, _ := get(t, base+"/metrics"); status != 404 {
		t.Errorf("the public port answers /metrics with %d", status)
	}

	req, _ := http.NewRequest("GET", base+"/api/"+user+"/usage", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var usage struct {
		Budget int64 `json:"daily_token_budget"`
		Total  struct {
			Total int64 `json:"total_tokens"`
			Turns int64 `json:"turns"`
		} `json:"total"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&usage)
	resp.Body.Close()
	if usage.Budget != 1_000_000 || usage.Total.Total <= 0 || usage.Total.Turns != 1 {
		t.Errorf("usage = %+v, want the budget and the offline model's estimate of one turn", usage)
	}

	if err := stop(); err != nil {
		t.Fatal(err)
	}
	otlp.mu.Lock()
	defer otlp.mu.Unlock()
	if otlp.exports == 0 || len(otlp.bad) > 0 {
		t.Fatalf("the collector got %d trace exports, and these it should not have: %v", otlp.exports, otlp.bad)
	}
}

func TestConfigOfTelemetry(t *testing.T) {
	t.Parallel()
	base := map[string]string{"DATABASE_URL": "postgres://x@localhost/db", "JWT_SECRET": secret}
	with := func(vars map[string]string) map[string]string {
		all := map[string]string{}
		for k, v := range base {
			all[k] = v
		}
		for k, v := range vars {
			all[k] = v
		}
		return all
	}
	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		for _, c := range []struct {
			vars map[string]string
			name string
		}{
			{map[string]string{"METRICS_ADDR": "9090"}, "METRICS_ADDR"},
			{map[string]string{"METRICS_ADDR": ":8080"}, "METRICS_ADDR"}, // ADDR's
			{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318"}, "OTEL_EXPORTER_OTLP_ENDPOINT"},
			{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "OTEL_EXPORTER_OTLP_PROTOCOL"},
			{map[string]string{"USER_DAILY_TOKEN_BUDGET": "-1"}, "USER_DAILY_TOKEN_BUDGET"},
			{map[string]string{"USER_DAILY_TOKEN_BUDGET": "lots"}, "USER_DAILY_TOKEN_BUDGET"},
			{map[string]string{"USER_DAILY_TOKEN_BUDGET": "1000000000001"}, "USER_DAILY_TOKEN_BUDGET"},
		} {
			if _, err := loadConfig(env(with(c.vars))); err == nil || !strings.Contains(err.Error(), c.name) {
				t.Errorf("%v: err = %v, want one naming %s", c.vars, err, c.name)
			}
		}
	})
	t.Run("the largest budget", func(t *testing.T) {
		t.Parallel()
		// 10^12 tokens: more than an int holds on a 32-bit platform.
		cfg, err := loadConfig(env(with(map[string]string{"USER_DAILY_TOKEN_BUDGET": "1000000000000"})))
		if err != nil || cfg.DailyTokenBudget != 1_000_000_000_000 {
			t.Fatalf("budget %d, %v; want 10^12", cfg.DailyTokenBudget, err)
		}
	})
	t.Run("accepted", func(t *testing.T) {
		t.Parallel()
		for _, c := range []struct {
			vars   map[string]string
			traces string
		}{
			{nil, ""},
			{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318/"}, "http://collector:4318/v1/traces"},
			{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:4318", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://b/traces"}, "https://b/traces"},
			{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:4318", "OTEL_SDK_DISABLED": "true"}, ""},
			{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:4318", "OTEL_TRACES_EXPORTER": "none"}, ""},
		} {
			cfg, err := loadConfig(env(with(c.vars)))
			if err != nil || cfg.TracesURL != c.traces {
				t.Errorf("%v: traces to %q, %v; want %q", c.vars, cfg.TracesURL, err, c.traces)
			}
		}
		cfg, err := loadConfig(env(with(map[string]string{"METRICS_ADDR": "127.0.0.1:9090", "USER_DAILY_TOKEN_BUDGET": "250000"})))
		if err != nil || cfg.MetricsAddr != "127.0.0.1:9090" || cfg.DailyTokenBudget != 250_000 {
			t.Errorf("metrics at %q, budget %d, %v", cfg.MetricsAddr, cfg.DailyTokenBudget, err)
		}
	})
}
