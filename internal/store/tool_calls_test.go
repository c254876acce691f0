package store_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/tasks"
)

// auditRow is one tool_calls row as the database holds it.
type auditRow struct {
	ConversationID, MessageID *int64
	TurnID                    int64
	UserID, CallID, Tool      string
	Arguments, Result         json.RawMessage
	IsError                   bool
	Round, Seq                int
}

// mustAuditRows returns the tool_calls rows of the user's turn, in order.
func mustAuditRows(tb testing.TB, user string, turnID int64) []auditRow {
	tb.Helper()
	rows, err := storetest.Pool(tb).Query(context.Background(), `
		SELECT conversation_id, message_id, turn_id, user_id, call_id, tool, arguments, result, is_error, round, seq
		FROM tool_calls WHERE user_id = $1 AND turn_id = $2 ORDER BY seq`, user, turnID)
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	var out []auditRow
	for rows.Next() {
		var r auditRow
		if err := rows.Scan(&r.ConversationID, &r.MessageID, &r.TurnID, &r.UserID, &r.CallID, &r.Tool,
			&r.Arguments, &r.Result, &r.IsError, &r.Round, &r.Seq); err != nil {
			tb.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// mustLapse lets the claim on user's conversation convID run out, as it
// does when the replica running its turn dies.
func mustLapse(tb testing.TB, user string, convID int64) {
	tb.Helper()
	mustExec(tb, `UPDATE conversations SET claimed_until = now() - interval '1 second'
		WHERE user_id = $1 AND number = $2 AND claim_token IS NOT NULL`, user, convID)
}

// mustLapseKey lets the lock of a running idempotency key run out.
func mustLapseKey(tb testing.TB, user, key string) {
	tb.Helper()
	mustExec(tb, `UPDATE idempotency_keys SET locked_until = now() - interval '1 second'
		WHERE user_id = $1 AND key = $2 AND locked_until IS NOT NULL`, user, key)
}

func mustExec(tb testing.TB, sql string, args ...any) {
	tb.Helper()
	tag, err := storetest.Pool(tb).Exec(context.Background(), sql, args...)
	if err != nil || tag.RowsAffected() != 1 {
		tb.Fatalf("%s: %v rows, %v", sql, tag.RowsAffected(), err)
	}
}

// mustWaitForALockWait waits until a statement on this package's database
// waits for a lock.
func mustWaitForALockWait(tb testing.TB) {
	tb.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if storetest.Count(tb, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`) > 0 {
			return
		}
	}
	tb.Fatal("no statement waited for a lock")
}

func mustJSON(tb testing.TB, v any) json.RawMessage {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// A model writes anything as a tool's arguments; the turn must be stored
// whatever it wrote, and read back as valid JSON.
func TestFinishTurnStoresWhateverAModelWrote(t *testing.T) {
	t.Parallel()
	s, convs, user := newTurns(t), newConversations(t), storetest.UserID(t)
	ctx := context.Background()
	turn := mustStart(t, s, user, 0, "hi")
	long := strings.Repeat("n", 300)
	m, err := s.FinishTurn(ctx, tasks.TurnEnd{
		UserID: user, ConversationID: turn.Conversation.ID, TurnID: turn.ID(), ClaimToken: turn.ClaimToken,
		Reply: "Added.\x00 \xff", ToolCalls: []tasks.ToolCall{
			{CallID: "", Tool: long, Arguments: json.RawMessage(`{"title":"a\u0000b"}`), Result: json.RawMessage(`{"error":"bad \u0000"}`), IsError: true},
			{CallID: long, Tool: "", Arguments: json.RawMessage("not json \x00"), Result: nil, Seq: 1},
		},
	})
	if err != nil {
		t.Fatalf("a model's NULs, bad UTF-8 and odd names must not lose the turn: %v", err)
	}
	msgs := mustMessages(t, convs, user, turn.Conversation.ID)
	got := msgs[len(msgs)-1]
	if got.ID != m.ID || got.Content != "Added. \uFFFD" || len(got.ToolCalls) != 2 {
		t.Fatalf("stored %+v", got)
	}
	if c := got.ToolCalls[0]; c.CallID != "call" || len([]rune(c.Tool)) != 255 || !strings.Contains(string(c.Arguments), `\ufffd`) && !strings.Contains(string(c.Arguments), "\uFFFD") {
		t.Fatalf("first call stored as %+v (%s)", c, c.Arguments)
	}
	if c := got.ToolCalls[1]; c.Tool != "unnamed" || string(c.Arguments) != `"not json "` {
		t.Fatalf("second call stored as %+v (%s)", c, c.Arguments)
	}

	for _, c := range unstorableJSON {
		t.Run(c.name, func(t *testing.T) {
			key := "key-" + c.name
			if _, err := s.BeginIdempotent(ctx, keyRequest(user, key)); err != nil {
				t.Fatal(err)
			}
			turn := mustStartWith(t, s, tasks.TurnStart{UserID: user, Message: "do it", IdempotencyKey: key})
			end := turnEnd(turn, "Done.", tasks.ToolCall{CallID: "c", Tool: "add_task", Arguments: c.raw, Result: c.raw, IsError: true})
			end.IdempotencyKey = key
			end.Response = json.RawMessage(`{"response":"Done.","tool_calls":[{"tool":"add_task","arguments":` + string(c.raw) + `}]}`)
			if _, err := s.FinishTurn(ctx, end); err != nil {
				t.Fatalf("finish a turn whose call's arguments are %q: %v", c.raw, err)
			}
			msgs := mustMessages(t, convs, user, turn.Conversation.ID)
			calls := msgs[len(msgs)-1].ToolCalls
			if len(calls) != 1 || !json.Valid(calls[0].Arguments) || !json.Valid(calls[0].Result) {
				t.Fatalf("stored calls = %+v, want one with valid JSON", calls)
			}
			state, err := s.BeginIdempotent(ctx, keyRequest(user, key))
			if err != nil || !json.Valid(state.Replay) {
				t.Fatalf("replay = %q, %v; want the stored response as valid JSON", state.Replay, err)
			}
		})
	}
}

// unstorableJSON is what a model may write that jsonb refuses as it is.
var unstorableJSON = []struct {
	name string
	raw  json.RawMessage
}{
	{"lone surrogate", json.RawMessage(`{"title":"\ud83d"}`)},
	{"huge number", json.RawMessage(`{"n":1e999999}`)},
	{"tiny number", json.RawMessage(`{"n":1e-999999}`)},
	{"escaped NUL", json.RawMessage(`{"title":"a\u0000b"}`)},
	{"invalid UTF-8", json.RawMessage("{\"title\":\"\xff\xfe\"}")},
	{"not JSON", json.RawMessage(`add_task(title="milk")`)},
}

// refusedByJSONB is what jsonb refuses as it is, for StorableJSON to mend.
var refusedByJSONB = []string{
	`{"title":"\ud83d"}`,
	`{"title":"\ude00"}`,
	`{"title":"\ud83d\u0041"}`,
	`{"title":"\ud83dx"}`,
	`["\uDBFF"]`,
	`{"n":1e999999}`,
	`{"n":1e-999999}`,
	`{"n":1e131072}`,
	`{"n":-1e-16384}`,
	`{"n":1E+2147483648}`,
	`{"title":"a\u0000b"}`,
	"{\"title\":\"\xff\xfe\"}",
	"{\"title\":\"\xed\xa0\xbd\"}",
	`add_task(title="milk")`,
	"not json \x00 at all",
	``,
}

// Whatever StorableJSON returns, jsonb takes, and gives back as valid JSON.
func TestStorableJSONFitsJSONB(t *testing.T) {
	t.Parallel()
	inputs := append([]string{
		`{"title":"Buy milk","n":1.5,"ok":true,"none":null,"list":[1,-2e3]}`,
		`{"emoji":"\ud83d\ude00"}`,
		`{"n":1e131071}`,
		`{"n":1e-16383}`,
		`{"path":"C:\\u0000"}`,
		`"\\ud83d"`,
	}, refusedByJSONB...)
	for _, in := range inputs {
		mustStoreAsJSONB(t, in)
	}
}

// The refused inputs, cut and spliced at random: not one of them may
// produce something jsonb refuses.
func TestStorableJSONFitsJSONBWhateverTheInput(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for range 600 {
		a, b := refusedByJSONB[r.IntN(len(refusedByJSONB))], refusedByJSONB[r.IntN(len(refusedByJSONB))]
		i, j := r.IntN(len(a)+1), r.IntN(len(b)+1)
		mustStoreAsJSONB(t, a[:i]+b[j:])
		mustStoreAsJSONB(t, `{"a":[`+a[min(i, len(a)):]+`]}`)
	}
}

func FuzzStorableJSON(f *testing.F) {
	for _, in := range refusedByJSONB {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in string) { mustStoreAsJSONB(t, in) })
}

// mustStoreAsJSONB stores StorableJSON(in) in a jsonb column and reads it
// back.
func mustStoreAsJSONB(tb testing.TB, in string) {
	tb.Helper()
	out, kept := tasks.StorableJSON(json.RawMessage(in))
	var back json.RawMessage
	err := storetest.Pool(tb).QueryRow(context.Background(),
		`SELECT v FROM (VALUES ($1::text::jsonb)) AS stored(v)`, string(out)).Scan(&back)
	if err != nil {
		tb.Fatalf("StorableJSON(%q) = %q, which jsonb refuses: %v", in, out, err)
	}
	if !json.Valid(back) || !utf8.Valid(back) {
		tb.Fatalf("StorableJSON(%q) = %q, read back as %q", in, out, back)
	}
	if !kept {
		var s string
		if err := json.Unmarshal(out, &s); err != nil || s != tasks.StorableText(in) {
			tb.Fatalf("StorableJSON(%q) = %q, want the text as a JSON string", in, out)
		}
	}
}
