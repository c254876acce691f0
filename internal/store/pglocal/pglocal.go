// Package pglocal runs a private PostgreSQL from the server binaries
// installed on the machine, for `server dev` and for the tests when no other
// database is at hand.
//
// A cluster lives in one directory, which holds its data and its socket: it
// listens on no TCP port, and pg_hba.conf lets in any user over that socket
// without a password. That is safe because the directory is the cluster
// owner's alone (mode 0700): only that account, and root, can reach the
// socket. PostgreSQL refuses to run as root, so for root the cluster belongs
// to the postgres account and initdb and pg_ctl run as that account.
package pglocal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// socketName is the socket PostgreSQL makes in its socket directory for the
// default port, the only port a private cluster needs.
const socketName = ".s.PGSQL.5432"

// maxSocketPath is the longest socket path every Unix takes (macOS's
// sun_path is 104 bytes with its final NUL, Linux's 108).
const maxSocketPath = 103

// Options say where a cluster lives and how it is made.
type Options struct {
	// Dir holds the cluster's data and its socket. Start creates it, with
	// its parents, when it is missing.
	Dir string
	// Binaries are the initdb and pg_ctl that make and run the cluster.
	Binaries Binaries
	// Throwaway is for a cluster whose data nobody keeps, a test's: nothing
	// waits for the disk, which makes it several times faster and loses
	// everything in a crash of the machine.
	Throwaway bool
}

// Cluster is a private PostgreSQL that Start made or found.
type Cluster struct {
	// Dir holds the cluster's data and its socket.
	Dir string
	// Created says Start made the cluster: the directory held none.
	Created bool
	// WasRunning says the cluster answered before Start: another process
	// started it, and Stop leaves it running. That process may be gone: a
	// dev server killed with SIGKILL, or that crashed, stops nothing, and
	// its cluster runs on, joined by every later start and stopped by none
	// (pg_ctl stop -D Dir stops it; nothing records who started a cluster,
	// so Start cannot tell an orphan from one a live process uses).
	WasRunning bool

	bin   Binaries
	owner *account // nil when this process owns the cluster
}

// Start makes a cluster in o.Dir when the directory holds none, and starts
// it unless it runs already. It returns once the cluster takes connections.
func Start(ctx context.Context, o Options) (*Cluster, error) {
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, err
	}
	if n := len(filepath.Join(dir, socketName)); n > maxSocketPath {
		return nil, fmt.Errorf("PostgreSQL's socket would be %s, %d bytes, and a socket's path may have at most %d: choose a shorter directory", filepath.Join(dir, socketName), n, maxSocketPath)
	}
	c := &Cluster{Dir: dir, bin: o.Binaries}
	if c.owner, err = clusterOwner(); err != nil {
		return nil, err
	}
	if err := c.makeDir(); err != nil {
		return nil, err
	}
	unlock, err := lockDir(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("wait for another start of PostgreSQL in %s: %w", dir, err)
	}
	defer unlock()
	if _, err := os.Stat(filepath.Join(dir, "PG_VERSION")); errors.Is(err, fs.ErrNotExist) {
		if err := c.initdb(ctx, o.Throwaway); err != nil {
			return nil, err
		}
		c.Created = true
	} else if err != nil {
		return nil, err
	}
	if c.running(ctx) {
		c.WasRunning = true
		return c, nil
	}
	if _, err := c.run(ctx, c.bin.PgCtl, "start", "-D", dir, "-l", c.logFile(), "-w", "-t", "60", "-s"); err != nil {
		err = fmt.Errorf("start PostgreSQL in %s: %w%s", dir, err, c.logTail())
		c.abandon()
		return nil, err
	}
	return c, nil
}

// abandon stops a server whose start failed. pg_ctl start that times out,
// or is killed with its context (Ctrl-C during dev's first start), leaves
// the server it launched running, which nothing would stop: the next Start
// would find it running and leave it so. The starts being serialised
// (lockDir), the server running now is the one this start launched. Its
// context may have ended, so stopping has one of its own; "immediate"
// because nobody uses a server that never said it was ready. A server
// that never came up is nothing to stop, so the error is not reported.
func (c *Cluster) abandon() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if c.running(ctx) {
		_, _ = c.run(ctx, c.bin.PgCtl, "stop", "-D", c.Dir, "-m", "immediate", "-w", "-s")
	}
}

// Stop stops the cluster, unless it ran before Start: then it belongs to
// whoever started it. "fast" ends the open sessions rather than waiting for
// them, as a developer stopping a dev server expects. A cluster that is
// already stopped is no error.
func (c *Cluster) Stop(ctx context.Context) error {
	if c.WasRunning || !c.running(ctx) {
		return nil
	}
	if _, err := c.run(ctx, c.bin.PgCtl, "stop", "-D", c.Dir, "-m", "fast", "-w", "-s"); err != nil {
		return fmt.Errorf("stop PostgreSQL in %s: %w", c.Dir, err)
	}
	return nil
}

// URL is the URL of database on the cluster, as its superuser, postgres,
// through the socket.
func (c *Cluster) URL(database string) string {
	u := url.URL{Scheme: "postgres", User: url.User("postgres"), Path: "/" + database}
	u.RawQuery = url.Values{"host": {c.Dir}, "sslmode": {"disable"}}.Encode()
	return u.String()
}

