package agenttest_test

import (
	"context"
	"testing"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/agent/agenttest"
)

// A Named model answers as its function does, under the name it was given.
func TestNamedKeepsItsFunctionAndTakesItsName(t *testing.T) {
	t.Parallel()
	var asked string
	var m agent.Model = agenttest.Named{ModelName: "m-1", ModelFunc: func(_ context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
		asked = req.Messages[0].Content
		onText("hi")
		return agent.Response{Text: "hi"}, nil
	}}
	var streamed string
	resp, err := m.Stream(context.Background(), agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Content: "hello"}}}, func(s string) { streamed += s })
	if err != nil || resp.Text != "hi" || streamed != "hi" || asked != "hello" {
		t.Fatalf("Stream = %+v, %v; streamed %q, asked %q", resp, err, streamed, asked)
	}
	if m.Name() != "m-1" || (agenttest.ModelFunc(nil)).Name() != "func" {
		t.Fatalf("names %q and %q, want m-1 and func", m.Name(), agenttest.ModelFunc(nil).Name())
	}
	if err := agenttest.Limits().Validate(); err != nil {
		t.Fatalf("the test limits are not valid: %v", err)
	}
}
