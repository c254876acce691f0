package telemetry_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/agent/agenttest"
	"github.com/taskchat/taskchat/internal/telemetry"
	"github.com/taskchat/taskchat/internal/telemetry/telemetrytest"
)

func newRecorded() (*tracetest.SpanRecorder, *sdktrace.TracerProvider) {
	rec := tracetest.NewSpanRecorder()
	return rec, sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
}

func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

func TestModelCallsAreObserved(t *testing.T) {
	t.Parallel()
	rec, tp := newRecorded()
	tel := telemetry.New(prometheus.NewRegistry(), tp)
	calls := 0
	model := tel.Model(agenttest.Named{ModelName: "m-1", ModelFunc: func(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
		calls++
		if calls == 2 {
			return agent.Response{}, &agent.ModelError{Kind: agent.ErrModelTimeout}
		}
		onText("Secret reply text")
		return agent.Response{Text: "Secret reply text", ToolCalls: []agent.ToolCall{{ID: "c1", Name: "add_task", Arguments: `{"title":"secret"}`}},
			Usage: agent.Usage{PromptTokens: 12, CompletionTokens: 3, TotalTokens: 15}}, nil
	}}, "openai")
	req := agent.Request{System: "Secret system prompt", Messages: []agent.Message{{Role: agent.RoleUser, Content: "Secret user text"}}}
	var streamed string
	if resp, err := model.Stream(context.Background(), req, func(s string) { streamed += s }); err != nil || resp.Usage.TotalTokens != 15 || streamed != "Secret reply text" {
		t.Fatalf("the observed model changed the call: %+v, %v, streamed %q", resp, err, streamed)
	}
	if _, err := model.Stream(context.Background(), req, nil); !errors.Is(err, agent.ErrModelTimeout) {
		t.Fatalf("the observed model changed the error: %v", err)
	}

	m := telemetrytest.Scrape(t, tel)
	labels := []string{"gen_ai_operation_name", "chat", "gen_ai_provider_name", "openai", "gen_ai_request_model", "m-1"}
	for s, want := range map[string]float64{
		telemetrytest.Series("gen_ai_client_operation_duration_seconds_count", append(labels, "error_type", "")...):        1,
		telemetrytest.Series("gen_ai_client_operation_duration_seconds_count", append(labels, "error_type", "timeout")...): 1,
		telemetrytest.Series("gen_ai_client_token_usage_sum", append(labels, "gen_ai_token_type", "input")...):             12,
		telemetrytest.Series("gen_ai_client_token_usage_sum", append(labels, "gen_ai_token_type", "output")...):            3,
		// The failed call reported no usage, and records none.
		telemetrytest.Series("gen_ai_client_token_usage_count", append(labels, "gen_ai_token_type", "input")...): 1,
	} {
		if got, ok := m[s]; !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", s, got, ok, want)
		}
	}

	spans := rec.Ended()
	if len(spans) != 2 {
		t.Fatalf("spans = %d, want one per call", len(spans))
	}
	ok, failed := attrs(spans[0]), attrs(spans[1])
	for _, s := range spans {
		if s.Name() != "chat m-1" || s.SpanKind().String() != "client" {
			t.Errorf("span %q of kind %s, want chat m-1, client", s.Name(), s.SpanKind())
		}
		a := attrs(s)
		if a["gen_ai.operation.name"].AsString() != "chat" || a["gen_ai.provider.name"].AsString() != "openai" || a["gen_ai.request.model"].AsString() != "m-1" {
			t.Errorf("span attributes %v lack the GenAI ones", a)
		}
		for k, v := range a {
			if strings.Contains(strings.ToLower(v.String()), "secret") {
				t.Errorf("attribute %s = %q holds text from the prompt, the reply or the arguments", k, v.String())
			}
		}
	}
	if ok["gen_ai.usage.input_tokens"].AsInt64() != 12 || ok["gen_ai.usage.output_tokens"].AsInt64() != 3 ||
		!slices.Equal(ok["gen_ai.response.finish_reasons"].AsStringSlice(), []string{"tool_calls"}) {
		t.Errorf("the first call's span = %v, want its usage and finish reason", ok)
	}
	if failed["error.type"].AsString() != "timeout" || spans[1].Status().Code != codes.Error {
		t.Errorf("the failed call's span = %v, status %v; want error.type timeout, status Error", failed, spans[1].Status())
	}
}

