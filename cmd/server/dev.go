package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/taskchat/taskchat/internal/store/pglocal"
)

// dev runs the service for a person on their own machine with nothing to
// configure: devDefaults fill the settings the environment leaves unset, the
// JWT secret is generated once and kept in a file, and the database is
// created when it is missing. With no DATABASE_URL and no PostgreSQL that
// lets it in at the default address, it starts a PostgreSQL of its own
// (devCluster), and stops it as it returns. What it did, and the URL to
// open, go to stderr; the log stays JSON on stdout.
func dev(ctx context.Context, getenv func(string) string, stdout, stderr io.Writer) error {
	env, err := devEnvironment(getenv, stderr)
	if err != nil {
		return err
	}
	cfg, err := loadConfig(env)
	if err != nil {
		return fmt.Errorf("configuration:\n%w", err)
	}
	databaseURL, stop, err := devDatabase(ctx, getenv, stderr, devDatabaseURL, pglocal.SearchRoots)
	if err != nil {
		return err
	}
	defer stop()
	env = overriding(env, "DATABASE_URL", databaseURL)
	return serve(ctx, env, stdout, func(addr net.Addr) {
		base := browserURL(addr)
		fmt.Fprintf(stderr, "taskchat dev: open %s\n", base)
		if cfg.DevLogin {
			fmt.Fprintf(stderr, "taskchat dev: a token for alice: curl -sS -X POST %sauth/dev/token -H 'Content-Type: application/json' -d '{\"user_id\":\"alice\"}'\n", base)
		}
	})
}

// overriding is getenv with name set to value.
func overriding(getenv func(string) string, name, value string) func(string) string {
	return func(n string) string {
		if n == name {
			return value
		}
		return getenv(n)
	}
}

// devDatabase returns the URL of the database dev runs with, and what to
// call when dev ends. DATABASE_URL, when set, is taken as it is. Otherwise
// it is defaultURL when a PostgreSQL there lets dev in, and a cluster of
// dev's own (which stop stops) when none answers there or it refuses: a
// newcomer's machine has no PostgreSQL, or Debian's, which asks for a
// password. Either way the database is created when it is missing.
func devDatabase(ctx context.Context, getenv func(string) string, stderr io.Writer, defaultURL string, roots []string) (url string, stop func(), err error) {
	nothing := func() {}
	if u := strings.TrimSpace(getenv("DATABASE_URL")); u != "" {
		return u, nothing, ensureDatabase(ctx, u, stderr)
	}
	err = ensureDatabase(ctx, defaultURL, stderr)
	var none *noPostgresError
	if !errors.As(err, &none) {
		return defaultURL, nothing, err
	}
	fmt.Fprintf(stderr, "taskchat dev: DATABASE_URL is not set, and %s; starting a PostgreSQL of its own\n", none.brief())
	return devCluster(ctx, getenv, stderr, roots)
}

// devCluster starts dev's own PostgreSQL (making it the first time), from
// the server binaries on PATH or under roots, with its data in
// devPostgresDir, and creates the database taskchat in it.
func devCluster(ctx context.Context, getenv func(string) string, stderr io.Writer, roots []string) (string, func(), error) {
	const elsewhere = "\nOr run taskchat and its database in Docker: docker compose up\nOr set DATABASE_URL to a PostgreSQL you already have"
	bin, err := pglocal.Find(getenv("PATH"), roots)
	if err != nil {
		return "", nil, fmt.Errorf("%w"+elsewhere, err)
	}
	dir, err := devPostgresDir(getenv)
	if err != nil {
		return "", nil, err
	}
	c, err := pglocal.Start(ctx, pglocal.Options{Dir: dir, Binaries: bin})
	if err != nil {
		return "", nil, fmt.Errorf("%w"+elsewhere, err)
	}
	how := "kept from an earlier start; it stops when dev does"
	switch {
	case c.WasRunning:
		// It may be an earlier dev's that was killed and stopped nothing.
		stopIt := bin.PgCtl + " stop -D " + dir
		if os.Geteuid() == 0 {
			stopIt = "runuser -u postgres -- " + stopIt
		}
		how = "already running, so it keeps running when dev stops; " + stopIt + " stops it"
	case c.Created:
		how = "created now; it stops when dev does, and its data stays for the next start"
	}
	fmt.Fprintf(stderr, "taskchat dev: PostgreSQL from %s, its data and its socket in %s (%s)\n", bin.Dir(), dir, how)
	stop := func() {
		// dev's context has ended by now: stopping needs one of its own.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := c.Stop(ctx); err != nil {
			fmt.Fprintf(stderr, "taskchat dev: %v\n", err)
		} else if !c.WasRunning {
			fmt.Fprintf(stderr, "taskchat dev: stopped the PostgreSQL in %s\n", dir)
		}
	}
	u := c.URL("taskchat")
	if err := ensureDatabase(ctx, u, stderr); err != nil {
		stop()
		return "", nil, err
	}
	return u, stop, nil
}

