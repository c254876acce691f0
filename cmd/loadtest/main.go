package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/agent/openaitest"
	"github.com/taskchat/taskchat/internal/auth"
	"github.com/taskchat/taskchat/internal/gctune"
	"github.com/taskchat/taskchat/internal/store"
)

const secret = "loadtest-secret-of-at-least-32-bytes!"

func main() {
	var (
		role        = flag.String("role", "driver", "driver, or server (started by the driver)")
		db          = flag.String("db", os.Getenv("TEST_DATABASE_URL"), "PostgreSQL URL; a scratch database is created next to it")
		modelURL    = flag.String("model", "", "server role: the fake model's base URL")
		users       = flag.Int("users", 100, "users chatting, half of them streaming")
		turns       = flag.Int("turns", 10, "turns per user, in one conversation")
		concurrency = flag.Int("concurrency", 16, "turns in flight at once")
		streams     = flag.Int("streams", 1000, "idle streams held open to measure memory")
		followersN  = flag.Int("followers", 1000, "followers of one running turn (GET …/stream) held open to measure memory; 0 skips, and so does -floor")
		cpuProfile  = flag.String("cpuprofile", "", "write the server's CPU profile of the load phase to this file")
		http2       = flag.Bool("http2", false, "serve the fake model over HTTPS with HTTP/2, as OpenAI does (streams share a connection), instead of HTTP/1.1 as a local server does")
		certFile    = flag.String("model-cert", "", "server role: PEM certificate the fake model uses")
		asyncCommit = flag.Bool("async-commit", false, "diagnostic: run the scratch database with synchronous_commit=off, to separate the disk's fsync wait from the service's own work")
		floor       = flag.Bool("floor", false, "measure the hand-written floor (floor.go) instead of taskchat: the same turns, schema and fake model with only the work a turn cannot avoid")
		gcHeadroom  = flag.Int("gc-headroom", gctune.DefaultHeadroom>>20, "MiB the server's heap goal sits at least above its live heap, as cmd/server's GC_HEADROOM_MB (0, or GOGC set: Go's GOGC alone)")
		pgbouncer   = flag.String("pgbouncer", "", "host:port of a PgBouncer in transaction pooling mode in front of -db's server (a * database entry): the server connects through it without prepared statements, as DATABASE_PREPARED_STATEMENTS=false does; the scratch database and its migrations stay direct")
	)
	flag.Parse()
	if *gcHeadroom < 0 {
		fmt.Fprintln(os.Stderr, "loadtest: -gc-headroom must be 0 or more MiB")
		os.Exit(2)
	}
	gogc := strings.TrimSpace(os.Getenv("GOGC"))
	if gogc != "" { // as in cmd/server: a GOGC set rules alone
		flag.Visit(func(f *flag.Flag) {
			if f.Name == "gc-headroom" && *role == "driver" {
				fmt.Fprintln(os.Stderr, "loadtest: set GOGC or -gc-headroom, not both")
				os.Exit(2)
			}
		})
		*gcHeadroom = 0
	}
	var err error
	if *role != "driver" {
		defer gctune.Start(uint64(*gcHeadroom) << 20)()
	}
	switch *role {
	case "server":
		err = runServer(*db, *modelURL, *certFile, *cpuProfile)
	case "floor":
		err = runFloor(*db, *modelURL, *certFile, *cpuProfile)
	default:
		err = drive(*db, options{users: *users, turns: *turns, concurrency: *concurrency, streams: *streams, followers: *followersN,
			asyncCommit: *asyncCommit, http2: *http2, cpuProfile: *cpuProfile, pgbouncer: *pgbouncer, floor: *floor, gcHeadroom: *gcHeadroom, gogc: gogc})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		os.Exit(1)
	}
}

