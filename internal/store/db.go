// Package store is taskchat's PostgreSQL storage on pgx/v5: one file per
// table, its statements in sql/<table>.sql, each under a name the Go code
// reads it by (stmt.CreateTask; see statements.go), plain SQL with explicit
// columns, and user_id in every statement so another user's rows behave
// exactly like missing ones.
package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/golang-migrate/migrate/v4"
	_ "github.com/golang-migrate/migrate/v4/database/pgx/v5" // registers pgx5://
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/taskchat/taskchat/internal/tasks"
	"github.com/taskchat/taskchat/migrations"
)

// Settings are a deployment's choices about its connections. The zero
// value suits PostgreSQL reached directly.
type Settings struct {
	// NoPreparedStatements is for a connection pooler in transaction
	// pooling mode that does not carry prepared statements from one server
	// connection to the next, as PgBouncer before 1.21 (Debian 12 ships
	// 1.18), or a later one without max_prepared_statements: a statement
	// prepared by name in one transaction may be missing, or another
	// client's, in the next. Every statement is then sent whole, with its
	// arguments, as the unnamed statement in the same round trip (pgx's
	// cache_describe mode); only its parameter and column types are cached,
	// per connection, and these are the same on every server connection.
	// PostgreSQL parses and plans it each time, which a named statement
	// spares it.
	NoPreparedStatements bool
	// PlanCacheMode is the plan_cache_mode each connection asks for when it
	// prepares statements: "" for force_generic_plan (see planOnce), auto,
	// force_custom_plan or force_generic_plan, or PlanCacheServer to ask
	// for none. A plan_cache_mode in the URL is kept whatever this says,
	// and none is sent without prepared statements.
	PlanCacheMode string
}

// Option changes how Open sets a pool up beyond its Settings; tests and
// the load command add a tracer with one.
type Option func(*pgxpool.Config)

// Open connects a pool to databaseURL. It does not wait for the database to
// answer: a server that starts during a database outage becomes ready when
// the database does.
func Open(ctx context.Context, databaseURL string, s Settings, opts ...Option) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		return nil, fmt.Errorf("parse database url: %w", err)
	}
	if s.NoPreparedStatements {
		cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeCacheDescribe
	}
	for _, o := range opts {
		o(cfg)
	}
	planOnce(cfg.ConnConfig, s.PlanCacheMode)
	if cfg.ConnConfig.ConnectTimeout == 0 {
		// Without it a request during an outage waits for the kernel's TCP
		// timeout; with it, it fails fast and is answered 503.
		cfg.ConnConfig.ConnectTimeout = 3 * time.Second
	}
	cfg.HealthCheckPeriod = 15 * time.Second
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	return pool, nil
}

// planOnce has PostgreSQL plan each prepared statement once per connection
// (plan_cache_mode = force_generic_plan), unless the URL says otherwise or
// Settings.PlanCacheMode decides.
// Left to decide (auto), it re-plans a statement on every execution as
// long as a plan for the actual arguments looks cheaper than the generic
// one, which for the turn's statements — CTEs over several tables, their
// sizes given as parameters — it does: the load test measured PostgreSQL's
// CPU a turn at 1.9–2.2 ms with auto and 1.6–1.65 ms forced generic, and
// throughput up from 289–320 to 355–362 turns/s, on the same machine. It
// gives nothing up: the statements whose cost could grow with a
// conversation, the history's, are held to index plans, custom or generic
// (planFromIndexes, TestHistoryPlansStayBounded), a page of conversations
// reads about a page of the index (TestConversationPagesReadOnlyThemselves),
// and the others find their rows by key. Only with named prepared
// statements: the unnamed ones of Settings.NoPreparedStatements are planned
// for their arguments anyway, and PgBouncer refuses startup parameters it
// does not know.
func planOnce(c *pgx.ConnConfig, mode string) {
	if mode == "" {
		mode = "force_generic_plan"
	}
	if c.DefaultQueryExecMode != pgx.QueryExecModeCacheStatement || mode == PlanCacheServer {
		return
	}
	if _, set := c.RuntimeParams["plan_cache_mode"]; !set {
		c.RuntimeParams["plan_cache_mode"] = mode
	}
}

