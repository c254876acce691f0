package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/agent/openaitest"
	"github.com/taskchat/taskchat/internal/store/storetest"
)

// event is one Server-Sent Event of a turn's stream.
type event struct {
	id, name string
	data     map[string]any
}

// eventStream reads a turn's stream an event at a time.
type eventStream struct {
	resp *http.Response
	sc   *bufio.Scanner
}

// openStream sends a request that answers a stream and returns it; the
// caller closes it (which is how a client leaves).
func openStream(tb testing.TB, method, url, token, body string, header map[string]string) *eventStream {
	tb.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "text/event-stream")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { resp.Body.Close() })
	return &eventStream{resp: resp, sc: bufio.NewScanner(resp.Body)}
}

// next returns the next event; false at the end of the stream.
func (s *eventStream) next() (event, bool) {
	var e event
	for s.sc.Scan() {
		line := s.sc.Text()
		switch {
		case line == "" && e.name != "":
			return e, true
		case strings.HasPrefix(line, "id: "):
			e.id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "event: "):
			e.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			_ = json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &e.data)
		}
	}
	return e, false
}

// until reads events up to and including the first that last accepts.
func (s *eventStream) until(tb testing.TB, last func(event) bool) []event {
	tb.Helper()
	var got []event
	for {
		e, ok := s.next()
		if !ok {
			tb.Fatalf("the stream ended after %v", names(got))
		}
		got = append(got, e)
		if last(e) {
			return got
		}
	}
}

// rest reads the stream to its end.
func (s *eventStream) rest() []event {
	var got []event
	for e, ok := s.next(); ok; e, ok = s.next() {
		got = append(got, e)
	}
	return got
}

func names(events []event) string {
	var n []string
	for _, e := range events {
		n = append(n, e.name)
	}
	return strings.Join(n, ",")
}

// text joins the deltas of events.
func text(events []event) string {
	var b strings.Builder
	for _, e := range events {
		if e.name == "delta" {
			b.WriteString(e.data["text"].(string))
		}
	}
	return b.String()
}

func isDelta(word string) func(event) bool {
	return func(e event) bool { return e.name == "delta" && strings.Contains(e.data["text"].(string), word) }
}

