package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"regexp"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/agent/openai"
	"github.com/taskchat/taskchat/internal/auth"
	"github.com/taskchat/taskchat/internal/chat"
	taskhttp "github.com/taskchat/taskchat/internal/http"
	"github.com/taskchat/taskchat/internal/mcptools"
	"github.com/taskchat/taskchat/internal/runs"
	"github.com/taskchat/taskchat/internal/store"
	"github.com/taskchat/taskchat/internal/tasks"
)

// The server role runs the real service, as cmd/server wires it, in its
// own process so its memory is measured alone. Instrumentation is added at
// the edges only: a pgx tracer counting round trips, a model wrapper timing
// the model, and a middleware attributing both to each chat turn.

// turnStats is what one chat turn spent, attributed through its context.
type turnStats struct {
	model      atomic.Int64 // nanoseconds inside the model
	roundTrips atomic.Int64 // the turn's own statements and batches
}

type turnKey struct{}

// recorder collects the turns' figures for /debug/loadstats.
type recorder struct {
	mu       sync.Mutex
	service  []time.Duration // total minus model, per turn
	total    []time.Duration
	own      []int64
	toolRTs  atomic.Int64  // the tools' statements
	prepares atomic.Int64  // statement preparations, extra round trips on first use
	cpuSince time.Duration // the process's CPU time when the figures were last reset
	ioSince  ioCounts      // and its read and write calls
}

// ioCounts are the process's read and write system calls so far (sockets
// included), from /proc/self/io; zero where that file is missing.
type ioCounts struct{ reads, writes int64 }

func readIOCounts() ioCounts {
	var c ioCounts
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return c
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, ": ")
		n, _ := strconv.ParseInt(v, 10, 64)
		switch k {
		case "syscr":
			c.reads = n
		case "syscw":
			c.writes = n
		}
	}
	return c
}

// cpuTime is the process's user plus system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// tracer counts round trips: each query and each batch is one. The MCP
// tools run on the turn's context too, so their statements, the only ones
// on the tasks table, are told apart by their SQL.
type tracer struct{ rec *recorder }

var tasksTable = regexp.MustCompile(`\btasks\b`)

// onTasks memoizes tasksTable over the service's few statement texts: the
// tracer is the load test's, and its cost is kept out of the figures the
// server is measured by (a regexp match a statement was 3% of its CPU).
var onTasks sync.Map // SQL string -> bool

func isToolStatement(sql string) bool {
	if v, ok := onTasks.Load(sql); ok {
		return v.(bool)
	}
	match := tasksTable.MatchString(sql)
	onTasks.Store(sql, match)
	return match
}

func (t tracer) count(ctx context.Context) {
	if s, ok := ctx.Value(turnKey{}).(*turnStats); ok {
		s.roundTrips.Add(1)
	}
}

func (t tracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if isToolStatement(data.SQL) {
		t.rec.toolRTs.Add(1)
		return ctx
	}
	t.count(ctx)
	return ctx
}
func (tracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (t tracer) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	t.count(ctx)
	return ctx
}
func (tracer) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (tracer) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}
func (t tracer) TracePrepareStart(ctx context.Context, _ *pgx.Conn, _ pgx.TracePrepareStartData) context.Context {
	t.rec.prepares.Add(1)
	return ctx
}
func (tracer) TracePrepareEnd(context.Context, *pgx.Conn, pgx.TracePrepareEndData) {}

// timedModel adds the time spent in the model to the turn's stats.
type timedModel struct{ agent.Model }

func (m timedModel) Stream(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
	start := time.Now()
	defer func() {
		if s, ok := ctx.Value(turnKey{}).(*turnStats); ok {
			s.model.Add(int64(time.Since(start)))
		}
	}()
	return m.Model.Stream(ctx, req, onText)
}

// measure attributes each chat request's time and round trips.
func (rec *recorder) measure(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		s := &turnStats{}
		start := time.Now()
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), turnKey{}, s)))
		total := time.Since(start)
		rec.mu.Lock()
		rec.total = append(rec.total, total)
		rec.service = append(rec.service, total-time.Duration(s.model.Load()))
		rec.own = append(rec.own, s.roundTrips.Load())
		rec.mu.Unlock()
	})
}

