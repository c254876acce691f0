// Package nodetest finds the third-party Node packages the tests run (the
// AI SDK, the MCP TypeScript SDK and Better Auth as clients, Redocly's
// linter on the OpenAPI document), pinned by clients/package-lock.json, and
// fails a test that needs a missing one, saying what to run.
package nodetest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// MustScript returns node and the path of clients/<script>, which imports
// the npm package pkg (what names it in messages). It fails tb when node
// or the package is missing.
func MustScript(tb testing.TB, pkg, what, script string) (node, path string) {
	tb.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		tb.Fatalf("node is not installed: these tests run %s on Node 20.19 or later", what)
	}
	clients := Dir()
	if _, err := os.Stat(filepath.Join(clients, "node_modules", filepath.FromSlash(pkg), "package.json")); err != nil {
		tb.Fatalf("%s is not installed in %s: run `npm ci --prefix clients` (%v)", what, clients, err)
	}
	return node, filepath.Join(clients, script)
}

// Dir is the repository's clients directory.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "clients")
}
