package http

import (
	"context"
	"crypto/rand"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/agent/agenttest"
	"github.com/taskchat/taskchat/internal/agent/offline"
	"github.com/taskchat/taskchat/internal/store"
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
		c.api.MCP.RequestsPerMinute, c.api.MCP.Burst, c.api.MCP.Buckets, c.api.MCP.BucketWait = 1, 2, stalledBuckets{}, mcpBucketWait
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

// The cap on a user's open streams is the user's, whatever replica a
// stream reaches: with one stream allowed, a turn streaming on one replica
// leaves no room on the other, for a streamed turn (refused before
// anything is saved) or a follower, until its client leaves.
func TestStreamCapHoldsAcrossReplicas(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	waiting := agenttest.ModelFunc(func(ctx context.Context, _ agent.Request, onText func(string)) (agent.Response, error) {
		onText("Working on it")
		<-ctx.Done() // until stopped
		return agent.Response{Text: "Working on it"}, ctx.Err()
	})
	one := func(c *serverConfig) { c.api.MaxStreams = 1 }
	a, b := mustServerOn(t, pool, waiting, one), mustServerOn(t, pool, waiting, one)
	user := storetest.UserID(t)
	ctx, leave := context.WithCancel(context.Background())
	defer leave()
	first := a.stream(t, ctx, user, chatBody(0, "hello"), nil)
	defer first.Body.Close()
	if first.StatusCode != http.StatusOK {
		t.Fatalf("the first stream = %d", first.StatusCode)
	}
	var conv int64
	waitFor(t, "the first turn to start", func() bool {
		conv, _ = mustLastTurn(t, user)
		return conv != 0
	})

	refused := b.stream(t, context.Background(), user, chatBody(0, "hello too"), nil)
	body, _ := io.ReadAll(refused.Body)
	refused.Body.Close()
	if ra := refused.Header.Get("Retry-After"); refused.StatusCode != http.StatusTooManyRequests || ra == "" || ra == "0" ||
		!strings.Contains(string(body), "Too many open streams") {
		t.Fatalf("a second stream on the other replica = %d, Retry-After %q: %s", refused.StatusCode, ra, body)
	}
	if n := storetest.Count(t, `SELECT count(*) FROM messages WHERE user_id = $1`, user); n != 1 {
		t.Fatalf("%d messages: the refused turn saved its message", n)
	}
	if r := b.getStream(t, user, conv, ""); r.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("a follower on the other replica = %d, want 429", r.StatusCode)
	}
	// Another user's streams are their own.
	other := storetest.UserID(t)
	if r := b.stream(t, ctx, other, chatBody(0, "hello"), nil); r.StatusCode != http.StatusOK {
		t.Fatalf("another user's stream = %d", r.StatusCode)
	}

	leave() // the first client leaves; its turn goes on, holding no stream
	waitFor(t, "the first stream's lease to be given back", func() bool {
		return storetest.Count(t, `SELECT count(*) FROM stream_leases WHERE user_id = $1`, user) == 0
	})
	follower := b.getStream(t, user, conv, "")
	if follower.StatusCode != http.StatusOK {
		t.Fatalf("a follower once the first client left = %d", follower.StatusCode)
	}
	for _, u := range []string{user, other} {
		c, _ := mustLastTurn(t, u)
		if r := a.stop(t, u, c); r.status != http.StatusAccepted {
			t.Fatalf("stop = %d %s", r.status, r.body)
		}
	}
}

// A lease a dead replica left counts until it runs out, and no longer: the
// user's next stream then opens, and the lease is gone.
func TestAStreamLeaseOfADeadReplicaRunsOut(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	s := mustServerOn(t, pool, offline.New(), func(c *serverConfig) { c.api.MaxStreams = 1 })
	user := storetest.UserID(t)
	left := func(until string) {
		t.Helper()
		if _, err := pool.Exec(context.Background(), `INSERT INTO stream_leases (id, user_id, lease_until) VALUES ($1, $2, now() + $3::interval)`,
			rand.Text(), user, until); err != nil {
			t.Fatal(err)
		}
	}
	left("20 seconds") // a replica's live stream, or one that died a moment ago
	if r := s.stream(t, context.Background(), user, chatBody(0, "Add a task to buy milk"), nil); r.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("a stream beside a live lease = %d, want 429", r.StatusCode)
	}
	if _, err := pool.Exec(context.Background(), `UPDATE stream_leases SET lease_until = now() - interval '1 second' WHERE user_id = $1`, user); err != nil {
		t.Fatal(err)
	}
	r := s.stream(t, context.Background(), user, chatBody(0, "Add a task to buy milk"), nil)
	events, _ := readEvents(t, r.Body)
	r.Body.Close()
	if r.StatusCode != http.StatusOK || eventNames(events) == "" {
		t.Fatalf("a stream once the lease ran out = %d %s", r.StatusCode, eventNames(events))
	}
	waitFor(t, "no lease left", func() bool {
		return storetest.Count(t, `SELECT count(*) FROM stream_leases WHERE user_id = $1`, user) == 0
	})
}

