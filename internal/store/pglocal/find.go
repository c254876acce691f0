package pglocal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Binaries are the PostgreSQL server programs a cluster needs.
type Binaries struct {
	Initdb, PgCtl string
}

// Dir is the directory the programs are in.
func (b Binaries) Dir() string { return filepath.Dir(b.PgCtl) }

// SearchRoots are where packages install PostgreSQL's server binaries
// without putting them on PATH: Debian and Ubuntu, the PGDG packages for
// Red Hat's family, and Homebrew's versioned formulae.
var SearchRoots = []string{
	"/usr/lib/postgresql/*/bin",
	"/usr/pgsql-*/bin",
	"/opt/homebrew/opt/postgresql@*/bin",
	"/usr/local/opt/postgresql@*/bin",
}

// ErrNoBinaries is the error Find returns when it finds no server binaries.
var ErrNoBinaries = errors.New("no PostgreSQL server binaries")

// Find looks for initdb and pg_ctl in one directory of path (a list like
// PATH), then in the directories roots match (filepath.Glob patterns),
// the newest version first. Debian's postgresql package puts them only in
// /usr/lib/postgresql/VERSION/bin.
func Find(path string, roots []string) (Binaries, error) {
	for _, dir := range filepath.SplitList(path) {
		if b, ok := binariesIn(dir); ok {
			return b, nil
		}
	}
	var dirs []string
	for _, pattern := range roots {
		matches, _ := filepath.Glob(pattern) // the only error is a bad pattern
		dirs = append(dirs, matches...)
	}
	slices.SortStableFunc(dirs, func(a, b string) int { return compareVersions(b, a) })
	for _, dir := range dirs {
		if b, ok := binariesIn(dir); ok {
			return b, nil
		}
	}
	return Binaries{}, fmt.Errorf("%w: initdb and pg_ctl are neither on PATH nor in %s. Install them:\n"+
		"  Debian or Ubuntu: sudo apt-get install postgresql\n"+
		"  Fedora or RHEL:   sudo dnf install postgresql-server\n"+
		"  macOS:            brew install postgresql@17",
		ErrNoBinaries, strings.Join(roots, ", "))
}

func binariesIn(dir string) (Binaries, bool) {
	if dir == "" {
		return Binaries{}, false
	}
	b := Binaries{Initdb: filepath.Join(dir, "initdb"), PgCtl: filepath.Join(dir, "pg_ctl")}
	return b, executable(b.Initdb) && executable(b.PgCtl)
}

func executable(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.Mode().IsRegular() && info.Mode().Perm()&0o111 != 0
}

// compareVersions orders paths by the numbers in them, compared as numbers,
// so that /usr/lib/postgresql/9.6 comes before /usr/lib/postgresql/16.
func compareVersions(a, b string) int {
	x, y := numbers(a), numbers(b)
	for i := 0; i < len(x) && i < len(y); i++ {
		if x[i] != y[i] {
			return x[i] - y[i]
		}
	}
	if n := len(x) - len(y); n != 0 {
		return n
	}
	return strings.Compare(a, b)
}

func numbers(s string) []int {
	var out []int
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsDigit(r) }) {
		n, _ := strconv.Atoi(f)
		out = append(out, n)
	}
	return out
}