func TestToolExecutionsAreObserved(t *testing.T) {
	t.Parallel()
	rec, tp := newRecorded()
	tel := telemetry.New(prometheus.NewRegistry(), tp)
	for _, errType := range []string{"", telemetry.ToolError, ""} {
		_, end := tel.StartTool(context.Background(), "complete_task", "call_7")
		end(errType)
	}
	m := telemetrytest.Scrape(t, tel)
	if got := m[telemetrytest.Series("gen_ai_execute_tool_duration_seconds_count", "gen_ai_tool_name", "complete_task", "error_type", "")]; got != 2 {
		t.Errorf("successful executions = %v, want 2", got)
	}
	if got := m[telemetrytest.Series("gen_ai_execute_tool_duration_seconds_count", "gen_ai_tool_name", "complete_task", "error_type", "tool_error")]; got != 1 {
		t.Errorf("failed executions = %v, want 1", got)
	}
	spans := rec.Ended()
	if len(spans) != 3 {
		t.Fatalf("spans = %d, want 3", len(spans))
	}
	a := attrs(spans[1])
	if spans[1].Name() != "execute_tool complete_task" || a["gen_ai.operation.name"].AsString() != "execute_tool" ||
		a["gen_ai.tool.name"].AsString() != "complete_task" || a["gen_ai.tool.call.id"].AsString() != "call_7" ||
		a["error.type"].AsString() != "tool_error" || spans[1].Status().Code != codes.Error {
		t.Errorf("span %q %v status %v, want the tool's name, call id and error", spans[1].Name(), a, spans[1].Status())
	}
	if _, has := attrs(spans[0])["error.type"]; has || spans[0].Status().Code == codes.Error {
		t.Errorf("a successful execution's span has an error: %v", attrs(spans[0]))
	}
}

func TestRequestsAreObservedByRouteNeverByPath(t *testing.T) {
	t.Parallel()
	tel := telemetry.New(prometheus.NewRegistry(), nil)
	for _, method := range []string{"POST", "POST", "BREW"} {
		_, q := tel.StartRequest(httptest.NewRequest(method, "/api/alice/chat", nil))
		q.End(method, "/api/{user_id}/chat", 0, 0)
	}
	_, q := tel.StartRequest(httptest.NewRequest("GET", "/api/alice/nowhere", nil))
	q.End("GET", "", 404, 0)
	m := telemetrytest.Scrape(t, tel)
	for s, want := range map[string]float64{
		telemetrytest.Series("http_server_request_duration_seconds_count", "http_request_method", "POST", "http_route", "/api/{user_id}/chat", "http_response_status_code", "200"):   2,
		telemetrytest.Series("http_server_request_duration_seconds_count", "http_request_method", "_OTHER", "http_route", "/api/{user_id}/chat", "http_response_status_code", "200"): 1,
		telemetrytest.Series("http_server_request_duration_seconds_count", "http_request_method", "GET", "http_route", "", "http_response_status_code", "404"):                       1,
	} {
		if m[s] != want {
			t.Errorf("%s = %v, want %v", s, m[s], want)
		}
	}
	for s := range m {
		if strings.Contains(s, "alice") {
			t.Errorf("series %s holds the raw path", s)
		}
	}
}

func TestNoTelemetryObservesNothing(t *testing.T) {
	t.Parallel()
	var tel *telemetry.Telemetry
	model := agenttest.ModelFunc(func(context.Context, agent.Request, func(string)) (agent.Response, error) {
		return agent.Response{}, nil
	})
	if got := tel.Model(model, "offline"); got == nil || tel.Metrics() || tel.Tracing() {
		t.Fatal("a nil Telemetry wraps or records")
	}
	if _, ok := tel.Model(model, "offline").(agenttest.ModelFunc); !ok {
		t.Fatal("without telemetry the model is wrapped")
	}
	ctx := context.Background()
	if got, end := tel.StartTool(ctx, "add_task", "c"); got != ctx {
		t.Fatal("without telemetry a tool call gets a new context")
	} else {
		end("")
	}
	r := httptest.NewRequest("GET", "/", nil)
	if got, q := tel.StartRequest(r); got != r || q.TraceID() != "" {
		t.Fatal("without telemetry a request is changed")
	} else {
		q.End("GET", "/", 200, 0)
	}
	tel.CountTurn("completed")
	tel.CountEvictedConnection()
	tel.ObserveStreams(func() int { return 1 })
	w := httptest.NewRecorder()
	tel.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	if w.Code != http.StatusNotFound {
		t.Fatalf("metrics without a registry = %d, want 404", w.Code)
	}
	// Spans only: the model is wrapped, but no metric is recorded.
	_, tp := newRecorded()
	if _, ok := telemetry.New(nil, tp).Model(model, "offline").(agenttest.ModelFunc); ok {
		t.Fatal("with spans on, the model is not observed")
	}
}
