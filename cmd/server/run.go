package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/agent/offline"
	"github.com/taskchat/taskchat/internal/agent/openai"
	"github.com/taskchat/taskchat/internal/auth"
	"github.com/taskchat/taskchat/internal/chat"
	"github.com/taskchat/taskchat/internal/cli"
	"github.com/taskchat/taskchat/internal/gctune"
	taskhttp "github.com/taskchat/taskchat/internal/http"
	"github.com/taskchat/taskchat/internal/mcptools"
	"github.com/taskchat/taskchat/internal/runs"
	"github.com/taskchat/taskchat/internal/store"
	"github.com/taskchat/taskchat/internal/tasks"
	"github.com/taskchat/taskchat/internal/telemetry"
)

// run is the whole program, with its inputs passed in so tests drive it,
// for commands that read no input.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	return runIn(ctx, args, getenv, console{}, stdout, stderr)
}

// console is the input of the terminal client's commands: what a person
// types, and each Ctrl-C.
type console struct {
	stdin      io.Reader
	interrupts <-chan os.Signal
}

// runIn is run with the console's input. Ctrl-C ends a command, except
// chat, which takes it to stop the reply it is writing.
func runIn(ctx context.Context, args []string, getenv func(string) string, con console, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 {
		cmd, args = args[0], args[1:]
	}
	client := cli.Env{Name: programName(), Getenv: getenv, Stdin: con.stdin, Stdout: stdout, Stderr: stderr}
	if cmd == "chat" {
		client.Interrupts = con.interrupts
		return cli.Chat(ctx, args, client)
	}
	ctx, cancel := cancelOn(ctx, con.interrupts)
	defer cancel()
	switch cmd {
	case "-h", "-help", "--help", "help":
		fmt.Fprintln(stdout, usage(programName()))
		return nil
	case "run":
		return cli.Run(ctx, args, client)
	case "login":
		return cli.Login(ctx, args, client)
	case "serve", "dev":
		if len(args) > 0 {
			// Neither takes arguments: "dev -h" asks for help, not a server.
			if isHelpFlag(args[0]) {
				fmt.Fprintln(stdout, usage(programName()))
				return nil
			}
			return fmt.Errorf("%s takes no arguments, got %q; see %s help", cmd, args, programName())
		}
		if cmd == "dev" {
			return dev(ctx, getenv, stdout, stderr)
		}
		return serve(ctx, getenv, stdout, nil)
	case "token":
		return mintToken(args, getenv, stdout, stderr)
	case "healthcheck":
		return healthcheck(ctx, args, getenv, stderr)
	}
	return fmt.Errorf("unknown command %q\n%s", cmd, usage(programName()))
}

func isHelpFlag(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help"
}