// serverStats is the body of /debug/loadstats.
type serverStats struct {
	Turns          int     `json:"turns"`
	ServiceP50     float64 `json:"service_p50_ms"`
	ServiceP95     float64 `json:"service_p95_ms"`
	ServiceP99     float64 `json:"service_p99_ms"`
	TotalP50       float64 `json:"total_p50_ms"`
	OwnRoundTrips  float64 `json:"own_round_trips_per_turn"`
	MaxOwnRTs      int64   `json:"max_own_round_trips"`
	ToolRoundTrips int64   `json:"tool_round_trips"`
	Prepares       int64   `json:"prepares"`
	CPUPerTurn     float64 `json:"cpu_per_turn_ms"` // user + system time over the turns served
	ReadsPerTurn   float64 `json:"reads_per_turn"`  // read system calls over the turns served
	WritesPerTurn  float64 `json:"writes_per_turn"` // write system calls over the turns served
	HeapInuse      uint64  `json:"heap_inuse"`
	StackInuse     uint64  `json:"stack_inuse"`
	Goroutines     int     `json:"goroutines"`
}

func (rec *recorder) stats(reset bool) serverStats {
	// Two collections: objects that died while the first one marked
	// (floating garbage) are freed only by the second, and they are no
	// stream's memory.
	cpu, io := cpuTime(), readIOCounts() // before the collections below, which are the measurement's own
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	st := serverStats{
		Turns: len(rec.total), HeapInuse: ms.HeapInuse, StackInuse: ms.StackInuse, Goroutines: runtime.NumGoroutine(),
		ToolRoundTrips: rec.toolRTs.Load(), Prepares: rec.prepares.Load(),
	}
	if st.Turns > 0 {
		st.ServiceP50, st.ServiceP95, st.ServiceP99 = pct(rec.service, 50), pct(rec.service, 95), pct(rec.service, 99)
		st.TotalP50 = pct(rec.total, 50)
		var sum int64
		for _, n := range rec.own {
			sum += n
			st.MaxOwnRTs = max(st.MaxOwnRTs, n)
		}
		st.OwnRoundTrips = float64(sum) / float64(st.Turns)
		st.CPUPerTurn = float64((cpu - rec.cpuSince).Microseconds()) / 1000 / float64(st.Turns)
		st.ReadsPerTurn = float64(io.reads-rec.ioSince.reads) / float64(st.Turns)
		st.WritesPerTurn = float64(io.writes-rec.ioSince.writes) / float64(st.Turns)
	}
	if reset {
		rec.cpuSince, rec.ioSince = cpuTime(), readIOCounts()
		rec.service, rec.total, rec.own = nil, nil, nil
		rec.toolRTs.Store(0)
		rec.prepares.Store(0)
	}
	return st
}

// pct returns the p-th percentile of ds in milliseconds.
func pct(ds []time.Duration, p int) float64 {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return float64(s[(len(s)-1)*p/100].Microseconds()) / 1000
}

// openMeasured opens the pool cmd/server opens, with its settings, and a
// tracer recording its round trips.
func openMeasured(ctx context.Context, databaseURL string) (*recorder, *pgxpool.Pool, error) {
	rec := &recorder{}
	pool, err := store.Open(ctx, databaseURL, store.Settings{}, func(c *pgxpool.Config) { c.ConnConfig.Tracer = tracer{rec: rec} })
	return rec, pool, err
}