// A keyed retry's stream, which follows its running turn, is a stream like
// any other: it counts against MAX_STREAMS_PER_USER.
func TestAKeyedRetryStreamCountsAgainstTheCap(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	waiting := agenttest.ModelFunc(func(ctx context.Context, _ agent.Request, onText func(string)) (agent.Response, error) {
		onText("Working on it")
		<-ctx.Done()
		return agent.Response{Text: "Working on it"}, ctx.Err()
	})
	s := mustServerOn(t, pool, waiting, func(c *serverConfig) { c.api.MaxStreams = 1 })
	user := storetest.UserID(t)
	key := keyed("cap-" + user)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := s.stream(t, ctx, user, chatBody(0, "hello"), key)
	defer first.Body.Close()
	var conv int64
	waitFor(t, "the first turn to start", func() bool {
		conv, _ = mustLastTurn(t, user)
		return conv != 0
	})
	opened := 0
	for range 3 {
		r := s.stream(t, ctx, user, chatBody(0, "hello"), key)
		defer r.Body.Close()
		if r.StatusCode == http.StatusOK {
			opened++
		}
	}
	leases := storetest.Count(t, `SELECT count(*) FROM stream_leases WHERE user_id = $1`, user)
	if opened > 0 {
		t.Errorf("with one stream allowed and one open, %d keyed retries streamed (leases stored: %d)", opened, leases)
	}
	s.stop(t, user, conv)
}

// blockedStart holds StartTurn until proceed is closed, after telling entered.
type blockedStart struct {
	tasks.TurnStore
	entered, proceed chan struct{}
}

func (b blockedStart) StartTurn(ctx context.Context, s tasks.TurnStart) (tasks.Turn, error) {
	select {
	case <-b.entered:
	default:
		close(b.entered)
		<-b.proceed
	}
	return b.TurnStore.StartTurn(ctx, s)
}

// closeSignal tells closed each time a lease is given back.
type closeSignal struct {
	tasks.StreamLeases
	closed chan struct{}
}

func (c closeSignal) CloseStream(ctx context.Context, userID, id string) error {
	err := c.StreamLeases.CloseStream(ctx, userID, id)
	c.closed <- struct{}{}
	return err
}

// A client that leaves while its turn is still starting leaves no lease
// behind once the turn has started.
func TestAClientThatLeavesAsItsTurnStartsLeavesNoLease(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	entered, proceed, closed := make(chan struct{}), make(chan struct{}), make(chan struct{}, 4)
	s := mustServerOn(t, pool, offline.New(), func(c *serverConfig) {
		c.api.MaxStreams = 1
		c.api.Streams = closeSignal{store.NewLimits(pool), closed}
		c.wrapTurns = func(ts tasks.TurnStore) tasks.TurnStore { return blockedStart{ts, entered, proceed} }
	})
	user := storetest.UserID(t)
	ctx, leave := context.WithCancel(context.Background())
	go func() {
		if r, err := s.Client().Do(mustStreamRequest(t, ctx, s, user)); err == nil {
			r.Body.Close()
		}
	}()
	<-entered
	leave()
	// Before the fix the lease is given back here, before the turn took
	// it; after it, nothing is given back until the turn has started: an
	// event that may not come, so the wait is bounded.
	select {
	case <-closed:
	case <-time.After(time.Second):
	}
	close(proceed)
	waitFor(t, "the turn to be answered", func() bool {
		return storetest.Count(t, `SELECT count(*) FROM messages WHERE user_id = $1 AND role = 'assistant'`, user) == 1
	})
	if n := storetest.Count(t, `SELECT count(*) FROM stream_leases WHERE user_id = $1 AND lease_until > now()`, user); n != 0 {
		t.Errorf("%d leases left after the client left and its turn ended: the user is refused a stream until it runs out", n)
	}
	if r := s.stream(t, context.Background(), user, chatBody(0, "Add a task to buy eggs"), nil); r.StatusCode != http.StatusOK {
		t.Errorf("the user's next stream = %d", r.StatusCode)
	}
}

func mustStreamRequest(tb testing.TB, ctx context.Context, s *testServer, user string) *http.Request {
	tb.Helper()
	req, err := http.NewRequestWithContext(ctx, "POST", s.URL+"/api/"+user+"/chat", strings.NewReader(chatBody(0, "Add a task to buy milk")))
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+mustToken(tb, user))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	return req
}