// makeDir creates the cluster's directory, mode 0700 as initdb wants it,
// and hands it to the cluster's owner.
func (c *Cluster) makeDir() error {
	parentMode := os.FileMode(0o700)
	if c.owner != nil {
		parentMode = 0o755 // the owner has to pass through the parents
	}
	if err := os.MkdirAll(filepath.Dir(c.Dir), parentMode); err != nil {
		return err
	}
	if err := os.Mkdir(c.Dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	if err := closeDir(c.Dir); err != nil {
		return err
	}
	if c.owner == nil {
		return nil
	}
	if err := c.owner.reaches(c.Dir); err != nil {
		return err
	}
	return c.owner.chown(c.Dir)
}

// closeDir makes a directory that was there before mode 0700. PostgreSQL
// also runs in one of mode 0750, and then the group can reach the socket,
// which lets anyone in without a password. Only the directory's owner, or
// root, may change its mode; anyone else is told to.
func closeDir(dir string) error {
	info, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !info.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	perm := info.Mode().Perm()
	if perm&0o077 == 0 || runtime.GOOS == "windows" { // Windows has no such bits to close
		return nil
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("%s has mode %v, which lets others reach its PostgreSQL's socket and so its data, "+
			"and this account cannot change it (%w): chmod 700 %s as its owner", dir, perm, err, dir)
	}
	return nil
}

// initdb makes the cluster: the superuser is postgres whoever runs it, and
// only the socket in the cluster's directory lets anyone in.
func (c *Cluster) initdb(ctx context.Context, throwaway bool) error {
	if entries, err := os.ReadDir(c.Dir); err != nil {
		return err
	} else if len(entries) > 0 {
		return fmt.Errorf("%s holds files but no PostgreSQL cluster: empty it, or choose another directory", c.Dir)
	}
	args := []string{"-D", c.Dir, "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--locale=" + utf8Locale()}
	if throwaway {
		args = append(args, "--no-sync")
	}
	if _, err := c.run(ctx, c.bin.Initdb, args...); err != nil {
		return fmt.Errorf("make a PostgreSQL cluster in %s: %w", c.Dir, err)
	}
	conf := []string{
		"",
		"# Written by taskchat: a private cluster that listens only on a socket in its own directory.",
		"listen_addresses = ''",
		"port = 5432", // the socket's name; PGPORT in the environment must not move it
		"unix_socket_directories = " + quote(c.Dir),
	}
	if throwaway {
		// fsync alone: synchronous_commit keeps its default, which the
		// store's tests check it sets back after a commit that does not wait.
		conf = append(conf, "fsync = off", "full_page_writes = off")
	}
	if err := c.appendFile("postgresql.conf", strings.Join(conf, "\n")+"\n"); err != nil {
		return err
	}
	hba := "# Written by taskchat: only the socket in this directory, which only its owner can reach.\n" +
		"local all all trust\n"
	return c.writeFile("pg_hba.conf", hba)
}

// running reports whether the cluster's server is up.
func (c *Cluster) running(ctx context.Context) bool {
	_, err := c.run(ctx, c.bin.PgCtl, "status", "-D", c.Dir)
	return err == nil
}

// run runs a PostgreSQL program as the cluster's owner, from / so that the
// owner can always stand in its working directory. Its output becomes part
// of the error when it fails.
func (c *Cluster) run(ctx context.Context, program string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, program, args...)
	cmd.Dir = "/"
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// pg_ctl start leaves the server running with its output in the log
	// file; should anything still hold the pipe, Wait does not hang on it.
	cmd.WaitDelay = 5 * time.Second
	if c.owner != nil {
		c.owner.runAs(cmd)
	}
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(out.String()); msg != "" {
			return out.Bytes(), fmt.Errorf("%s: %w:\n%s", filepath.Base(program), err, msg)
		}
		return out.Bytes(), fmt.Errorf("%s: %w", filepath.Base(program), err)
	}
	return out.Bytes(), nil
}

func (c *Cluster) logFile() string { return filepath.Join(c.Dir, "server.log") }

// logTail is the end of the server's log, which says why it did not start.
func (c *Cluster) logTail() string {
	b, err := os.ReadFile(c.logFile())
	if err != nil || len(b) == 0 {
		return ""
	}
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return "\n" + c.logFile() + " ends:\n" + strings.TrimSpace(string(b))
}

func (c *Cluster) appendFile(name, text string) error {
	f, err := os.OpenFile(filepath.Join(c.Dir, name), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeFile replaces a file initdb wrote; the file keeps its owner.
func (c *Cluster) writeFile(name, text string) error {
	return os.WriteFile(filepath.Join(c.Dir, name), []byte(text), 0o600)
}

// utf8Locale is the locale a cluster is made with: one whose character
// classes know more than ASCII, since ILIKE folds case by them (a search
// for "ÉCOLE" finds "école"), and that every machine of its kind has.
func utf8Locale() string {
	if runtime.GOOS == "darwin" {
		return "en_US.UTF-8"
	}
	return "C.UTF-8"
}

// quote is a string literal in postgresql.conf.
func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
