package http

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/agent/openaitest"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/telemetry"
	"github.com/taskchat/taskchat/internal/telemetry/telemetrytest"
)

// observedBy makes a test server observed by tel, as cmd/server wires it:
// the model wrapped, the engine and the handler given tel.
func observedBy(tel *telemetry.Telemetry) func(*serverConfig) {
	return func(c *serverConfig) {
		c.chat.Model = tel.Model(c.chat.Model, "openai")
		c.chat.Telemetry, c.api.Telemetry = tel, tel
	}
}

func TestMetricsAfterRealTurns(t *testing.T) {
	t.Parallel()
	tel := telemetry.New(prometheus.NewRegistry(), nil)
	tel.ObservePool(storetest.Pool(t))
	fake := newFakeOpenAI(t,
		openaitest.Step{Calls: []agent.ToolCall{{ID: "call_1", Name: "add_task", Arguments: `{"title":"Water the plants"}`}}},
		openaitest.Step{Text: "Added task 1."},
		openaitest.Step{Calls: []agent.ToolCall{{ID: "call_2", Name: "add_task", Arguments: `{"title":"Feed the cat"}`}}},
		openaitest.Step{Text: "Added task 2."},
		openaitest.Step{Calls: []agent.ToolCall{{ID: "call_3", Name: "complete_task", Arguments: `{"task_id":999}`}}},
		openaitest.Step{Text: "There is no task 999."},
		openaitest.Step{Status: 500},
	)
	s := mustServer(t, fake.Model(), observedBy(tel))
	user := storetest.UserID(t)
	tok := mustToken(t, user)

	// A JSON turn with a key, and its replay; a streamed turn; a turn whose
	// tool fails; a turn whose model fails; a list; a path that is no route.
	keyed := call{method: "POST", path: "/api/" + user + "/chat", token: tok, body: chatBody(0, "Add a task to water the plants"),
		header: http.Header{"Idempotency-Key": {"metrics-1"}}}
	for range 2 {
		if r := s.do(t, keyed); r.status != 200 {
			t.Fatalf("keyed turn = %d %s", r.status, r.body)
		}
	}
	resp := s.stream(t, context.Background(), user, chatBody(0, "Add a task to feed the cat"), nil)
	if events, _ := readEvents(t, resp.Body); eventNames(events) != "start,tool_call,tool_result,delta,delta,delta,done" {
		t.Fatalf("stream = %s", eventNames(events))
	}
	resp.Body.Close()
	if r := s.chat(t, user, 0, "Complete task 999"); r.status != 200 {
		t.Fatalf("turn with a failing tool = %d", r.status)
	}
	mustProblem(t, s.chat(t, user, 0, "Add a task to fail"), 502, "llm_unavailable")
	s.do(t, call{method: "GET", path: "/api/" + user + "/tasks", token: tok})
	s.do(t, call{method: "GET", path: "/nowhere"})

	m := telemetrytest.Scrape(t, tel)
	chat := []string{"http_request_method", "POST", "http_route", "/api/{user_id}/chat"}
	model := []string{"gen_ai_operation_name", "chat", "gen_ai_provider_name", "openai", "gen_ai_request_model", "fake-model"}
	want := map[string]float64{
		telemetrytest.Series("http_server_request_duration_seconds_count", append(chat, "http_response_status_code", "200")...):                                                    4,
		telemetrytest.Series("http_server_request_duration_seconds_count", append(chat, "http_response_status_code", "502")...):                                                    1,
		telemetrytest.Series("http_server_request_duration_seconds_count", "http_request_method", "GET", "http_route", "/api/{user_id}/tasks", "http_response_status_code", "200"): 1,
		telemetrytest.Series("http_server_request_duration_seconds_count", "http_request_method", "GET", "http_route", "", "http_response_status_code", "404"):                     1,

		telemetrytest.Series("taskchat_turns_total", "outcome", "completed"):       3,
		telemetrytest.Series("taskchat_turns_total", "outcome", "replayed"):        1,
		telemetrytest.Series("taskchat_turns_total", "outcome", "model_error"):     1,
		telemetrytest.Series("taskchat_turns_total", "outcome", "budget_exceeded"): 0,

		telemetrytest.Series("gen_ai_client_operation_duration_seconds_count", append(model, "error_type", "")...):             6,
		telemetrytest.Series("gen_ai_client_operation_duration_seconds_count", append(model, "error_type", "server_error")...): 1,
		telemetrytest.Series("gen_ai_client_token_usage_count", append(model, "gen_ai_token_type", "input")...):                6,
		telemetrytest.Series("gen_ai_client_token_usage_sum", append(model, "gen_ai_token_type", "input")...):                  60, // the fake reports 10 and 5 a call
		telemetrytest.Series("gen_ai_client_token_usage_sum", append(model, "gen_ai_token_type", "output")...):                 30,

		telemetrytest.Series("gen_ai_execute_tool_duration_seconds_count", "gen_ai_tool_name", "add_task", "error_type", ""):                2,
		telemetrytest.Series("gen_ai_execute_tool_duration_seconds_count", "gen_ai_tool_name", "complete_task", "error_type", "tool_error"): 1,

		"taskchat_open_streams": 0,
	}
	for s, v := range want {
		if got, ok := m[s]; !ok || got != v {
			t.Errorf("%s = %v (present %v), want %v", s, got, ok, v)
		}
	}
	if m["taskchat_db_pool_acquires_total"] == 0 || m[telemetrytest.Series("taskchat_db_pool_connections", "state", "idle")] == 0 {
		t.Errorf("the pool's metrics are missing or zero: acquires %v, idle %v",
			m["taskchat_db_pool_acquires_total"], m[telemetrytest.Series("taskchat_db_pool_connections", "state", "idle")])
	}
	for s := range m {
		if strings.Contains(s, user) || strings.Contains(s, "plants") {
			t.Errorf("series %s holds the raw path or message text", s)
		}
	}

	// The metrics are never on the public handler.
	mustProblem(t, s.do(t, call{method: "GET", path: "/metrics"}), 404, "not_found")
}

