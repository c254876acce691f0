package http

import (
	"math"
	"time"

	"github.com/taskchat/taskchat/internal/tasks"
)

// rateLimited is the 429 of an empty bucket, with Retry-After; what names
// what the bucket counts.
func rateLimited(re *tasks.RateLimitError, what string) *apiError {
	ae := apiErrf(codeRateLimited, "Too many %s: at most %g per minute. Try again in %d seconds.", what, re.Rate.PerMinute, seconds(re.RetryAfter))
	ae.retryAfter = re.RetryAfter
	return ae
}

func seconds(d time.Duration) int { return int(math.Ceil(d.Seconds())) }