// storedReply waits for the conversation's reply to turn n (from 1) and
// returns it.
func storedReply(tb testing.TB, base, token, user string, conv any, n int) map[string]any {
	tb.Helper()
	var msgs []any
	waitFor(tb, "the reply to be stored", func() bool {
		req, _ := http.NewRequest("GET", fmt.Sprintf("%s/api/%s/conversations/%v/messages", base, user, conv), nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var page struct{ Messages []any }
		_ = json.NewDecoder(resp.Body).Decode(&page)
		msgs = page.Messages
		return len(msgs) >= 2*n
	})
	return msgs[2*n-1].(map[string]any)
}

// TestTurnsOutliveTheirConnectionAcrossReplicas runs two replicas over one
// database, the model behind both the same fake, and has clients leave,
// resume, stop and follow turns, each on the replica that does not run it.
// It runs alone, not in parallel: its last scene cuts the package's
// database, every other test's connections with it.
func TestTurnsOutliveTheirConnectionAcrossReplicas(t *testing.T) {
	fake := openaitest.New()
	defer fake.Close()
	vars := map[string]string{"OPENAI_BASE_URL": fake.URL + "/v1", "MAX_STREAMS_PER_USER": "200"}
	a, _, _ := mustRun(t, vars)
	b, _, _ := mustRun(t, vars)
	waitHealthy(t, a)
	waitHealthy(t, b)
	user := storetest.UserID(t)
	tok := mustMint(t, user)
	chatURL := func(base string) string { return base + "/api/" + user + "/chat" }
	convURL := func(base string, conv any, what string) string {
		return fmt.Sprintf("%s/api/%s/conversations/%v/%s", base, user, conv, what)
	}

	t.Run("a client that leaves does not end the turn", func(t *testing.T) {
		pause := make(chan struct{})
		fake.SetScript(openaitest.Step{Text: "First half ", Pause: pause, Rest: "and the second half."})
		s := openStream(t, "POST", chatURL(a), tok, `{"message":"tell me"}`, nil)
		start := s.until(t, isDelta("half"))[0]
		s.resp.Body.Close() // the client leaves
		close(pause)
		reply := storedReply(t, b, tok, user, start.data["conversation_id"], 1)
		if reply["content"] != "First half and the second half." || reply["interrupted"] != false {
			t.Fatalf("stored reply = %v, want it whole", reply)
		}
	})

	t.Run("a stream resumes on the other replica after its Last-Event-ID", func(t *testing.T) {
		pause := make(chan struct{})
		fake.SetScript(openaitest.Step{Calls: []agent.ToolCall{{ID: "c1", Name: "add_task", Arguments: `{"title":"Buy milk"}`}}},
			openaitest.Step{Text: "Added task 1, Buy milk. Now ", Pause: pause, Rest: "anything else?"})
		s := openStream(t, "POST", chatURL(a), tok, `{"message":"add buy milk"}`, nil)
		first := s.until(t, isDelta("Now"))
		s.resp.Body.Close()
		last := first[len(first)-1].id
		r := openStream(t, "GET", convURL(b, first[0].data["conversation_id"], "stream"), tok, "", map[string]string{"Last-Event-ID": last})
		if r.resp.StatusCode != 200 {
			t.Fatalf("resume = %d", r.resp.StatusCode)
		}
		close(pause)
		resumed := r.rest()
		all := append(first, resumed...)
		run := strings.Split(all[0].id, "-")[0]
		for i, e := range all {
			if e.id != fmt.Sprintf("%s-%d", run, i+1) {
				t.Fatalf("event %d (%s) has id %q: lost or sent twice (%s)", i, e.name, e.id, names(all))
			}
		}
		done := all[len(all)-1]
		reply := storedReply(t, a, tok, user, all[0].data["conversation_id"], 1)
		if done.name != "done" || text(all) != done.data["response"] || text(all) != reply["content"] || reply["content"] != "Added task 1, Buy milk. Now anything else?" {
			t.Fatalf("joined %q, done %v, stored %v", text(all), done.data, reply)
		}
		if names(first)[:len("start,tool_call,tool_result")] != "start,tool_call,tool_result" {
			t.Fatalf("first connection = %s", names(first))
		}
	})

	t.Run("a stop from the other replica ends the turn", func(t *testing.T) {
		fake.SetScript(openaitest.Step{Text: "Thinking about ", Pause: make(chan struct{}), Rest: "never said."})
		s := openStream(t, "POST", chatURL(a), tok, `{"message":"think"}`, nil)
		conv := s.until(t, isDelta("about"))[0].data["conversation_id"]
		asked := time.Now()
		req, _ := http.NewRequest("POST", convURL(b, conv, "stop"), nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var stop map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&stop)
		resp.Body.Close()
		if resp.StatusCode != 202 || stop["ended"] != true {
			t.Fatalf("stop = %d %v", resp.StatusCode, stop)
		}
		if took := time.Since(asked); took > time.Second {
			t.Errorf("the stop took %v; want the turn ended within a second", took)
		}
		end := s.rest()
		if len(end) != 1 || end[0].name != "done" || end[0].data["stopped"] != true || end[0].data["interrupted"] != true || end[0].data["response"] != "Thinking about " {
			t.Fatalf("the stopped stream ended with %v", end)
		}
		reply := storedReply(t, b, tok, user, conv, 1)
		if reply["content"] != "Thinking about " || reply["interrupted"] != true {
			t.Fatalf("stored reply = %v", reply)
		}
		// The next message is accepted at once, and a stop when nothing runs is 204.
		fake.SetScript(openaitest.Step{Text: "Hello again."})
		if got := postChat(t, b, tok, user, fmt.Sprintf(`{"conversation_id":%v,"message":"hi"}`, conv)); got["response"] != "Hello again." {
			t.Fatalf("the next turn = %v", got)
		}
		resp, err = http.DefaultClient.Do(req.Clone(context.Background()))
		if err != nil || resp.StatusCode != 204 {
			t.Fatalf("a stop with nothing running = %v, %v", resp.StatusCode, err)
		}
		resp.Body.Close()
	})

	t.Run("a hundred followers on both replicas see the same reply", func(t *testing.T) {
		pause := make(chan struct{})
		fake.SetScript(openaitest.Step{Text: "One ", Pause: pause, Rest: "two three four."})
		s := openStream(t, "POST", chatURL(a), tok, `{"message":"count"}`, nil)
		conv := s.until(t, isDelta("One"))[0].data["conversation_id"]
		const followers = 100
		texts := make([]string, followers)
		var started, wg sync.WaitGroup
		started.Add(followers)
		for i := range followers {
			base := []string{a, b}[i%2]
			wg.Go(func() {
				f := openStream(t, "GET", convURL(base, conv, "stream"), tok, "", nil)
				f.until(t, isDelta("One"))
				started.Done()
				rest := f.rest()
				texts[i] = "One " + text(rest)
				if len(rest) == 0 || rest[len(rest)-1].name != "done" {
					texts[i] += " (no done)"
				}
			})
		}
		started.Wait()
		close(pause)
		wg.Wait()
		if own := text(s.rest()); own != "two three four." {
			t.Fatalf("the turn's own stream read %q after the pause", own)
		}
		for i, got := range texts {
			if got != "One two three four." {
				t.Fatalf("follower %d read %q", i, got)
			}
		}
	})

	t.Run("a follower waits out a database restart and loses nothing", func(t *testing.T) {
		pause := make(chan struct{})
		fake.SetScript(openaitest.Step{Text: "Before the outage ", Pause: pause, Rest: "and after it."})
		s := openStream(t, "POST", chatURL(a), tok, `{"message":"go on"}`, nil)
		conv := s.until(t, isDelta("outage"))[0].data["conversation_id"]
		f := openStream(t, "GET", convURL(b, conv, "stream"), tok, "", nil)
		seen := f.until(t, isDelta("outage"))
		restore := storetest.CutDatabase(t) // every connection dropped, none taken: as a restart
		time.Sleep(time.Second)
		restore()
		close(pause)
		all := append(seen, f.rest()...)
		if done := all[len(all)-1]; done.name != "done" || text(all) != "Before the outage and after it." {
			t.Fatalf("the follower read %q, ending %s", text(all), names(all))
		}
		if reply := storedReply(t, a, tok, user, conv, 1); reply["content"] != "Before the outage and after it." {
			t.Fatalf("stored reply = %v", reply)
		}
	})
}

func TestConfigOfRuns(t *testing.T) {
	t.Parallel()
	vars := map[string]string{"DATABASE_URL": "postgres://app@db/taskchat", "JWT_SECRET": secret}
	cfg, err := loadConfig(env(vars))
	if err != nil || cfg.MaxRunningTurns != 4 || cfg.ListenDatabaseURL != vars["DATABASE_URL"] || cfg.Retention.RunsFor != 10*time.Minute {
		t.Fatalf("by default: %d running turns, listening on %q, runs kept %s, %v", cfg.MaxRunningTurns, cfg.ListenDatabaseURL, cfg.Retention.RunsFor, err)
	}
	vars["MAX_RUNNING_TURNS_PER_USER"] = "1"
	if cfg, err = loadConfig(env(vars)); err != nil || cfg.MaxRunningTurns != 1 {
		t.Fatalf("MAX_RUNNING_TURNS_PER_USER=1: %d, %v", cfg.MaxRunningTurns, err)
	}
	for _, bad := range []string{"0", "-1", "many"} {
		vars["MAX_RUNNING_TURNS_PER_USER"] = bad
		if _, err := loadConfig(env(vars)); err == nil || !strings.Contains(err.Error(), "MAX_RUNNING_TURNS_PER_USER") {
			t.Errorf("MAX_RUNNING_TURNS_PER_USER=%s: %v", bad, err)
		}
	}
}

// OFFLINE_MODEL_PACE lets a person watch the offline model write a reply,
// and follow and stop it, with no real model: here a reply of many pieces,
// a second apart, is stopped after its first.
func TestRunWithAPacedOfflineModel(t *testing.T) {
	t.Parallel()
	if _, err := loadConfig(env(map[string]string{"DATABASE_URL": "postgres://app@db/x", "JWT_SECRET": secret, "OFFLINE_MODEL_PACE": "soon"})); err == nil || !strings.Contains(err.Error(), "OFFLINE_MODEL_PACE") {
		t.Fatalf("OFFLINE_MODEL_PACE=soon: %v", err)
	}
	base, _, _ := mustRun(t, map[string]string{"OFFLINE_MODEL_PACE": "1s"})
	waitHealthy(t, base)
	user := storetest.UserID(t)
	tok := mustMint(t, user)
	s := openStream(t, "POST", base+"/api/"+user+"/chat", tok, `{"message":"hello"}`, nil)
	conv := s.until(t, func(e event) bool { return e.name == "delta" })[0].data["conversation_id"]
	req, _ := http.NewRequest("POST", fmt.Sprintf("%s/api/%s/conversations/%v/stop", base, user, conv), nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 202 {
		t.Fatalf("stop = %v, %v", resp.StatusCode, err)
	}
	resp.Body.Close()
	end := s.rest()
	if len(end) != 1 || end[0].data["stopped"] != true {
		t.Fatalf("the paced reply ended with %v; want it stopped after its first piece", end)
	}
}
