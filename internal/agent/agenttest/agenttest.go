// Package agenttest holds the stand-ins for a language model that tests
// outside package agent share: a model whose calls the test writes as a
// function, and the generous limits a test turn runs under. It imports
// only package agent, so any package's tests may use it without drawing in
// the store, the engine or the HTTP layer. (Package agent's own tests
// cannot import it, as it imports agent; they keep theirs.)
//
// A model that speaks the OpenAI wire format is openaitest's; this one
// skips the wire, for tests about what the model says rather than how.
package agenttest

import (
	"context"
	"time"

	"github.com/taskchat/taskchat/internal/agent"
)

// ModelFunc is an agent.Model written as a function: each call of Stream
// calls it. A test says in a closure what each call answers, fails or
// waits for, counting calls itself when the answer depends on them. Its
// name is "func".
type ModelFunc func(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error)

// Name returns "func".
func (f ModelFunc) Name() string { return "func" }

// Stream calls f.
func (f ModelFunc) Stream(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
	return f(ctx, req, onText)
}

// Named is a ModelFunc with the name a test looks for where the model's
// callers record it, as in metrics and spans.
type Named struct {
	ModelFunc
	ModelName string
}

// Name returns m.ModelName.
func (m Named) Name() string { return m.ModelName }

// Limits returns limits no test turn reaches unless it means to: a test
// about one limit lowers that one on the copy it gets.
func Limits() agent.Limits {
	return agent.Limits{MaxModelCalls: 10, MaxToolCalls: 20, MaxTokens: 100_000,
		TurnTimeout: 30 * time.Second, ToolTimeout: 10 * time.Second}
}

var (
	_ agent.Model = ModelFunc(nil)
	_ agent.Model = Named{}
)