// options shape a load run; see the flags.
type options struct {
	users, turns, concurrency, streams int
	followers                          int // followers of one turn; see followers
	asyncCommit, http2                 bool
	cpuProfile                         string
	pgbouncer                          string // host:port; "" for PostgreSQL directly
	floor                              bool   // the hand-written floor instead of taskchat
	gcHeadroom                         int    // MiB; see gctune
	gogc                               string // GOGC from the environment, which rules alone when set
}

// drive runs the whole measurement and prints the report.
func drive(adminURL string, o options) error {
	if adminURL == "" {
		return fmt.Errorf("set -db or TEST_DATABASE_URL to a PostgreSQL server")
	}
	ctx := context.Background()
	dbURL, drop, err := scratchDatabase(ctx, adminURL, o.asyncCommit)
	if err != nil {
		return err
	}
	defer drop()
	if err := store.Migrate(ctx, dbURL); err != nil {
		return err
	}
	hold := make(chan struct{}) // idle streams' model calls wait on it
	fake, certFile, err := startFake(o.http2)
	if err != nil {
		return err
	}
	defer fake.Close()
	answer := openaitest.ToolThenAnswer(agent.ToolCall{ID: "call_1", Name: "add_task", Arguments: `{"title":"Load test task"}`}, "Added the task.")
	fake.Respond = func(req map[string]any, n int) openaitest.Step {
		if strings.Contains(fmt.Sprint(req["messages"]), "[idle]") {
			return openaitest.Step{Text: "Thinking ", Wait: hold}
		}
		if strings.Contains(fmt.Sprint(req["messages"]), "[follow]") {
			return openaitest.Step{Text: "Followed ", Pause: followHold, Rest: "and done."}
		}
		return answer(req, n)
	}
	serverURL, err := throughPgBouncer(dbURL, o.pgbouncer)
	if err != nil {
		return err
	}
	role := "server"
	if o.floor {
		role = "floor"
	}
	base, stop, err := startServer(role, serverURL, fake.URL+"/v1", certFile, o.cpuProfile, o.gcHeadroom)
	if err != nil {
		return err
	}
	defer stop()

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: o.concurrency * 2, MaxConnsPerHost: 0}}
	if _, err := runTurns(client, base, 4, 2, 2); err != nil { // warm the pools and statement caches
		return fmt.Errorf("warm-up: %w", err)
	}
	if _, err := fetchStats(base, true); err != nil {
		return err
	}
	before, err := takeDBSnapshot(ctx, dbURL)
	if err != nil {
		return err
	}
	if err := profile(base, "start"); err != nil {
		return err
	}
	load, err := runTurns(client, base, o.users, o.turns, o.concurrency)
	if err != nil {
		return err
	}
	if err := profile(base, "stop"); err != nil {
		return err
	}
	st, err := fetchStats(base, true)
	if err != nil {
		return err
	}
	after, err := takeDBSnapshot(ctx, dbURL)
	if err != nil {
		return err
	}
	idle, err := idleStreams(base, o.streams, fake, hold)
	if err != nil {
		return err
	}
	var follow followResult
	if o.followers > 0 && !o.floor { // the floor serves no stream route
		if follow, err = followers(base, o.followers, fake); err != nil {
			return err
		}
	}
	report(os.Stdout, o, load, st, before.perTurn(after, load.turns), idle, follow)
	return nil
}