// cancelOn is ctx, cancelled at the first signal of signals.
func cancelOn(ctx context.Context, signals <-chan os.Signal) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	if signals != nil {
		go func() {
			select {
			case <-signals:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	return ctx, cancel
}

// serve runs the service until ctx is done, then shuts down gracefully:
// no new connections, in-flight turns (streams too) finish and are stored
// within SHUTDOWN_TIMEOUT.
// listening, when not nil, is told the address once the server listens.
func serve(ctx context.Context, getenv func(string) string, stdout io.Writer, listening func(net.Addr)) error {
	cfg, err := loadConfig(getenv)
	if err != nil {
		return fmt.Errorf("configuration:\n%w", err)
	}
	log := slog.New(slog.NewJSONHandler(stdout, &slog.HandlerOptions{Level: cfg.LogLevel}))
	defer gctune.Start(cfg.GCHeadroom)()
	if cfg.DevLogin {
		log.Warn("DEV_LOGIN is on: POST /auth/dev/token gives anyone who reaches this server a token for any user; for development only")
	}
	tel, stopTracing, err := newTelemetry(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer stopTracing()
	handler, hub, closeDB, err := build(ctx, cfg, log, tel)
	if err != nil {
		return err
	}
	defer closeDB()
	if cfg.MetricsAddr != "" {
		metrics, err := serveMetrics(cfg.MetricsAddr, tel, log)
		if err != nil {
			return err
		}
		defer metrics.Close()
	}

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	conns := limitListener(ln, cfg.MaxConnections, tel)
	// Turns run on this base context; cancelling it is the last resort of
	// a shutdown whose timeout passed (see below).
	base, cancelTurns := context.WithCancel(context.Background())
	defer cancelTurns()
	srv := &http.Server{
		Handler:           handler,
		BaseContext:       func(net.Listener) context.Context { return base },
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		IdleTimeout:       cfg.IdleTimeout,
		ConnState:         conns.ConnState,
		MaxHeaderBytes:    cfg.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	// Followers of turns end their streams when the shutdown begins, with
	// no last event, so that their clients resume on another replica.
	srv.RegisterOnShutdown(hub.EndFollowers)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(conns) }()
	attrs := []any{"addr", ln.Addr().String(), "model", cfg.Provider}
	if len(cfg.ApprovalTools) > 0 {
		// An operator sees that approvals are on, and for which tools.
		attrs = append(attrs, "approval_tools", strings.Join(cfg.ApprovalTools, ","), "approval_ttl", cfg.ApprovalTTL.String())
	}
	log.Info("listening", attrs...)
	if listening != nil {
		listening(ln.Addr())
	}

	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	return shutdown(srv, func() { cancelTurns(); hub.Interrupt() }, cfg.ShutdownTimeout, log)
}

// shutdown stops accepting connections and lets in-flight requests, streams
// included, finish within timeout. Turns still running then are cancelled:
// each stores what it did, marked interrupted, and tells its client to
// retry; they get a few seconds for that before the process exits.
func shutdown(srv *http.Server, cancelTurns context.CancelFunc, timeout time.Duration, log *slog.Logger) error {
	log.Info("shutting down", "timeout", timeout.String())
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := srv.Shutdown(ctx); err == nil {
		log.Info("stopped")
		return nil
	}
	log.Warn("turns still running at the shutdown timeout; interrupting them", "timeout", timeout.String())
	cancelTurns()
	ctx, cancel = context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		srv.Close()
		return fmt.Errorf("shutdown: requests still running after interrupting them: %w", err)
	}
	log.Info("stopped")
	return nil
}

// maxCachedServers is how many users' MCP servers a replica keeps built
// (a few kilobytes each); see mcptools.Servers.
const maxCachedServers = 1024

// build wires the service: migrations, the pool, the model, the turns'
// runs and their listening connection, the handler, each observed by tel
// (which may be nil), and retention's passes, which stop when ctx ends or
// the returned close is called.
func build(ctx context.Context, cfg config, log *slog.Logger, tel *telemetry.Telemetry) (http.Handler, *runs.Hub, func(), error) {
	if cfg.Migrate {
		if err := store.Migrate(ctx, cfg.MigrateDatabaseURL); err != nil {
			return nil, nil, nil, err
		}
	}
	pool, err := store.Open(ctx, cfg.DatabaseURL, cfg.Store)
	if err != nil {
		return nil, nil, nil, err
	}
	closers := []func(){pool.Close}
	closeAll := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	h, hub, err := wire(ctx, cfg, log, tel, pool, &closers)
	if err != nil {
		closeAll()
		return nil, nil, nil, err
	}
	return h, hub, closeAll, nil
}

// wire builds the handler over pool, adding to closers what must be
// closed after it, in the order it must be closed in reverse.
func wire(ctx context.Context, cfg config, log *slog.Logger, tel *telemetry.Telemetry, pool *pgxpool.Pool, closers *[]func()) (http.Handler, *runs.Hub, error) {
	verifier, err := auth.NewVerifier(authConfig(cfg, log))
	if err != nil {
		return nil, nil, fromEnv(authVars, err)
	}
	*closers = append(*closers, verifier.Close) // stops the JWKS refreshes
	model, prompt, err := newModel(cfg, tel)
	if err != nil {
		return nil, nil, err
	}
	tel.ObservePool(pool)
	svc := tasks.NewService(store.NewTasks(pool))
	// The engine's tool servers carry each call's turn record from the
	// engine to the tool that makes its change (mcptools.Servers.CallMeta).
	// Their handlers' panics go to this log, not slog's default one, which
	// serve leaves alone: a test runs several replicas in one process.
	tools := mcptools.NewServers(svc, maxCachedServers)
	tools.Log = log
	engine, err := chat.New(log, store.NewTurns(pool), tools, chatConfig(cfg, model, prompt, tel))
	if err != nil {
		return nil, nil, fromEnv(chatVars, err)
	}
	hub, err := startRuns(cfg, log, pool, closers)
	if err != nil {
		return nil, nil, err
	}
	// Outside MCP clients get the same tools from servers of their own:
	// each acts only for its bearer token's user, and never takes a chat
	// turn's record from a client (see mcptools.NewRemoteServer).
	// NewServer puts them behind the API's authentication, at /mcp.
	remote := mcptools.NewRemoteServers(svc, maxCachedServers)
	remote.Log = log
	mcp := mcptools.NewHTTPHandler(remote, log)
	limits := store.NewLimits(pool) // the per-user limits every replica shares
	h := taskhttp.NewServer(log, verifier, pool, svc, store.NewConversations(pool), engine, hub, mcp, taskhttp.Config{
		MaxStreams:   cfg.MaxStreams,
		Streams:      limits,
		Stream:       taskhttp.StreamConfig{PingInterval: cfg.PingInterval, WriteTimeout: cfg.StreamWriteTimeout},
		WriteTimeout: cfg.WriteTimeout,
		DevLogin:     taskhttp.DevLogin{Enabled: cfg.DevLogin, TTL: cfg.TokenTTL},
		Telemetry:    tel,
		CORS:         taskhttp.CORSConfig{AllowedOrigins: cfg.CORSOrigins, MaxAge: cfg.CORSMaxAge},

		MCP: taskhttp.MCPConfig{
			RequestsPerMinute: cfg.MCPRequestsPerMinute, Burst: cfg.MCPBurst, Buckets: limits,
			PublicURL: cfg.PublicURL, AuthorizationServers: cfg.MCPAuthorizationServers,
		},
	})
	*closers = append(*closers, startRetention(ctx, pool, cfg, log))
	return h, hub, nil
}

// newModel is the model turns run on, observed by tel, and the system
// prompt they start with.
func newModel(cfg config, tel *telemetry.Telemetry) (agent.Model, agent.Prompt, error) {
	prompt := agent.DefaultPrompt()
	if cfg.SystemPrompt != "" {
		var err error
		if prompt, err = agent.LoadPrompt(cfg.SystemPrompt); err != nil {
			return nil, agent.Prompt{}, err
		}
	}
	var model agent.Model = offline.NewPaced(cfg.OfflinePace)
	if cfg.Provider == "openai" {
		model = openai.New(cfg.OpenAI, openai.NewHTTPClient())
	}
	return tel.Model(model, cfg.Provider), prompt, nil
}

// authConfig is which tokens the service trusts, as cfg says.
func authConfig(cfg config, log *slog.Logger) auth.Config {
	return auth.Config{Secret: []byte(cfg.JWTSecret), Issuer: cfg.JWTIssuer, Audience: cfg.JWTAudience, JWKS: cfg.JWKS, Log: log}
}

// chatConfig is how turns run, as cfg says, on model and prompt.
func chatConfig(cfg config, model agent.Model, prompt agent.Prompt, tel *telemetry.Telemetry) chat.Config {
	return chat.Config{
		Model: model, Prompt: prompt, Limits: cfg.Limits,
		HistoryLimit: cfg.HistoryLimit, HistoryTokens: cfg.HistoryTokens, IdempotencyTTL: cfg.IdempotencyTTL,
		DailyTokenBudget: cfg.DailyTokenBudget, MaxRunningTurns: cfg.MaxRunningTurns,
		TurnRate:      tasks.Rate{PerMinute: cfg.TurnsPerMinute, Burst: cfg.TurnBurst},
		ApprovalTools: cfg.ApprovalTools, ApprovalTTL: cfg.ApprovalTTL, Telemetry: tel,
	}
}

// startRuns starts the replica's share of the turns' runs, and its one
// listening connection unless LISTEN_DATABASE_URL is none.
func startRuns(cfg config, log *slog.Logger, pool *pgxpool.Pool, closers *[]func()) (*runs.Hub, error) {
	hub, err := runs.New(log, store.NewRuns(pool), cfg.Runs)
	if err != nil {
		return nil, err
	}
	*closers = append(*closers, hub.Close)
	if cfg.ListenDatabaseURL == "" {
		log.Info("LISTEN_DATABASE_URL is none: followers of turns and stops poll the database")
		return hub, nil
	}
	l := store.Listen(cfg.ListenDatabaseURL, log, []string{tasks.StopChannel}, hub.Notify, hub.Reconnected)
	hub.SetNotifier(l)
	*closers = append(*closers, l.Close)
	return hub, nil
}

// mintToken prints a development token, so a person with curl can start.
func mintToken(args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("token", stderr)
	ttl := fs.Duration("ttl", defaultTokenTTL, "how long the token is valid")
	if err := fs.Parse(args); err != nil {
		if helpAsked(err) {
			return nil
		}
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("token needs exactly one USER_ID: %s %s", programName(), synopsis("token"))
	}
	secret, err := tokenSecret(getenv, stderr)
	if err == nil {
		err = checkJWTSecret(string(secret)) // as the server would refuse it
	}
	if err != nil {
		return err
	}
	tok, err := auth.MintToken(secret, fs.Arg(0), *ttl, getenv("JWT_ISSUER"), getenv("JWT_AUDIENCE"), time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, tok)
	return nil
}

// healthcheck asks the service's /healthz; Docker runs it, no shell needed.
func healthcheck(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	fs := newFlags("healthcheck", stderr)
	_, port, _ := net.SplitHostPort(getenv("ADDR"))
	if port == "" {
		port = "8080"
	}
	target := fs.String("url", "http://127.0.0.1:"+port+"/healthz", "the URL to check")
	if err := fs.Parse(args); err != nil {
		if helpAsked(err) {
			return nil
		}
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, *target, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: %s answered %s", *target, resp.Status)
	}
	return nil
}
