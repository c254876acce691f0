package store_test

import (
	"context"
	"errors"
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