// devPostgresDir is where dev keeps its own PostgreSQL: the user's data
// directory, as the XDG base directories name it. Root's cluster runs as
// postgres, which cannot enter root's home, so unless XDG_DATA_HOME names
// a place, root's is kept in /var/lib/taskchat/postgres, owned by postgres.
func devPostgresDir(getenv func(string) string) (string, error) {
	if dir := getenv("XDG_DATA_HOME"); dir != "" {
		if !filepath.IsAbs(dir) {
			return "", fmt.Errorf("$XDG_DATA_HOME is not an absolute path: %q", dir)
		}
		return filepath.Join(dir, "taskchat", "postgres"), nil
	}
	if os.Geteuid() == 0 {
		return "/var/lib/taskchat/postgres", nil
	}
	home := getenv("HOME")
	if home == "" {
		return "", errors.New("no place for dev's own PostgreSQL: neither $XDG_DATA_HOME nor $HOME is set (or set DATABASE_URL)")
	}
	return filepath.Join(home, ".local", "share", "taskchat", "postgres"), nil
}

// devEnvironment is getenv with devDefaults and the development JWT
// secret standing in for whatever it leaves unset.
func devEnvironment(getenv func(string) string, stderr io.Writer) (func(string) string, error) {
	vars := maps.Clone(devDefaults)
	if getenv("JWT_SECRET") == "" {
		path, err := devSecretPath(getenv)
		if err != nil {
			return nil, err
		}
		secret, created, err := loadOrCreateDevSecret(path)
		if err != nil {
			return nil, err
		}
		how := "kept from an earlier start"
		if created {
			how = "created now"
		}
		fmt.Fprintf(stderr, "taskchat dev: JWT secret in %s (%s; `server token USER_ID` signs with it too)\n", path, how)
		vars["JWT_SECRET"] = secret
	}
	return func(name string) string {
		if v := getenv(name); strings.TrimSpace(v) != "" {
			return v
		}
		return vars[name]
	}, nil
}

// devSecretPath is where the development JWT secret is kept: the user's
// configuration directory, found as os.UserConfigDir finds it but through
// getenv, so tests choose it.
func devSecretPath(getenv func(string) string) (string, error) {
	dir, err := userConfigDir(getenv)
	if err != nil {
		return "", fmt.Errorf("no place for the development JWT secret (set JWT_SECRET instead): %w", err)
	}
	return filepath.Join(dir, "taskchat", "dev-jwt-secret"), nil
}

// userConfigDir is os.UserConfigDir reading the environment through getenv.
func userConfigDir(getenv func(string) string) (string, error) {
	switch runtime.GOOS {
	case "windows":
		if dir := getenv("AppData"); dir != "" {
			return dir, nil
		}
		return "", errors.New("%AppData% is not set")
	case "darwin", "ios":
		if home := getenv("HOME"); home != "" {
			return filepath.Join(home, "Library", "Application Support"), nil
		}
		return "", errors.New("$HOME is not set")
	case "plan9":
		if home := getenv("home"); home != "" {
			return filepath.Join(home, "lib"), nil
		}
		return "", errors.New("$home is not set")
	}
	if dir := getenv("XDG_CONFIG_HOME"); dir != "" {
		if !filepath.IsAbs(dir) {
			return "", fmt.Errorf("$XDG_CONFIG_HOME is not an absolute path: %q", dir)
		}
		return dir, nil
	}
	if home := getenv("HOME"); home != "" {
		return filepath.Join(home, ".config"), nil
	}
	return "", errors.New("neither $XDG_CONFIG_HOME nor $HOME is set")
}

