package telemetry

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/taskchat/taskchat/internal/agent"
)

// The GenAI conventions' attributes and values used here.
const (
	attrOperation     = "gen_ai.operation.name"
	attrProvider      = "gen_ai.provider.name"
	attrRequestModel  = "gen_ai.request.model"
	attrInputTokens   = "gen_ai.usage.input_tokens"
	attrOutputTokens  = "gen_ai.usage.output_tokens"
	attrFinishReasons = "gen_ai.response.finish_reasons"
	attrToolName      = "gen_ai.tool.name"
	attrToolCallID    = "gen_ai.tool.call.id"
	attrToolType      = "gen_ai.tool.type"
	attrErrorType     = "error.type"

	operationChat        = "chat"
	operationExecuteTool = "execute_tool"
)

// Model returns m observed: each call's duration and token usage in the
// GenAI metrics, and a client span "chat {model}" with the GenAI
// attributes (never the prompt or the reply). provider is the
// gen_ai.provider.name: "openai" for any OpenAI-compatible server, or
// "offline". Without metrics or spans it returns m itself.
func (t *Telemetry) Model(m agent.Model, provider string) agent.Model {
	if !t.Metrics() && !t.Tracing() {
		return m
	}
	om := &observedModel{Model: m, t: t, provider: provider, spanName: operationChat + " " + m.Name()}
	if t.Metrics() {
		om.ok = t.modelCalls.WithLabelValues(operationChat, provider, m.Name(), "")
		om.input = t.tokens.WithLabelValues(operationChat, provider, m.Name(), "input")
		om.output = t.tokens.WithLabelValues(operationChat, provider, m.Name(), "output")
	}
	return om
}

// observedModel is a Model whose calls are measured. The series of a call
// that succeeds are resolved once, when it is made; only errors look theirs up.
type observedModel struct {
	agent.Model
	t                 *Telemetry
	provider          string
	spanName          string
	ok, input, output prometheus.Observer
}

func (m *observedModel) Stream(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
	var span trace.Span
	if m.t.Tracing() {
		ctx, span = m.t.tracer.Start(ctx, m.spanName, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
			attribute.String(attrOperation, operationChat),
			attribute.String(attrProvider, m.provider),
			attribute.String(attrRequestModel, m.Name())))
	}
	start := time.Now()
	resp, err := m.Model.Stream(ctx, req, onText)
	errType := modelErrorType(err)
	if m.t.Metrics() {
		m.record(time.Since(start), resp.Usage, errType)
	}
	if span != nil {
		endModelSpan(span, resp, errType)
	}
	return resp, err
}

func (m *observedModel) record(d time.Duration, u agent.Usage, errType string) {
	if errType == "" {
		m.ok.Observe(d.Seconds())
	} else {
		m.t.modelCalls.WithLabelValues(operationChat, m.provider, m.Name(), errType).Observe(d.Seconds())
	}
	// A call with no usage (the model refused it; one cut short mid-stream
	// brings an estimate) has none to record, rather than zeros that would
	// skew.
	if u.PromptTokens > 0 || u.CompletionTokens > 0 {
		m.input.Observe(float64(u.PromptTokens))
		m.output.Observe(float64(u.CompletionTokens))
	}
}

func endModelSpan(span trace.Span, resp agent.Response, errType string) {
	if resp.Usage.PromptTokens > 0 || resp.Usage.CompletionTokens > 0 {
		span.SetAttributes(attribute.Int(attrInputTokens, resp.Usage.PromptTokens),
			attribute.Int(attrOutputTokens, resp.Usage.CompletionTokens))
	}
	if errType != "" {
		span.SetAttributes(attribute.String(attrErrorType, errType))
		span.SetStatus(codes.Error, "")
	} else if len(resp.ToolCalls) > 0 {
		span.SetAttributes(attribute.StringSlice(attrFinishReasons, []string{"tool_calls"}))
	} else {
		span.SetAttributes(attribute.StringSlice(attrFinishReasons, []string{"stop"}))
	}
	span.End()
}

// modelErrorType names the class of a model call's failure, from the
// agent's kinds; "" when it did not fail.
func modelErrorType(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, agent.ErrModelAuth):
		return "auth"
	case errors.Is(err, agent.ErrModelRateLimited):
		return "rate_limited"
	case errors.Is(err, agent.ErrModelQuota):
		return "quota"
	case errors.Is(err, agent.ErrModelServer):
		return "server_error"
	case errors.Is(err, agent.ErrModelTimeout), errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, agent.ErrModelStream):
		return "malformed_stream"
	case errors.Is(err, agent.ErrModelRequest):
		return "request_refused"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	return "_OTHER"
}

// The error types of a tool execution.
const (
	ToolError   = "tool_error" // the tool answered, with an error (MCP's isError)
	ToolTimeout = "timeout"
	ToolOther   = "_OTHER" // the call itself failed
)

// ToolEnd ends an observed tool execution with its error type, "" when it
// succeeded.
type ToolEnd func(errType string)

func noToolEnd(string) {}

// StartTool begins observing one execution of tool, called as callID by
// the model: an internal span "execute_tool {tool}" in the returned context
// (never the arguments or the result), and its duration by tool name.
func (t *Telemetry) StartTool(ctx context.Context, tool, callID string) (context.Context, ToolEnd) {
	if !t.Metrics() && !t.Tracing() {
		return ctx, noToolEnd
	}
	var span trace.Span
	if t.Tracing() {
		ctx, span = t.tracer.Start(ctx, operationExecuteTool+" "+tool, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(
			attribute.String(attrOperation, operationExecuteTool),
			attribute.String(attrToolName, tool),
			attribute.String(attrToolCallID, callID),
			attribute.String(attrToolType, "function")))
	}
	start := time.Now()
	return ctx, func(errType string) {
		if t.Metrics() {
			t.toolCalls.WithLabelValues(tool, errType).Observe(time.Since(start).Seconds())
		}
		if span != nil {
			if errType != "" {
				span.SetAttributes(attribute.String(attrErrorType, errType))
				span.SetStatus(codes.Error, "")
			}
			span.End()
		}
	}
}

// Unwrap returns the model observed, so that what it is besides a Model
// (an agent.Summarizer) can be found.
func (m *observedModel) Unwrap() agent.Model { return m.Model }
