package openai

import (
	"context"
	"errors"
	"fmt"
	mathrand "math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/taskchat/taskchat/internal/agent"
)

// This file decides what a failed attempt means: the kind of
// agent.ModelError it is, whether another attempt may fare better, and how
// long to wait first.

// backoff sleeps before retry number retry+1: a full-jitter exponential
// delay, or the server's Retry-After if longer. It returns last instead
// when the sleep would outlast ctx's deadline.
func (m *Model) backoff(ctx context.Context, retry int, retryAfter time.Duration, last error) error {
	ceiling := m.cfg.RetryBaseDelay
	for i := 0; i < retry && ceiling < maxRetryDelay; i++ {
		ceiling *= 2
	}
	delay := max(mathrand.N(min(ceiling, maxRetryDelay)), retryAfter)
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < delay {
		return last
	}
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return contextError(ctx.Err())
	case <-t.C:
		return nil
	}
}

// parseRetryAfter reads a Retry-After header in seconds or as a date. It
// returns zero for none, or for a wait too long to be worth honouring.
func parseRetryAfter(v string) time.Duration {
	var d time.Duration
	if secs, err := strconv.Atoi(v); err == nil {
		d = time.Duration(secs) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = time.Until(t)
	}
	if d <= 0 || d > maxRetryAfter {
		return 0
	}
	return d
}

// failure explains why an attempt failed: the caller's context first, then
// the idle timer, then what the server or the connection said.
func failure(parent, ctx context.Context, err, fallback error) error {
	switch {
	case parent.Err() != nil:
		return contextError(parent.Err())
	case errors.Is(context.Cause(ctx), errStreamIdle):
		return &agent.ModelError{Kind: agent.ErrModelTimeout, Err: errStreamIdle}
	default:
		return classify(err, fallback)
	}
}

// contextError reports the caller's context: a deadline is a timeout, a
// cancellation is the caller's own doing and no model failure.
func contextError(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return &agent.ModelError{Kind: agent.ErrModelTimeout, Err: err}
	}
	return fmt.Errorf("openai: %w", err)
}

// classify gives err its kind. Errors go-openai raises itself take
// fallback: a request it would not send, or a stream it could not read.
func classify(err, fallback error) *agent.ModelError {
	var reqErr *goopenai.RequestError
	var apiErr *goopenai.APIError
	var urlErr *url.Error
	switch {
	case errors.As(err, &reqErr):
		return &agent.ModelError{Kind: statusKind(reqErr.HTTPStatusCode, false), Status: reqErr.HTTPStatusCode, Err: err}
	case errors.As(err, &apiErr) && apiErr.HTTPStatusCode == 0:
		return &agent.ModelError{Kind: eventKind(apiErr), Err: err} // an error event inside the stream
	case errors.As(err, &apiErr):
		return &agent.ModelError{Kind: statusKind(apiErr.HTTPStatusCode, isQuota(apiErr)), Status: apiErr.HTTPStatusCode, Err: err}
	case isTimeout(err):
		return &agent.ModelError{Kind: agent.ErrModelTimeout, Err: err}
	case errors.As(err, &urlErr):
		return &agent.ModelError{Kind: agent.ErrModelServer, Err: err} // the server could not be reached
	default:
		return &agent.ModelError{Kind: fallback, Err: err}
	}
}

// statusKind maps an HTTP status to a kind of model failure.
func statusKind(status int, quota bool) error {
	switch {
	case quota || status == http.StatusPaymentRequired:
		return agent.ErrModelQuota
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return agent.ErrModelAuth
	case status == http.StatusTooManyRequests:
		return agent.ErrModelRateLimited
	case status == http.StatusRequestTimeout:
		return agent.ErrModelTimeout
	case status >= 500:
		return agent.ErrModelServer
	default:
		return agent.ErrModelRequest
	}
}

// eventKind maps an error event sent in place of a chunk.
func eventKind(e *goopenai.APIError) error {
	if isQuota(e) {
		return agent.ErrModelQuota
	}
	return agent.ErrModelServer
}

// isQuota reports an exhausted quota, which waiting will not fix.
func isQuota(e *goopenai.APIError) bool {
	return e.Type == "insufficient_quota" || e.Code == "insufficient_quota"
}

// isTimeout reports a deadline or a network timeout.
func isTimeout(err error) bool {
	var netErr net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout())
}

// retryable reports failures that a later attempt may not meet.
func retryable(err error) bool {
	var me *agent.ModelError
	if !errors.As(err, &me) {
		return false
	}
	switch me.Kind {
	case agent.ErrModelRateLimited, agent.ErrModelServer, agent.ErrModelTimeout, agent.ErrModelStream:
		return true
	}
	return false
}
