package store_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/tasks"
)

// A turn reads only about the history it sends: bounded by
// agent.HistoryChars, StartTurn loads fewer messages than HISTORY_LIMIT
// alone would, and agent.History makes of them exactly what it makes of
// the whole unbounded history. Two identical conversations, of texts and
// tool results of every size (some multibyte), take the same turns, one
// read with the bound and one without, budget after budget.
func TestHistoryWindowKeepsWhatHistoryKeeps(t *testing.T) {
	t.Parallel()
	s, user := newTurns(t), storetest.UserID(t)
	rng := rand.New(rand.NewPCG(25, 1))
	text := func(most int) string { return strings.Repeat("é", rng.IntN(most)) + "x" }
	var bounded, whole int64
	reply := func(i int) (string, []tasks.ToolCall) {
		var calls []tasks.ToolCall
		for j := range rng.IntN(4) {
			calls = append(calls, call(fmt.Sprintf("c%d_%d", i, j), "list_tasks", `{}`,
				fmt.Sprintf(`{"tasks":[{"title":%q}]}`, text(4000))))
		}
		return text(600), calls
	}
	for i := range 40 {
		msg := fmt.Sprintf("m%d %s", i, text(300))
		r, calls := reply(i)
		a := mustStart(t, s, user, bounded, msg)
		mustFinish(t, s, a, r, calls...)
		b := mustStart(t, s, user, whole, msg)
		mustFinish(t, s, b, r, calls...)
		bounded, whole = a.Conversation.ID, b.Conversation.ID
	}
	cut := false
	for i, tokens := range []int{100, 300, 1000, 2500, 8000, 40_000} {
		msg := fmt.Sprintf("budget %d", tokens)
		a := mustStartWith(t, s, tasks.TurnStart{UserID: user, ConversationID: bounded, Message: msg, HistoryChars: agent.HistoryChars(tokens)})
		b := mustStart(t, s, user, whole, msg)
		got, want := agent.History(a.History, tokens), agent.History(b.History, tokens)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%d tokens: the bounded history makes %d model messages, the whole one %d", tokens, len(got), len(want))
		}
		if len(a.History) > len(b.History) {
			t.Errorf("%d tokens: the bounded read loaded %d messages, more than the %d of the whole", tokens, len(a.History), len(b.History))
		}
		cut = cut || len(a.History) < len(b.History)
		r, calls := reply(100 + i)
		mustFinish(t, s, a, r, calls...)
		mustFinish(t, s, b, r, calls...)
	}
	if !cut {
		t.Error("no budget loaded fewer messages than the whole history")
	}
}
