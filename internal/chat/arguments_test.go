package chat_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/taskchat/taskchat/internal/chat"
	"github.com/taskchat/taskchat/internal/store/storetest"
)

// A model may write arguments that are JSON to Go but not to PostgreSQL's
// jsonb: a lone surrogate. The call is refused before it runs (it could not
// be recorded as asked), the turn goes on, and what the model wrote is kept
// as text, so the turn, and a keyed request's replay, can be stored.
func TestArgumentsPostgreSQLCannotStore(t *testing.T) {
	t.Parallel()
	const raw = `{"title":"\ud83d"}` // a lone high surrogate, as the model wrote it
	for _, key := range []string{"", "surrogate"} {
		t.Run(map[string]string{"": "no key", "surrogate": "key"}[key], func(t *testing.T) {
			t.Parallel()
			env := mustEngine(t, script(
				calls("", "c1 add_task "+raw),
				say("That title did not work."),
			))
			user := storetest.UserID(t)
			req := chat.Request{UserID: user, Message: "Add a task with an emoji", IdempotencyKey: key}
			out, err := env.engine.Run(context.Background(), req, nil)
			if err != nil || out.Reply != "That title did not work." {
				t.Fatalf("the turn must complete: %v, %s", err, describeOutcome(out))
			}
			if len(out.ToolCalls) != 1 || !out.ToolCalls[0].IsError || !strings.Contains(string(out.ToolCalls[0].Result), "cannot be stored") {
				t.Fatalf("want the call refused as a tool error: %s", describeOutcome(out))
			}
			mustArgumentsAsText(t, out.ToolCalls[0].Arguments, raw)
			if n := len(env.mustTasks(t, user)); n != 0 {
				t.Fatalf("%d tasks were created from unstorable arguments", n)
			}

			msgs := env.mustMessages(t, user, out.ConversationID)
			if len(msgs) != 2 || msgs[1].Interrupted || len(msgs[1].ToolCalls) != 1 {
				t.Fatalf("stored messages = %+v", msgs)
			}
			mustSameCall(t, msgs[1].ToolCalls[0], out.ToolCalls[0])
			mustArgumentsAsText(t, msgs[1].ToolCalls[0].Arguments, raw)

			if key == "" {
				return
			}
			for range 2 {
				again, err := env.engine.Run(context.Background(), req, nil)
				if err != nil || !again.Replayed {
					t.Fatalf("keyed retry: %v, %s; want a replay", err, describeOutcome(again))
				}
				mustSameOutcome(t, again, out)
			}
			if n := len(env.mustTasks(t, user)); n != 0 {
				t.Fatalf("%d tasks after the replays", n)
			}
		})
	}
}

// mustArgumentsAsText checks that arguments are valid JSON: a string
// holding the model's text as it was.
func mustArgumentsAsText(tb testing.TB, arguments json.RawMessage, raw string) {
	tb.Helper()
	var text string
	if err := json.Unmarshal(arguments, &text); err != nil || text != raw {
		tb.Fatalf("arguments %s, want the JSON string of %s (%v)", arguments, raw, err)
	}
}
