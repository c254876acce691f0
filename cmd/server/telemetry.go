package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/taskchat/taskchat/internal/telemetry"
)

// newTelemetry builds what the service reports about itself: metrics when
// METRICS_ADDR is set, spans when an OTLP endpoint is. Without either it
// is nil, and nothing is measured at all. stop sends the spans still
// buffered; call it once the server has stopped.
func newTelemetry(ctx context.Context, cfg config, log *slog.Logger) (tel *telemetry.Telemetry, stop func(), err error) {
	var reg *prometheus.Registry
	if cfg.MetricsAddr != "" {
		reg = prometheus.NewRegistry()
	}
	var tp trace.TracerProvider
	stop = func() {}
	if cfg.TracesURL != "" {
		sdk, shutdown, err := telemetry.StartTracing(ctx, cfg.TracesURL)
		if err != nil {
			return nil, nil, err
		}
		tp = sdk
		stop = func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := shutdown(ctx); err != nil {
				log.Warn("spans not exported at shutdown", "err", err)
			}
		}
		log.Info("exporting spans", "endpoint", cfg.TracesURL)
	}
	if reg == nil && tp == nil {
		return nil, stop, nil
	}
	return telemetry.New(reg, tp), stop, nil
}

// serveMetrics serves GET /metrics on a listener of its own, so that the
// public port never answers it: put METRICS_ADDR where only Prometheus
// reaches. The caller closes the server.
func serveMetrics(addr string, tel *telemetry.Telemetry, log *slog.Logger) (*http.Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on METRICS_ADDR %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", tel.Handler())
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		WriteTimeout:      30 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	go func() {
		if err := srv.Serve(ln); err != nil && err != http.ErrServerClosed {
			log.Error("metrics listener stopped", "err", err)
		}
	}()
	log.Info("metrics listening", "addr", ln.Addr().String())
	return srv, nil
}
