package offline

import (
	"testing"

	"github.com/taskchat/taskchat/internal/agent/offline/evaltest"
)

// TestEvaluation runs the evaluation in testdata/eval: every case is a
// person with a task list who says one message or a short conversation to
// the offline model, through the agent's loop and the real MCP tools on an
// in-memory store, each turn seeing the history the chat engine would give
// it (evaltest.Memory; internal/agent/offline/e2e holds it to the engine on
// PostgreSQL). A case is judged by what it did — the task list afterwards
// and, where it matters, the last message's tool calls — never by the
// reply's wording. It prints the pass rate per kind of message:
//
//	go test ./internal/agent/offline/ -run TestEvaluation -v
//
// A case marked as a known limit must still fail (docs/models.md lists
// them); one that starts to pass must lose its mark.
func TestEvaluation(t *testing.T) {
	cases, err := evaltest.Load("testdata/eval")
	if err != nil {
		t.Fatal(err)
	}
	// The evaluation only grows: a case the model passes is kept.
	if len(cases) < 836 {
		t.Errorf("the evaluation has %d cases, want at least 836", len(cases))
	}
	evaltest.Run(t, evaltest.NewMemory(New()), cases)
}
