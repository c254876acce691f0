package http

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/taskchat/taskchat/internal/agent/openaitest"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/telemetry"
	"github.com/taskchat/taskchat/internal/telemetry/telemetrytest"
)

// usage asks for user's usage with query, and checks the answer against the spec.
func (s *testServer) usage(tb testing.TB, user, query string) reply {
	tb.Helper()
	r := s.do(tb, call{method: "GET", path: "/api/" + user + "/usage" + query, token: mustToken(tb, user)})
	mustMatchSpec(tb, "GET", "/api/{user_id}/usage", r.status, r.header, r.body)
	return r
}

// dayOf finds the day date in a usage answer.
func dayOf(tb testing.TB, body map[string]any, date string) map[string]any {
	tb.Helper()
	for _, d := range body["days"].([]any) {
		if d := d.(map[string]any); d["date"] == date {
			return d
		}
	}
	tb.Fatalf("no day %s in %v", date, body["days"])
	return nil
}

func mustTokens(tb testing.TB, what string, day map[string]any, input, output, turns float64) {
	tb.Helper()
	if day["input_tokens"] != input || day["output_tokens"] != output || day["total_tokens"] != input+output || day["turns"] != turns {
		tb.Fatalf("%s = %v, want %v in, %v out, %v turns", what, day, input, output, turns)
	}
}

func TestUsagePerDay(t *testing.T) {
	t.Parallel()
	// Every model call of the fake reports 10 input and 5 output tokens.
	fake := newFakeOpenAI(t, openaitest.Step{Text: "Noted."})
	s := mustServer(t, fake.Model())
	alice, bob := storetest.UserID(t), storetest.UserID(t)
	for range 2 {
		if r := s.chat(t, alice, 0, "Hello"); r.status != 200 {
			t.Fatalf("turn = %d", r.status)
		}
	}
	s.chat(t, bob, 0, "Hello")
	// A day three days ago, as earlier turns left it.
	today := time.Now().UTC()
	earlier := today.AddDate(0, 0, -3).Format(time.DateOnly)
	if _, err := storetest.Pool(t).Exec(context.Background(), `INSERT INTO token_usage VALUES ($1, $2, 900, 100, 7)`, alice, earlier); err != nil {
		t.Fatal(err)
	}

	t.Run("the last 30 days by default", func(t *testing.T) {
		r := s.usage(t, alice, "")
		if r.status != 200 {
			t.Fatalf("usage = %d %s", r.status, r.body)
		}
		body := r.json(t)
		if body["to"] != today.Format(time.DateOnly) || body["from"] != today.AddDate(0, 0, -29).Format(time.DateOnly) ||
			len(body["days"].([]any)) != 30 || body["daily_token_budget"] != nil {
			t.Fatalf("usage = %s", r.body)
		}
		mustTokens(t, "today", dayOf(t, body, today.Format(time.DateOnly)), 20, 10, 2)
		mustTokens(t, "three days ago", dayOf(t, body, earlier), 900, 100, 7)
		mustTokens(t, "yesterday", dayOf(t, body, today.AddDate(0, 0, -1).Format(time.DateOnly)), 0, 0, 0)
		mustTokens(t, "the total, without bob's", body["total"].(map[string]any), 920, 110, 9)
	})
	t.Run("a chosen range", func(t *testing.T) {
		body := s.usage(t, alice, "?from="+earlier+"&to="+earlier).json(t)
		if days := body["days"].([]any); len(days) != 1 {
			t.Fatalf("days = %v", days)
		}
		mustTokens(t, "the total", body["total"].(map[string]any), 900, 100, 7)
	})
	t.Run("another user's own", func(t *testing.T) {
		mustTokens(t, "bob's total", s.usage(t, bob, "").json(t)["total"].(map[string]any), 10, 5, 1)
		r := s.do(t, call{method: "GET", path: "/api/" + alice + "/usage", token: mustToken(t, bob)})
		mustProblem(t, r, 403, "forbidden")
	})
	t.Run("bad dates", func(t *testing.T) {
		for query, field := range map[string]string{
			"?from=2026-13-01":                  "from",
			"?to=yesterday":                     "to",
			"?from=2026-11-24&to=2026-11-23":    "from",
			"?from=2025-11-22&to=2026-11-23":    "to", // 367 days
			"?from=2026-11-23T00:00:00Z":        "from",
			"?from=0001-01-01&to=9999-12-31":    "to",
			"?from=" + strings.Repeat("9", 100): "from",
		} {
			r := s.usage(t, alice, query)
			mustProblem(t, r, 400, "invalid_request")
			if errs := r.json(t)["errors"].([]any); errs[0].(map[string]any)["field"] != field {
				t.Errorf("%s: errors = %v, want field %s", query, errs, field)
			}
		}
		if r := s.usage(t, alice, "?from=2025-11-23&to=2026-11-23"); r.status != 200 || len(r.json(t)["days"].([]any)) != 366 {
			t.Errorf("366 days = %d", r.status)
		}
	})
}