// throughPgBouncer returns dbURL through the PgBouncer at addr, with pgx's
// cache_describe mode (store.Settings.NoPreparedStatements); dbURL itself
// when addr is "".
func throughPgBouncer(dbURL, addr string) (string, error) {
	if addr == "" {
		return dbURL, nil
	}
	u, err := url.Parse(dbURL)
	if err != nil {
		return "", err
	}
	u.Host = addr
	q := u.Query()
	q.Set("default_query_exec_mode", "cache_describe")
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// startFake starts the fake model, over HTTP/1.1 or over HTTPS with
// HTTP/2; for the latter it writes the certificate for the server to trust.
func startFake(http2 bool) (*openaitest.Server, string, error) {
	if !http2 {
		return openaitest.New(), "", nil
	}
	fake := openaitest.NewTLS()
	f, err := os.CreateTemp("", "taskchat-load-*.pem")
	if err != nil {
		fake.Close()
		return nil, "", err
	}
	defer f.Close()
	err = pem.Encode(f, &pem.Block{Type: "CERTIFICATE", Bytes: fake.Certificate().Raw})
	return fake, f.Name(), err
}

// startServer starts this binary in role (server, or floor) and waits for its address.
func startServer(role, dbURL, modelURL, certFile, cpuProfile string, gcHeadroom int) (string, func(), error) {
	cmd := exec.Command(os.Args[0], "-role", role, "-db", dbURL, "-model", modelURL, "-model-cert", certFile, "-cpuprofile", cpuProfile,
		"-gc-headroom", strconv.Itoa(gcHeadroom))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if err != nil || !ok {
		stop()
		return "", nil, fmt.Errorf("server did not start: %q %v", line, err)
	}
	return "http://" + addr, stop, nil
}

// loadResult is what the clients saw.
type loadResult struct {
	turns     int
	errors    int
	wall      time.Duration
	latencies []time.Duration
}

// runTurns has users chat turns each in one conversation, concurrency
// users at a time; a user's turns go one after the other, as a person's
// would. Odd users stream.
func runTurns(client *http.Client, base string, users, turns, concurrency int) (loadResult, error) {
	jobs := make(chan int)
	var (
		mu  sync.Mutex
		res loadResult
		wg  sync.WaitGroup
	)
	prefix := randomHex(4)
	record := func(d time.Duration, user string, err error) {
		mu.Lock()
		defer mu.Unlock()
		res.turns++
		res.latencies = append(res.latencies, d)
		if err != nil {
			res.errors++
			if res.errors <= 3 {
				fmt.Fprintf(os.Stderr, "loadtest: %s: %v\n", user, err)
			}
		}
	}
	start := time.Now()
	for range concurrency {
		wg.Go(func() {
			for u := range jobs {
				user := fmt.Sprintf("load-%s-%d", prefix, u)
				var conv int64
				for range turns {
					t0 := time.Now()
					id, err := turn(client, base, user, conv, u%2 == 1, "Add a task to keep the load going")
					record(time.Since(t0), user, err)
					if err == nil {
						conv = id
					}
				}
			}
		})
	}
	for u := range users {
		jobs <- u
	}
	close(jobs)
	wg.Wait()
	res.wall = time.Since(start)
	if res.errors > 0 {
		return res, fmt.Errorf("%d of %d turns failed", res.errors, res.turns)
	}
	return res, nil
}

// turn sends one chat turn and returns its conversation id.
func turn(client *http.Client, base, user string, conv int64, stream bool, message string) (int64, error) {
	body := map[string]any{"message": message}
	if conv != 0 {
		body["conversation_id"] = conv
	}
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", base+"/api/"+user+"/chat", strings.NewReader(string(b)))
	req.Header.Set("Authorization", "Bearer "+mustToken(user))
	req.Header.Set("Content-Type", "application/json")
	if stream {
		req.Header.Set("Accept", "text/event-stream")
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		msg, _ := io.ReadAll(resp.Body)
		return 0, fmt.Errorf("%d %s", resp.StatusCode, msg)
	}
	if !stream {
		var out struct {
			ConversationID int64 `json:"conversation_id"`
		}
		return out.ConversationID, json.NewDecoder(resp.Body).Decode(&out)
	}
	sc := bufio.NewScanner(resp.Body)
	var last string
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			last = d
		}
	}
	var done struct {
		ConversationID int64  `json:"conversation_id"`
		Response       string `json:"response"`
	}
	if err := json.Unmarshal([]byte(last), &done); err != nil || done.Response == "" {
		return 0, fmt.Errorf("stream did not end with done: %q", last)
	}
	return done.ConversationID, nil
}

