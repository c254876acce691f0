package store_test

import (
	"context"
	"crypto/rand"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/taskchat/taskchat/internal/store"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/tasks"
)

// A bucket gives its burst at once, then refuses, saying when its next
// token is there; by then it gives one again. Each user's and kind's
// bucket is its own.
func TestTakeTokenRefillsAtItsRate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	limits := store.NewLimits(storetest.Pool(t))
	user := storetest.UserID(t)
	rate := tasks.Rate{PerMinute: 120, Burst: 2} // a token every 500 ms
	for i := range 2 {
		if err := limits.TakeToken(ctx, user, tasks.BucketMCP, rate); err != nil {
			t.Fatalf("token %d of the burst: %v", i+1, err)
		}
	}
	err := limits.TakeToken(ctx, user, tasks.BucketMCP, rate)
	var re *tasks.RateLimitError
	if !errors.As(err, &re) || !errors.Is(err, tasks.ErrRateLimited) || re.RetryAfter <= 0 || re.RetryAfter > 500*time.Millisecond || re.Rate != rate {
		t.Fatalf("past the burst: %v (%+v), want a refusal to retry within 500ms", err, re)
	}
	if err := limits.TakeToken(ctx, user, tasks.BucketTurns, rate); err != nil {
		t.Fatalf("another kind's bucket: %v", err)
	}
	if err := limits.TakeToken(ctx, storetest.UserID(t), tasks.BucketMCP, rate); err != nil {
		t.Fatalf("another user's bucket: %v", err)
	}
	time.Sleep(re.RetryAfter)
	if err := limits.TakeToken(ctx, user, tasks.BucketMCP, rate); err != nil {
		t.Fatalf("after Retry-After: %v", err)
	}
	if err := limits.TakeToken(ctx, user, tasks.BucketMCP, rate); !errors.Is(err, tasks.ErrRateLimited) {
		t.Fatalf("the refilled token was taken, yet another was given: %v", err)
	}
}

// Streams opened at once count each other: of eight, exactly the cap
// opens. Taking a lease again renews it rather than counting twice; a
// lease given back makes room; a lease that ran out counts for nothing.
func TestOpenStreamHoldsTheCapAtOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := storetest.Pool(t)
	limits := store.NewLimits(pool)
	user := storetest.UserID(t)
	lease := func() tasks.StreamLease { return tasks.StreamLease{ID: rand.Text(), Max: 3, For: time.Minute} }
	var opened []tasks.StreamLease
	var mu sync.Mutex
	var wg sync.WaitGroup
	refused := 0
	for range 8 {
		wg.Go(func() {
			l := lease()
			err := limits.OpenStream(ctx, user, l)
			mu.Lock()
			defer mu.Unlock()
			var se *tasks.StreamsError
			switch {
			case err == nil:
				opened = append(opened, l)
			case errors.As(err, &se) && errors.Is(err, tasks.ErrTooManyStreams) && se.Max == 3:
				refused++
			default:
				t.Errorf("open: %v", err)
			}
		})
	}
	wg.Wait()
	if len(opened) != 3 || refused != 5 {
		t.Fatalf("%d opened and %d refused of 8 at once, want 3 and 5", len(opened), refused)
	}
	if err := limits.OpenStream(ctx, user, opened[0]); err != nil {
		t.Fatalf("a lease taken again: %v, want it renewed", err)
	}
	if err := limits.OpenStream(ctx, storetest.UserID(t), lease()); err != nil {
		t.Fatalf("another user's stream: %v", err)
	}
	if err := limits.CloseStream(ctx, user, opened[0].ID); err != nil {
		t.Fatal(err)
	}
	if err := limits.OpenStream(ctx, user, lease()); err != nil {
		t.Fatalf("once a stream closed: %v", err)
	}
	if _, err := pool.Exec(ctx, `UPDATE stream_leases SET lease_until = now() - interval '1 second' WHERE id = $1`, opened[1].ID); err != nil {
		t.Fatal(err)
	}
	if err := limits.OpenStream(ctx, user, lease()); err != nil {
		t.Fatalf("once a lease ran out: %v", err)
	}
	if n := storetest.Count(t, `SELECT count(*) FROM stream_leases WHERE id = $1`, opened[1].ID); n != 0 {
		t.Fatal("the lease that ran out is still there")
	}
}