// runServer is the server role: the service on a loopback port, printed on
// stdout as "listening ADDR", until SIGTERM.
func runServer(databaseURL, modelURL, certFile, cpuProfile string) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	rec, pool, err := openMeasured(ctx, databaseURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	verifier, err := auth.NewVerifier(auth.Config{Secret: []byte(secret)})
	if err != nil {
		return err
	}
	hc, err := modelClient(certFile)
	if err != nil {
		return err
	}
	model := timedModel{openai.New(openai.Config{APIKey: "sk-load", BaseURL: modelURL, Model: "fake-model"}, hc)}
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	svc := tasks.NewService(store.NewTasks(pool))
	// The service's own settings (cmd/server's defaults), but for limits
	// that a load would hit on purpose.
	tools := mcptools.NewServers(svc, 1024)
	tools.Log = log
	engine, err := chat.New(log, store.NewTurns(pool), tools, chat.Config{
		Model: model, Prompt: agent.DefaultPrompt(),
		Limits:       agent.Limits{MaxModelCalls: 10, MaxToolCalls: 20, MaxTokens: 100_000, TurnTimeout: 2 * time.Minute, ToolTimeout: 30 * time.Second},
		HistoryLimit: 50, HistoryTokens: 8000, IdempotencyTTL: 24 * time.Hour, MaxRunningTurns: 4,
		// A rate no load reaches, taken all the same: what the shared
		// bucket costs a turn is part of what is measured.
		TurnRate: tasks.Rate{PerMinute: 1e9, Burst: 1 << 30},
	})
	if err != nil {
		return err
	}
	// The turns' runs as cmd/server keeps them: written in batches of
	// 100 ms, with a listening connection for stops and followers.
	hub, err := runs.New(log, store.NewRuns(pool), runs.Config{FlushEvery: 100 * time.Millisecond, PollEvery: 500 * time.Millisecond, StopWait: 3 * time.Second})
	if err != nil {
		return err
	}
	defer hub.Close()
	l := store.Listen(databaseURL, log, []string{tasks.StopChannel}, hub.Notify, hub.Reconnected)
	defer l.Close()
	hub.SetNotifier(l)
	remote := mcptools.NewRemoteServers(svc, 1024)
	remote.Log = log
	mcp := mcptools.NewHTTPHandler(remote, log)
	h := taskhttp.NewServer(log, verifier, pool, svc, store.NewConversations(pool), engine, hub, mcp, taskhttp.Config{
		MaxStreams:   1 << 20,
		Streams:      store.NewLimits(pool),
		Stream:       taskhttp.StreamConfig{PingInterval: 15 * time.Second, WriteTimeout: 10 * time.Second},
		WriteTimeout: 30 * time.Second,

		MCP: taskhttp.MCPConfig{RequestsPerMinute: 1e9, Burst: 1 << 30, Buckets: store.NewLimits(pool)},
	})
	return serve(ctx, rec, h, cpuProfile)
}

// serve serves h, measured by rec, with the load command's debug routes,
// on a loopback port printed on stdout as "listening ADDR", until ctx ends.
func serve(ctx context.Context, rec *recorder, h http.Handler, cpuProfile string) error {
	mux := http.NewServeMux()
	mux.Handle("/", rec.measure(h))
	mux.HandleFunc("GET /debug/loadstats", func(w http.ResponseWriter, r *http.Request) {
		st := rec.stats(r.URL.Query().Get("reset") == "1")
		if cpuProfile != "" && r.URL.Query().Get("heap") == "1" {
			if f, err := os.Create(cpuProfile + ".heap"); err == nil {
				_ = pprof.Lookup("heap").WriteTo(f, 0)
				f.Close()
			}
		}
		_ = json.NewEncoder(w).Encode(st)
	})
	mux.HandleFunc("POST /debug/loadprofile", func(w http.ResponseWriter, r *http.Request) {
		if cpuProfile == "" {
			return
		}
		if r.URL.RawQuery == "start" {
			f, err := os.Create(cpuProfile)
			if err == nil {
				err = pprof.StartCPUProfile(f)
			}
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
			}
			return
		}
		pprof.StopCPUProfile()
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	fmt.Printf("listening %s\n", ln.Addr())
	<-ctx.Done()
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(shutdownCtx)
}

// modelClient is the production HTTP client, trusting the fake model's
// certificate when it serves HTTPS.
func modelClient(certFile string) (*http.Client, error) {
	hc := openai.NewHTTPClient()
	if certFile == "" {
		return hc, nil
	}
	pemBytes, err := os.ReadFile(certFile)
	if err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pemBytes) {
		return nil, fmt.Errorf("no certificate in %s", certFile)
	}
	hc.Transport.(*http.Transport).TLSClientConfig = &tls.Config{RootCAs: roots}
	return hc, nil
}
