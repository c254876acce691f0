package telemetry

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// StartTracing exports spans in batches over OTLP/HTTP (protobuf) to
// endpoint, the full URL of a collector's traces path, such as
// http://collector:4318/v1/traces. The exporter reads the other standard
// settings from the process's environment (OTEL_EXPORTER_OTLP_HEADERS,
// _TIMEOUT, _COMPRESSION, _CERTIFICATE…), the resource
// OTEL_SERVICE_NAME (default taskchat) and OTEL_RESOURCE_ATTRIBUTES, the
// sampler OTEL_TRACES_SAMPLER (default: parent-based, always on).
// shutdown sends the spans still buffered; call it once spans end.
func StartTracing(ctx context.Context, endpoint string) (tp *sdktrace.TracerProvider, shutdown func(context.Context) error, err error) {
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(endpoint))
	if err != nil {
		return nil, nil, fmt.Errorf("otlp trace exporter: %w", err)
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "taskchat")),
		resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, nil, fmt.Errorf("trace resource: %w", err)
	}
	tp = sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return tp, tp.Shutdown, nil
}