func TestTokenBudgetHoldsAcrossReplicas(t *testing.T) {
	t.Parallel()
	// Two replicas on one database, each with its own model; every turn
	// here is one model call of 15 tokens. The budget is 40 a day.
	budget := func(c *serverConfig) { c.chat.DailyTokenBudget = 40 }
	tel := telemetry.New(prometheus.NewRegistry(), nil)
	pool := storetest.Pool(t)
	a := mustServerOn(t, pool, newFakeOpenAI(t, openaitest.Step{Text: "Noted."}).Model(), budget)
	b := mustServerOn(t, pool, newFakeOpenAI(t, openaitest.Step{Text: "Noted."}).Model(), budget, observedBy(tel))
	user := storetest.UserID(t)

	first := a.chat(t, user, 0, "One")
	convID := int64(first.json(t)["conversation_id"].(float64))
	for i, s := range []*testServer{b, a} { // 15, then 30 used: still under 40
		if r := s.chat(t, user, convID, "More "+strconv.Itoa(i)); r.status != 200 {
			t.Fatalf("turn %d under the budget = %d %s", i+2, r.status, r.body)
		}
	}

	// 45 used: both replicas refuse, as JSON and as a stream, and keep nothing.
	r := b.chat(t, user, convID, "Too much")
	mustProblem(t, r, 429, "token_budget_exceeded")
	y, m, d := time.Now().UTC().Date()
	untilMidnight := time.Until(time.Date(y, m, d+1, 0, 0, 0, 0, time.UTC)).Seconds()
	if ra, _ := strconv.Atoi(r.header.Get("Retry-After")); float64(ra) < untilMidnight-5 || float64(ra) > untilMidnight+5 {
		t.Errorf("Retry-After = %q, want the %.0f seconds until midnight UTC", r.header.Get("Retry-After"), untilMidnight)
	}
	if detail := r.json(t)["detail"].(string); !strings.Contains(detail, "40 tokens") || !strings.Contains(detail, "45 today") {
		t.Errorf("detail = %q, want the budget and today's usage", detail)
	}
	resp := a.stream(t, context.Background(), user, chatBody(convID, "Too much, streamed"), nil)
	body := readAll(t, resp)
	mustMatchSpec(t, "POST", "/api/{user_id}/chat", resp.StatusCode, resp.Header, body)
	if resp.StatusCode != 429 || !strings.Contains(string(body), `"token_budget_exceeded"`) {
		t.Fatalf("streamed turn over the budget = %d %s", resp.StatusCode, body)
	}
	msgs := a.do(t, call{method: "GET", path: "/api/" + user + "/conversations/" + strconv.FormatInt(convID, 10) + "/messages", token: mustToken(t, user)})
	if n := len(msgs.json(t)["messages"].([]any)); n != 6 {
		t.Fatalf("messages = %d, want the 3 turns' 6: a refused message is not stored", n)
	}

	// The budget is the user's: someone else goes on.
	if r := b.chat(t, storetest.UserID(t), 0, "Hello"); r.status != 200 {
		t.Fatalf("another user = %d", r.status)
	}
	report := a.usage(t, user, "").json(t)
	if report["daily_token_budget"] != float64(40) || report["total"].(map[string]any)["total_tokens"] != float64(45) {
		t.Errorf("usage = %v, want the budget of 40 and the 45 used", report)
	}
	if got := telemetrytest.Scrape(t, tel)[telemetrytest.Series("taskchat_turns_total", "outcome", "budget_exceeded")]; got != 1 {
		t.Errorf("turns refused by the budget on replica b = %v, want 1", got)
	}
}

// A client that leaves mid-reply, before the model reported its usage,
// does not get the reply for free: its turn counts an estimate, and the
// budget refuses the next one. Otherwise leaving just before the end of
// every stream would dodge the budget.
func TestTokenBudgetCountsATurnItsClientLeft(t *testing.T) {
	t.Parallel()
	pause := make(chan struct{})
	fake := newFakeOpenAI(t, openaitest.Step{Text: strings.Repeat("and so on ", 50), Pause: pause, Rest: "the end."})
	s := mustServer(t, fake.Model(), func(c *serverConfig) { c.chat.DailyTokenBudget = 15 })
	user := storetest.UserID(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp := s.stream(t, ctx, user, chatBody(0, "Tell me a long story"), nil)
	seen := make([]byte, 0, 4096)
	for buf := make([]byte, 512); !strings.Contains(string(seen), "event: delta"); {
		n, err := resp.Body.Read(buf)
		if err != nil {
			t.Fatalf("stream ended early: %v (%q)", err, seen)
		}
		seen = append(seen, buf[:n]...)
	}
	cancel()
	resp.Body.Close()
	close(pause) // the turn goes on without its client, to its end

	var total map[string]any
	waitFor(t, "the turn to be counted", func() bool {
		total = s.usage(t, user, "").json(t)["total"].(map[string]any)
		return total["turns"] == float64(1)
	})
	if total["total_tokens"].(float64) != 15 {
		t.Fatalf("usage = %v, want the turn's prompt and reply as the model counted them (the budget of 15)", total)
	}
	mustProblem(t, s.chat(t, user, 0, "Another story"), 429, "token_budget_exceeded")
}

func readAll(tb testing.TB, resp *http.Response) []byte {
	tb.Helper()
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			return []byte(b.String())
		}
	}
}
