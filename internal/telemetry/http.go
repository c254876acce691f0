package telemetry

import (
	"net/http"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Request is one HTTP request being observed, from StartRequest to End.
type Request struct {
	t    *Telemetry
	span trace.Span // nil without tracing
}

// StartRequest begins observing r: with tracing, a server span that
// continues the caller's trace context, in the returned request's context,
// so that the spans of the work it does are its children.
func (t *Telemetry) StartRequest(r *http.Request) (*http.Request, Request) {
	if !t.Tracing() {
		return r, Request{t: t}
	}
	ctx := t.prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	ctx, span := t.tracer.Start(ctx, httpMethod(r.Method), trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attribute.String("http.request.method", httpMethod(r.Method))))
	return r.WithContext(ctx), Request{t: t, span: span}
}

// TraceID is the request's trace id, for the access log; "" without tracing.
func (q Request) TraceID() string {
	if q.span == nil || !q.span.SpanContext().HasTraceID() {
		return ""
	}
	return q.span.SpanContext().TraceID().String()
}

// End records the request: route is the pattern that served it ("" when
// none did), never the raw path, whose ids would make a series each.
func (q Request) End(method, route string, status int, d time.Duration) {
	if status == 0 {
		status = http.StatusOK // nothing written: net/http answers 200
	}
	method = httpMethod(method)
	if q.t.Metrics() {
		q.t.requests.WithLabelValues(method, route, statusText(status)).Observe(d.Seconds())
	}
	if q.span == nil {
		return
	}
	if route != "" {
		q.span.SetName(method + " " + route)
		q.span.SetAttributes(attribute.String("http.route", route))
	}
	q.span.SetAttributes(attribute.Int("http.response.status_code", status))
	if status >= 500 {
		q.span.SetAttributes(attribute.String("error.type", statusText(status)))
		q.span.SetStatus(codes.Error, "")
	}
	q.span.End()
}

// httpMethod is method when it is a standard one, and _OTHER otherwise, as
// the HTTP conventions ask: a client must not be able to mint series.
func httpMethod(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return method
	}
	return "_OTHER"
}

// statuses holds the decimal text of every status, made once.
var statuses = func() (s [600]string) {
	for i := range s {
		s[i] = strconv.Itoa(i)
	}
	return s
}()

func statusText(code int) string {
	if code >= 0 && code < len(statuses) {
		return statuses[code]
	}
	return strconv.Itoa(code)
}
