package http

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/taskchat/taskchat/internal/agent/offline"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/tasks"
)

// sendAtOnce sends n requests at once, alternately to each of servers, and
// counts the answers by status. It returns how long they took.
func sendAtOnce(n int, servers []*testServer, send func(s *testServer) reply) (statuses map[int]int, retryAfters []string, took time.Duration) {
	var mu sync.Mutex
	statuses = map[int]int{}
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		s := servers[i%len(servers)]
		wg.Go(func() {
			r := send(s)
			mu.Lock()
			defer mu.Unlock()
			statuses[r.status]++
			if r.status == http.StatusTooManyRequests {
				retryAfters = append(retryAfters, r.header.Get("Retry-After"))
			}
		})
	}
	wg.Wait()
	return statuses, retryAfters, time.Since(start)
}

// mustHoldRate fails unless the answers are those of one bucket of rate:
// every request answered or refused with 429 and a Retry-After, and no
// more answered than the burst and what the rate refilled meanwhile.
func mustHoldRate(tb testing.TB, n int, rate tasks.Rate, statuses map[int]int, retryAfters []string, took time.Duration) {
	tb.Helper()
	allowed := rate.Burst + int(took.Minutes()*rate.PerMinute)
	ok, refused := statuses[http.StatusOK], statuses[http.StatusTooManyRequests]
	if ok+refused != n || ok < rate.Burst || ok > allowed {
		tb.Fatalf("of %d requests at once, on two replicas, within %s: %v; want %d to %d answered (burst %d, %g a minute), the rest 429",
			n, took, statuses, rate.Burst, allowed, rate.Burst, rate.PerMinute)
	}
	for _, ra := range retryAfters {
		if ra == "" || ra == "0" {
			tb.Fatalf("a 429 with Retry-After %q", ra)
		}
	}
}

// The rate of turns is the user's, whatever replica a turn reaches: two
// replicas on one database answer no more turns sent at once than one.
func TestTurnRateHoldsAcrossReplicas(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	rate := tasks.Rate{PerMinute: 6, Burst: 6}
	limited := func(c *serverConfig) { c.chat.TurnRate = rate }
	servers := []*testServer{mustServerOn(t, pool, offline.New(), limited), mustServerOn(t, pool, offline.New(), limited)}
	user := storetest.UserID(t)
	statuses, retryAfters, took := sendAtOnce(24, servers, func(s *testServer) reply { return s.chat(t, user, 0, "hello") })
	mustHoldRate(t, 24, rate, statuses, retryAfters, took)
	// A refused turn saved nothing: one conversation per answered turn.
	if n := storetest.Count(t, `SELECT count(*) FROM conversations WHERE user_id = $1`, user); n != statuses[http.StatusOK] {
		t.Fatalf("%d conversations for %d answered turns", n, statuses[http.StatusOK])
	}
	// Another user's bucket is their own.
	if r := servers[1].chat(t, storetest.UserID(t), 0, "hello"); r.status != http.StatusOK {
		t.Fatalf("another user's turn = %d %s", r.status, r.body)
	}
}

// The rate of /mcp requests is the user's, whatever replica a request
// reaches.
func TestMCPRateHoldsAcrossReplicas(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	rate := tasks.Rate{PerMinute: 6, Burst: 4}
	limited := func(c *serverConfig) { c.api.MCP.RequestsPerMinute, c.api.MCP.Burst = rate.PerMinute, rate.Burst }
	servers := []*testServer{mustServerOn(t, pool, offline.New(), limited), mustServerOn(t, pool, offline.New(), limited)}
	tok := mustToken(t, storetest.UserID(t))
	statuses, retryAfters, took := sendAtOnce(16, servers, func(s *testServer) reply { return s.mcpPost(t, tok, listToolsMessage, nil) })
	mustHoldRate(t, 16, rate, statuses, retryAfters, took)
}

// stalledBuckets are shared buckets that never answer, as a database that
// is slow to.
type stalledBuckets struct{}

func (stalledBuckets) TakeToken(ctx context.Context, _, _ string, _ tasks.Rate) error {
	<-ctx.Done()
	return ctx.Err()
}

// When the shared buckets do not answer in time, /mcp neither refuses
// every request nor lets all through: after a bounded wait, the replica's
// own bucket decides.
func TestMCPRateFallsBackToTheReplicaWhenTheDatabaseStalls(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New(), func(c *serverConfig) {
		c.api.MCP.RequestsPerMinute, c.api.MCP.Burst, c.api.MCP.Buckets = 1, 2, stalledBuckets{}
	})
	tok := mustToken(t, storetest.UserID(t))
	for i, want := range []int{200, 200, 429} {
		start := time.Now()
		r := s.mcpPost(t, tok, listToolsMessage, nil)
		if r.status != want {
			t.Fatalf("request %d = %d %s, want %d", i+1, r.status, r.body, want)
		}
		if took := time.Since(start); took < mcpBucketWait || took > mcpBucketWait+5*time.Second {
			t.Fatalf("request %d took %s, want a little over %s", i+1, took, mcpBucketWait)
		}
	}
	if !strings.Contains(s.logs.String(), "the shared MCP rate bucket did not answer") {
		t.Fatal("the fallback was not logged")
	}
}

// A streamed turn past the rate is refused before its stream starts: 429
// with Retry-After, as a JSON turn is.
func TestTurnRateRefusesAStreamBeforeItStarts(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New(), func(c *serverConfig) { c.chat.TurnRate = tasks.Rate{PerMinute: 1, Burst: 1} })
	user := storetest.UserID(t)
	if r := s.chat(t, user, 0, "hello"); r.status != http.StatusOK {
		t.Fatalf("the first turn = %d %s", r.status, r.body)
	}
	resp := s.stream(t, context.Background(), user, chatBody(0, "hello again"), nil)
	defer resp.Body.Close()
	if ra := resp.Header.Get("Retry-After"); resp.StatusCode != http.StatusTooManyRequests || ra == "" || ra == "0" {
		t.Fatalf("a streamed turn past the rate = %d, Retry-After %q", resp.StatusCode, ra)
	}
}