// loadOrCreateDevSecret returns the secret kept at path, creating it (mode
// 0600) when there is none. Two processes starting at once agree on one
// secret: each writes a whole file aside and links it into place, which
// fails for the second, who then reads the first's.
func loadOrCreateDevSecret(path string) (secret string, created bool, err error) {
	if b, err := os.ReadFile(path); err == nil {
		secret, err := checkDevSecret(path, b)
		return secret, false, err
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", false, fmt.Errorf("read the development JWT secret: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", false, fmt.Errorf("create the development JWT secret: %w", err)
	}
	aside, err := writeAside(filepath.Dir(path))
	if err != nil {
		return "", false, fmt.Errorf("create the development JWT secret: %w", err)
	}
	defer os.Remove(aside)
	switch err := os.Link(aside, path); {
	case errors.Is(err, fs.ErrExist):
		return loadOrCreateDevSecret(path)
	case err != nil:
		return "", false, fmt.Errorf("create the development JWT secret: %w", err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", false, fmt.Errorf("read the development JWT secret: %w", err)
	}
	secret, err = checkDevSecret(path, b)
	return secret, true, err
}

// writeAside writes a fresh random secret to a new file of mode 0600 in dir
// and returns the file's name.
func writeAside(dir string) (string, error) {
	key := make([]byte, 32)
	_, _ = rand.Read(key) // crypto/rand's Read never fails
	// CreateTemp makes the file with mode 0600.
	f, err := os.CreateTemp(dir, ".dev-jwt-secret-*")
	if err != nil {
		return "", err
	}
	_, err = f.WriteString(hex.EncodeToString(key) + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// checkDevSecret reads a kept secret, refusing one too short to sign with.
func checkDevSecret(path string, b []byte) (string, error) {
	secret := strings.TrimSpace(string(b))
	if len(secret) < 32 {
		return "", fmt.Errorf("the development JWT secret in %s is %d bytes, and must be at least 32: delete the file to have a new one made (tokens signed with the old one stop working), or set JWT_SECRET", path, len(secret))
	}
	return secret, nil
}

// tokenSecret is the secret the token subcommand signs with: JWT_SECRET,
// or, when it is unset, the development secret `dev` keeps, if there is one.
func tokenSecret(getenv func(string) string, stderr io.Writer) ([]byte, error) {
	if s := getenv("JWT_SECRET"); s != "" {
		return []byte(s), nil
	}
	path, err := devSecretPath(getenv)
	if err != nil {
		return nil, fmt.Errorf("JWT_SECRET is not set: set it to the secret the server runs with (at least 32 bytes); %w", err)
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("JWT_SECRET is not set, and there is no development secret in %s to sign with: "+
			"set JWT_SECRET to the secret the server runs with (the server requires one of at least 32 bytes; generate one with: openssl rand -hex 32), "+
			"or start `server dev` once, which creates that file", path)
	} else if err != nil {
		return nil, fmt.Errorf("JWT_SECRET is not set, and the development secret cannot be read: %w", err)
	}
	secret, err := checkDevSecret(path, b)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(stderr, "taskchat: JWT_SECRET is not set; signing with the development secret in %s, which `server dev` uses\n", path)
	return []byte(secret), nil
}

// ensureDatabase creates the database of databaseURL when the server
// answers but the database does not exist, and explains how to get a
// PostgreSQL when none answers.
func ensureDatabase(ctx context.Context, databaseURL string, stderr io.Writer) error {
	cfg, err := pgx.ParseConfig(databaseURL)
	if err != nil {
		return fmt.Errorf("DATABASE_URL: %w", err)
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 3 * time.Second
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err == nil {
		return conn.Close(ctx)
	}
	if pgCode(err) != "3D000" { // invalid_catalog_name: no such database
		return noPostgres(cfg, err)
	}
	created, err := createDatabase(ctx, cfg)
	if err != nil {
		return err
	}
	if created {
		fmt.Fprintf(stderr, "taskchat dev: created database %q on %s\n", cfg.Database, hostPort(cfg))
	}
	return nil
}

// createDatabase creates cfg's database from the server's maintenance
// database, postgres. Another process creating it at the same moment is
// no error: the database is there.
func createDatabase(ctx context.Context, cfg *pgx.ConnConfig) (created bool, err error) {
	admin := cfg.Copy()
	admin.Database = "postgres"
	conn, err := pgx.ConnectConfig(ctx, admin)
	if err != nil {
		return false, fmt.Errorf("database %q does not exist, and it cannot be created from the database postgres: %w", cfg.Database, err)
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{cfg.Database}.Sanitize())
	switch pgCode(err) {
	case "":
		return err == nil, err
	case "42P04", "23505": // duplicate_database; unique_violation when both raced
		return false, nil
	}
	return false, fmt.Errorf("create database %q: %w", cfg.Database, err)
}

// pgCode is the SQLSTATE of a PostgreSQL error, "" for any other error.
func pgCode(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return ""
}

// noPostgres explains a failed connection: no server, or a server that
// refused the user.
func noPostgres(cfg *pgx.ConnConfig, err error) error {
	if code := pgCode(err); strings.HasPrefix(code, "28") || (code == "" && strings.Contains(err.Error(), "password")) {
		return &noPostgresError{where: hostPort(cfg), user: cfg.User, refused: true, err: err}
	}
	if code := pgCode(err); code != "" {
		return fmt.Errorf("PostgreSQL at %s: %w", hostPort(cfg), err)
	}
	return &noPostgresError{where: hostPort(cfg), user: cfg.User, err: err}
}

// noPostgresError is a PostgreSQL that does not answer, or does not let the
// user in, which dev answers with a PostgreSQL of its own when DATABASE_URL
// is not set.
type noPostgresError struct {
	where, user string
	refused     bool
	err         error
}

func (e *noPostgresError) Unwrap() error { return e.err }

// brief says what happened in a few words.
func (e *noPostgresError) brief() string {
	if e.refused {
		return fmt.Sprintf("PostgreSQL at %s does not let %s in without a password", e.where, e.user)
	}
	return "no PostgreSQL answers at " + e.where
}

func (e *noPostgresError) Error() string {
	if e.refused {
		return fmt.Sprintf(`PostgreSQL at %s refused user %q: %v
Debian's package asks for a password over TCP. Give the user one and export it, for example:
  sudo -u postgres psql -c "ALTER USER postgres PASSWORD 'postgres'"
  export PGPASSWORD=postgres
or set DATABASE_URL to a user and password that work`, e.where, e.user, e.err)
	}
	return fmt.Sprintf(`PostgreSQL is not reachable at %s: %v
`+"`server dev`"+` needs a PostgreSQL server. Get one in either of these ways, then run it again:
  Debian or Ubuntu: sudo apt-get install postgresql
    then give the postgres user a password and export it:
    sudo -u postgres psql -c "ALTER USER postgres PASSWORD 'postgres'"
    export PGPASSWORD=postgres
  Docker: docker run -d --name taskchat-db -p 127.0.0.1:5432:5432 -e POSTGRES_HOST_AUTH_METHOD=trust postgres:16-alpine
Or run taskchat and its database in Docker instead: docker compose up
Or set DATABASE_URL to a PostgreSQL you already have
Or leave DATABASE_URL unset: `+"`server dev`"+` then starts a PostgreSQL of its own, from the server binaries installed`, e.where, e.err)
}

// hostPort names where cfg connects: an address, or a socket's directory.
func hostPort(cfg *pgx.ConnConfig) string {
	if strings.HasPrefix(cfg.Host, "/") {
		return "the socket in " + cfg.Host
	}
	return net.JoinHostPort(cfg.Host, fmt.Sprint(cfg.Port))
}

// browserURL is the address to open for a listener: localhost when it
// listens on loopback or on every interface.
func browserURL(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "http://" + addr.String() + "/"
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsLoopback() || ip.IsUnspecified() {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port) + "/"
}