var (
	tokensMu sync.Mutex
	tokens   = map[string]string{}
)

func mustToken(user string) string {
	tokensMu.Lock()
	defer tokensMu.Unlock()
	if t, ok := tokens[user]; ok {
		return t
	}
	t, err := auth.MintToken([]byte(secret), user, time.Hour, "", "", time.Now())
	if err != nil {
		panic(err)
	}
	tokens[user] = t
	return t
}

// idleResult is the server's memory with and without the idle streams.
type idleResult struct {
	before, after serverStats
}

// idleStreams opens n streams whose model calls hang, measures the server,
// then releases them.
func idleStreams(base string, n int, fake *openaitest.Server, hold chan struct{}) (idleResult, error) {
	var res idleResult
	var err error
	if res.before, err = fetchStats(base, false); err != nil {
		return res, err
	}
	seen := fake.Requests()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n}}
	var wg sync.WaitGroup
	var failed atomic.Int64
	prefix := randomHex(4)
	for i := range n {
		wg.Go(func() {
			if _, err := turn(client, base, fmt.Sprintf("idle-%s-%d", prefix, i), 0, true, "[idle] hold this stream open"); err != nil {
				failed.Add(1)
			}
		})
	}
	deadline := time.Now().Add(60 * time.Second)
	for fake.Requests() < seen+n && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := fake.Requests() - seen; got < n {
		return res, fmt.Errorf("only %d of %d streams reached the model", got, n)
	}
	res.after, err = fetchStats(base+"/", false) // the trailing slash asks for a heap profile too
	close(hold)
	wg.Wait()
	if failed.Load() > 0 {
		return res, fmt.Errorf("%d idle streams failed", failed.Load())
	}
	return res, err
}

