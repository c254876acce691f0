// Package telemetry is what taskchat tells operators about itself:
// Prometheus metrics, served on a listener of their own (METRICS_ADDR), and
// OpenTelemetry spans, exported over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT
// is set. Names follow the OpenTelemetry semantic conventions for HTTP
// servers and for generative AI, in the form Prometheus gives them (dots
// become underscores, the unit a suffix).
//
// A nil *Telemetry records nothing, at the cost of a nil check; so does one
// built without a registry (no metrics) or without a tracer provider (no
// spans) for what it lacks. No message text, tool argument or result ever
// goes into a metric or a span.
package telemetry

import (
	"net/http"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// instrumentation names the tracer, as OpenTelemetry asks of a library.
const instrumentation = "github.com/taskchat/taskchat"

// Telemetry records the service's metrics and spans.
type Telemetry struct {
	reg    *prometheus.Registry // nil: no metrics
	tracer trace.Tracer         // nil: no spans
	prop   propagation.TextMapPropagator

	requests     *prometheus.HistogramVec
	turns        *prometheus.CounterVec
	modelCalls   *prometheus.HistogramVec
	tokens       *prometheus.HistogramVec
	toolCalls    *prometheus.HistogramVec
	evictions    prometheus.Counter
	streamsMu    sync.Mutex
	streamCounts []func() int // summed by the open-streams gauge
}

// New returns a Telemetry that registers its metrics with reg, when reg is
// not nil, and starts its spans with tp, when tp is not nil. Incoming
// requests continue the W3C trace context their headers carry.
func New(reg *prometheus.Registry, tp trace.TracerProvider) *Telemetry {
	t := &Telemetry{reg: reg, prop: propagation.TraceContext{}}
	if tp != nil {
		t.tracer = tp.Tracer(instrumentation)
	}
	if reg != nil {
		t.register(reg)
	}
	return t
}

// The histograms' buckets. Tokens and model calls take those the GenAI
// conventions advise; tool calls, which are a database statement or two
// here, start at a millisecond.
var (
	httpBuckets  = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}
	modelBuckets = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}
	tokenBuckets = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}
	toolBuckets  = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}
)

func (t *Telemetry) register(reg *prometheus.Registry) {
	t.requests = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "http_server_request_duration_seconds",
		Help:    "Duration of HTTP server requests, by route pattern (never the raw path), method and status; a stream lasts until its last event.",
		Buckets: httpBuckets,
	}, []string{"http_request_method", "http_route", "http_response_status_code"})
	t.turns = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "taskchat_turns_total",
		Help: "Chat turns, by how they ended.",
	}, []string{"outcome"})
	t.modelCalls = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "gen_ai_client_operation_duration_seconds",
		Help:    "GenAI operation duration: each model call of a turn, streamed to its end.",
		Buckets: modelBuckets,
	}, []string{"gen_ai_operation_name", "gen_ai_provider_name", "gen_ai_request_model", "error_type"})
	t.tokens = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "gen_ai_client_token_usage",
		Help:    "Number of input and output tokens used per model call, as the model reported them (the offline model estimates its own, as does a call cut short before its usage came).",
		Buckets: tokenBuckets,
	}, []string{"gen_ai_operation_name", "gen_ai_provider_name", "gen_ai_request_model", "gen_ai_token_type"})
	t.toolCalls = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "gen_ai_execute_tool_duration_seconds",
		Help:    "Duration of each tool execution, by tool; error_type is set when it failed (tool_error: the tool answered with an error).",
		Buckets: toolBuckets,
	}, []string{"gen_ai_tool_name", "error_type"})
	t.evictions = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "taskchat_connections_evicted_total",
		Help: "Client connections closed to make room for a new one at MAX_CONNECTIONS: idle between requests, or silent past their grace.",
	})
	openStreams := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "taskchat_open_streams",
		Help: "Chat turns streaming to their clients now.",
	}, t.openStreams)
	reg.MustRegister(t.requests, t.turns, t.modelCalls, t.tokens, t.toolCalls, t.evictions, openStreams,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
}

// Metrics reports whether metrics are recorded.
func (t *Telemetry) Metrics() bool { return t != nil && t.reg != nil }

// Tracing reports whether spans are recorded.
func (t *Telemetry) Tracing() bool { return t != nil && t.tracer != nil }

// Handler serves the metrics in Prometheus' text format (or OpenMetrics,
// when the scraper asks), for the metrics listener; 404 without metrics.
func (t *Telemetry) Handler() http.Handler {
	if !t.Metrics() {
		return http.NotFoundHandler()
	}
	return promhttp.HandlerFor(t.reg, promhttp.HandlerOpts{Registry: t.reg})
}

// DeclareTurnOutcomes makes each outcome's count visible at 0 before the
// first such turn, so a rate over it is defined from the start.
func (t *Telemetry) DeclareTurnOutcomes(outcomes ...string) {
	if !t.Metrics() {
		return
	}
	for _, o := range outcomes {
		t.turns.WithLabelValues(o)
	}
}

// CountTurn counts a turn that ended with outcome.
func (t *Telemetry) CountTurn(outcome string) {
	if t.Metrics() {
		t.turns.WithLabelValues(outcome).Inc()
	}
}

// CountEvictedConnection counts a client connection closed to make room
// for a new one.
func (t *Telemetry) CountEvictedConnection() {
	if t.Metrics() {
		t.evictions.Inc()
	}
}

// ObserveStreams adds count, read at each scrape, to the open-streams
// gauge: nothing is done per stream.
func (t *Telemetry) ObserveStreams(count func() int) {
	if !t.Metrics() {
		return
	}
	t.streamsMu.Lock()
	defer t.streamsMu.Unlock()
	t.streamCounts = append(t.streamCounts, count)
}

func (t *Telemetry) openStreams() float64 {
	t.streamsMu.Lock()
	defer t.streamsMu.Unlock()
	n := 0
	for _, count := range t.streamCounts {
		n += count()
	}
	return float64(n)
}