// PlanCacheServer is the Settings.PlanCacheMode that sends no
// plan_cache_mode at all, leaving the database's or the role's setting to
// apply: for a pooler that refuses startup parameters it does not know, as
// PgBouncer does unless they are in its ignore_startup_parameters.
const PlanCacheServer = "server"

// Migrate applies every embedded migration that databaseURL lacks. It is
// safe to call from several processes at once: golang-migrate serialises
// them with a PostgreSQL advisory lock, and the later ones find nothing to do.
// That lock is held by the session, so databaseURL must reach PostgreSQL
// directly (or through a pooler in session mode): through transaction
// pooling, the lock and its release may land on different server
// connections, and the lock then outlives the migration.
func Migrate(ctx context.Context, databaseURL string) error {
	m, err := newMigrate(databaseURL)
	if err != nil {
		return err
	}
	defer m.Close()
	stop := context.AfterFunc(ctx, func() { m.GracefulStop <- true })
	defer stop()
	if err := m.Up(); err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return fmt.Errorf("migrate up: %w", err)
	}
	return nil
}

// newMigrate returns a migrator over the embedded files. Callers Close it.
func newMigrate(databaseURL string) (*migrate.Migrate, error) {
	src, err := iofs.New(migrations.FS, ".")
	if err != nil {
		return nil, fmt.Errorf("read migrations: %w", err)
	}
	u, err := migrateURL(databaseURL)
	if err != nil {
		return nil, err
	}
	m, err := migrate.NewWithSourceInstance("iofs", src, u)
	if err != nil {
		return nil, fmt.Errorf("connect for migrations: %w", err)
	}
	return m, nil
}

// migrateURL rewrites a postgres:// URL to the pgx5:// scheme that selects
// golang-migrate's pgx/v5 driver.
func migrateURL(databaseURL string) (string, error) {
	u, err := url.Parse(databaseURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", errors.New("database url must be a postgres:// URL")
	}
	u.Scheme = "pgx5"
	return u.String(), nil
}

// translate maps a pgx or PostgreSQL error onto the domain's error kinds,
// keeping the original in the chain for the logs. It is the one place that
// knows PostgreSQL's error codes.
func translate(err error) error {
	if err == nil {
		return nil
	}
	var connErr *pgconn.ConnectError
	if errors.As(err, &connErr) {
		// Whatever the server said, a failed connect means it cannot serve.
		return errors.Join(tasks.ErrUnavailable, err)
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case pgErr.Code == "23514", pgErr.Code == "22001", pgErr.Code == "22P05", pgErr.Code == "22021":
			// check_violation, string_data_right_truncation,
			// untranslatable_character, character_not_in_repertoire.
			return fmt.Errorf("%w: %s", tasks.ErrInvalid, pgErr.Message)
		case pgErr.Code == "23505":
			return fmt.Errorf("%w: %s", tasks.ErrConflict, pgErr.ConstraintName)
		case strings.HasPrefix(pgErr.Code, "08"), strings.HasPrefix(pgErr.Code, "57P"), pgErr.Code == "53300":
			// connection_exception, admin_shutdown and friends,
			// too_many_connections.
			return errors.Join(tasks.ErrUnavailable, err)
		}
		return err
	}
	if isConnError(err) {
		return errors.Join(tasks.ErrUnavailable, err)
	}
	return err
}

// isConnError reports whether err means the database could not be reached
// or dropped the connection mid-statement.
func isConnError(err error) bool {
	var netErr net.Error
	return errors.As(err, &netErr) ||
		pgconn.SafeToRetry(err) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}

// MigrateDown reverts every migration. Only tests and operators rolling
// back by hand call it.
func MigrateDown(ctx context.Context, databaseURL string) error {
	m, err := newMigrate(databaseURL)
	if err != nil {
		return err
	}
	defer m.Close()
	if err := m.Down(); err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return fmt.Errorf("migrate down: %w", err)
	}
	return nil
}