// profile starts or stops the server's CPU profile (a no-op without -cpuprofile).
func profile(base, action string) error {
	resp, err := http.Post(base+"/debug/loadprofile?"+action, "", nil)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

func fetchStats(base string, reset bool) (serverStats, error) {
	u := strings.TrimSuffix(base, "/") + "/debug/loadstats?heap=" + map[bool]string{true: "1", false: "0"}[strings.HasSuffix(base, "/")]
	if reset {
		u += "&reset=1"
	}
	resp, err := http.Get(u)
	if err != nil {
		return serverStats{}, err
	}
	defer resp.Body.Close()
	var st serverStats
	return st, json.NewDecoder(resp.Body).Decode(&st)
}

// report prints the measurements as a Markdown table.
func report(w io.Writer, o options, load loadResult, st serverStats, db dbUse, idle idleResult, follow followResult) {
	sort.Slice(load.latencies, func(i, j int) bool { return load.latencies[i] < load.latencies[j] })
	proto := "model over HTTP/1.1"
	if o.http2 {
		proto = "model over HTTPS with HTTP/2"
	}
	commit := "synchronous_commit=on"
	if o.asyncCommit {
		commit = "synchronous_commit=off (diagnostic)"
	}
	gc := fmt.Sprintf("GC headroom %d MiB", o.gcHeadroom)
	if o.gogc != "" {
		gc = "GOGC=" + o.gogc
	} else if o.gcHeadroom == 0 {
		gc = "GOGC=100"
	}
	fmt.Fprintf(w, "taskchat load test: %d turns (half streamed) by %d concurrent clients, %s, %s, %s, %d CPUs, %s, %s\n\n",
		load.turns, o.concurrency, proto, commit, runtime.Version(), runtime.NumCPU(), gc, time.Now().UTC().Format(time.DateOnly))
	if o.floor {
		fmt.Fprintf(w, "This is the hand-written floor (cmd/loadtest/floor.go), not taskchat.\n\n")
	}
	if o.pgbouncer != "" {
		fmt.Fprintf(w, "The server's database connections go through PgBouncer at %s (transaction pooling, no prepared statements).\n\n", o.pgbouncer)
	}
	fmt.Fprintln(w, "| measure | result | target |")
	fmt.Fprintln(w, "|---|---|---|")
	fmt.Fprintf(w, "| turns/s | %.0f | |\n", float64(load.turns)/load.wall.Seconds())
	fmt.Fprintf(w, "| latency p50 / p95 / p99 (client) | %.2f / %.2f / %.2f ms | |\n", pct(load.latencies, 50), pct(load.latencies, 95), pct(load.latencies, 99))
	fmt.Fprintf(w, "| server CPU per turn (user + system over the turns served) | %.3f ms | ≤ 0.7 ms |\n", st.CPUPerTurn)
	fmt.Fprintf(w, "| server system calls per turn: reads / writes | %.1f / %.1f | |\n", st.ReadsPerTurn, st.WritesPerTurn)
	fmt.Fprintf(w, "| service time per turn p50 / p95 / p99 (total minus model) | %.2f / %.2f / %.2f ms | p50 ≤ 1.4 ms with one client |\n", st.ServiceP50, st.ServiceP95, st.ServiceP99)
	fmt.Fprintf(w, "| database round trips per turn, turn's own work (max) | %.2f (%d) | ≤ 3 |\n", st.OwnRoundTrips, st.MaxOwnRTs)
	fmt.Fprintf(w, "| database round trips per turn, tools' statements | %.2f (1 add_task per turn) | |\n", float64(st.ToolRoundTrips)/float64(max(st.Turns, 1)))
	fmt.Fprintf(w, "| statement preparations during the run | %d | |\n", st.Prepares)
	db.report(w)
	if follow.n > 0 {
		n := float64(follow.n)
		fmt.Fprintf(w, "| memory per follower of a running turn (heap + stacks, %d followers) | %.1f KiB | close to an idle stream's |\n", follow.n,
			float64(int64(follow.after.HeapInuse+follow.after.StackInuse)-int64(follow.before.HeapInuse+follow.before.StackInuse))/n/1024)
		fmt.Fprintf(w, "| goroutines per follower | %.1f | |\n", float64(follow.after.Goroutines-follow.before.Goroutines)/n)
	}
	if o.streams == 0 { // -streams 0 skips the memory phase
		return
	}
	perStream := (int64(idle.after.HeapInuse+idle.after.StackInuse) - int64(idle.before.HeapInuse+idle.before.StackInuse)) / int64(o.streams)
	fmt.Fprintf(w, "| memory per idle open stream (heap + stacks, %d streams) | %.1f KiB | ≤ 52 KiB |\n", o.streams, float64(perStream)/1024)
	fmt.Fprintf(w, "| of which heap / stacks | %.1f / %.1f KiB | |\n",
		float64(int64(idle.after.HeapInuse)-int64(idle.before.HeapInuse))/float64(o.streams)/1024,
		float64(int64(idle.after.StackInuse)-int64(idle.before.StackInuse))/float64(o.streams)/1024)
	fmt.Fprintf(w, "| goroutines per idle open stream | %.1f | |\n", float64(idle.after.Goroutines-idle.before.Goroutines)/float64(o.streams))
}

// scratchDatabase creates a database next to adminURL's and returns its URL
// and a function dropping it.
func scratchDatabase(ctx context.Context, adminURL string, asyncCommit bool) (string, func(), error) {
	name := "taskchat_load_" + randomHex(4)
	exec := func(sql string) error {
		conn, err := pgx.Connect(ctx, adminURL)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, sql)
		return err
	}
	if err := exec("CREATE DATABASE " + name); err != nil {
		return "", nil, err
	}
	if asyncCommit {
		if err := exec("ALTER DATABASE " + name + " SET synchronous_commit = off"); err != nil {
			return "", nil, err
		}
	}
	u, err := url.Parse(adminURL)
	if err != nil {
		return "", nil, err
	}
	u.Path = "/" + name
	return u.String(), func() { _ = exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)") }, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