func TestMetricsCountOpenStreams(t *testing.T) {
	t.Parallel()
	tel := telemetry.New(prometheus.NewRegistry(), nil)
	release := make(chan struct{})
	fake := newFakeOpenAI(t, openaitest.Step{Text: "Done.", Wait: release})
	s := mustServer(t, fake.Model(), observedBy(tel))
	user := storetest.UserID(t)
	resp := s.stream(t, context.Background(), user, chatBody(0, "Wait for it"), nil)
	defer resp.Body.Close()
	waitFor(t, "the stream to be counted", func() bool { return telemetrytest.Scrape(t, tel)["taskchat_open_streams"] == 1 })
	close(release)
	readEvents(t, resp.Body)
	waitFor(t, "the stream to be uncounted", func() bool { return telemetrytest.Scrape(t, tel)["taskchat_open_streams"] == 0 })
}

func TestTracesOfATurn(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	fake := newFakeOpenAI(t,
		openaitest.Step{Calls: []agent.ToolCall{{ID: "call_1", Name: "add_task", Arguments: `{"title":"Water the plants"}`}}},
		openaitest.Step{Text: "Added task 1: Water the plants."})
	s := mustServer(t, fake.Model(), observedBy(telemetry.New(nil, tp)))
	user := storetest.UserID(t)

	// The caller's trace goes on through the server.
	parent := "4bf92f3577b34da6a3ce929d0e0e4736"
	r := s.do(t, call{method: "POST", path: "/api/" + user + "/chat", token: mustToken(t, user), body: chatBody(0, "Add a task to water the plants"),
		header: http.Header{"Traceparent": {"00-" + parent + "-00f067aa0ba902b7-01"}}})
	if r.status != 200 {
		t.Fatalf("turn = %d %s", r.status, r.body)
	}
	waitFor(t, "the request's span to end", func() bool { return len(rec.Ended()) == 4 })

	byName := map[string][]sdktrace.ReadOnlySpan{}
	for _, sp := range rec.Ended() {
		byName[sp.Name()] = append(byName[sp.Name()], sp)
		if sp.SpanContext().TraceID().String() != parent {
			t.Errorf("span %q is in trace %s, not the caller's", sp.Name(), sp.SpanContext().TraceID())
		}
		for _, kv := range sp.Attributes() {
			if v := strings.ToLower(kv.Value.String()); strings.Contains(v, "water") || strings.Contains(v, "plants") || strings.Contains(v, user) {
				t.Errorf("span %q attribute %s = %q holds message text, tool arguments or the user", sp.Name(), kv.Key, v)
			}
		}
	}
	server, models, tools := byName["POST /api/{user_id}/chat"], byName["chat fake-model"], byName["execute_tool add_task"]
	if len(server) != 1 || len(models) != 2 || len(tools) != 1 {
		t.Fatalf("spans = %v, want a request, two model calls and a tool call", rec.Ended())
	}
	req := server[0]
	mustAttrs(t, req, map[string]string{"http.request.method": "POST", "http.route": "/api/{user_id}/chat", "http.response.status_code": "200"})
	if req.SpanKind() != trace.SpanKindServer {
		t.Errorf("the request's span is of kind %s", req.SpanKind())
	}
	for _, sp := range append(models, tools...) {
		if sp.Parent().SpanID() != req.SpanContext().SpanID() {
			t.Errorf("span %q is not a child of the request's", sp.Name())
		}
	}
	mustAttrs(t, models[0], map[string]string{"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "fake-model",
		"gen_ai.usage.input_tokens": "10", "gen_ai.usage.output_tokens": "5", "gen_ai.response.finish_reasons": `["tool_calls"]`})
	mustAttrs(t, models[1], map[string]string{"gen_ai.response.finish_reasons": `["stop"]`})
	mustAttrs(t, tools[0], map[string]string{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "add_task", "gen_ai.tool.call.id": "call_1"})
	if !strings.Contains(s.logs.String(), `"trace_id":"`+parent+`"`) {
		t.Errorf("the access log does not carry the trace id:\n%s", s.logs)
	}
}

func mustAttrs(tb testing.TB, sp sdktrace.ReadOnlySpan, want map[string]string) {
	tb.Helper()
	got := map[string]string{}
	for _, kv := range sp.Attributes() {
		got[string(kv.Key)] = kv.Value.String()
	}
	for k, v := range want {
		if got[k] != v {
			tb.Errorf("span %q: %s = %q, want %q (all: %v)", sp.Name(), k, got[k], v, got)
		}
	}
}
