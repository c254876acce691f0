package main

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/taskchat/taskchat/internal/store"
)

// startRetention runs retention passes in the background until ctx ends
// or stop is called: of the turns' runs always, and of the rest when
// RETENTION_DAYS is set. stop returns once the pass under way, if any, has
// stopped: its statement is cancelled, and rolls back whole.
func startRetention(ctx context.Context, pool *pgxpool.Pool, cfg config, log *slog.Logger) (stop func()) {
	if cfg.Retention.Days > 0 {
		log.Info("retention on", "days", cfg.Retention.Days, "every", cfg.RetentionEvery.String())
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		runRetention(ctx, store.NewRetention(pool, cfg.Retention), cfg.RetentionEvery, log)
	}()
	return func() { cancel(); <-done }
}

// runRetention runs a pass every period, give or take half of it, until ctx
// ends, and logs each pass that deleted something: counts only. The first
// pass waits too, so that a replica starting is not slowed by it, and the
// jitter keeps replicas started together from sweeping in step (were they
// to, their passes would share the rows, not delete any twice).
func runRetention(ctx context.Context, r *store.Retention, every time.Duration, log *slog.Logger) {
	t := time.NewTimer(jittered(every))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		start := time.Now()
		swept, err := r.Sweep(ctx)
		if swept.Total() > 0 {
			log.Info("retention pass", "runs", swept.Runs, "stream_leases", swept.StreamLeases,
				"conversations", swept.Conversations, "tool_calls", swept.ToolCalls,
				"idempotency_keys", swept.IdempotencyKeys, "usage_days", swept.UsageDays,
				"batches", swept.Batches, "took", time.Since(start).String())
		}
		if err != nil && ctx.Err() == nil {
			log.Warn("retention pass failed; the next one will try again", "error", err)
		}
		t.Reset(jittered(every))
	}
}

// jittered is d, give or take half of it.
func jittered(d time.Duration) time.Duration {
	return d/2 + rand.N(d)
}
