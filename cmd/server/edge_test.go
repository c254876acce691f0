package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// rawGet sends GET /healthz on conn, keeping the connection open, and
// returns the status line of the answer, or the read error.
func rawGet(tb testing.TB, conn net.Conn, r *bufio.Reader, wait time.Duration) (string, error) {
	tb.Helper()
	if _, err := io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: taskchat\r\n\r\n"); err != nil {
		tb.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(wait))
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		return "", err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.Status, nil
}

func mustDial(tb testing.TB, base string) (net.Conn, *bufio.Reader) {
	tb.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close() })
	return conn, bufio.NewReader(conn)
}

// A replica holds at most MAX_CONNECTIONS connections: one more waits,
// unanswered, until another closes.
func TestRunCapsItsConnections(t *testing.T) {
	t.Parallel()
	base, _, _ := mustRun(t, map[string]string{"MAX_CONNECTIONS": "2"})
	var held []net.Conn
	for range 2 {
		conn, r := mustDial(t, base)
		if status, err := rawGet(t, conn, r, 5*time.Second); err != nil || status != "200 OK" {
			t.Fatalf("a connection within the cap: %q, %v", status, err)
		}
		held = append(held, conn) // kept alive: each holds its slot
	}
	extra, r := mustDial(t, base)
	if status, err := rawGet(t, extra, r, 300*time.Millisecond); err == nil {
		t.Fatalf("a third connection was served (%s) while two were open", status)
	}
	held[0].Close()
	_ = extra.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(r, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("the waiting connection once one closed: %v, %v", resp, err)
	}
	resp.Body.Close()
}

// Request headers are limited to what a token needs, not net/http's 1 MiB.
func TestRunLimitsRequestHeaders(t *testing.T) {
	t.Parallel()
	base, _, _ := mustRun(t, nil)
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	for _, tc := range []struct {
		name   string
		size   int
		status int
	}{
		{"a token's worth", 12 << 10, 200},
		{"far more", 64 << 10, http.StatusRequestHeaderFieldsTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req, _ := http.NewRequest("GET", base+"/healthz", nil)
			req.Header.Set("X-Padding", strings.Repeat("a", tc.size))
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("%d bytes of header: %d, want %d", tc.size, resp.StatusCode, tc.status)
			}
		})
	}
}

func TestConfigOfTheEdge(t *testing.T) {
	t.Parallel()
	base := map[string]string{"DATABASE_URL": "postgres://x@localhost/db", "JWT_SECRET": secret}
	cfg, err := loadConfig(env(base))
	if err != nil || cfg.WriteTimeout != 30*time.Second || cfg.MaxConnections != 1024 || cfg.MaxHeaderBytes != 16<<10 {
		t.Fatalf("defaults: write timeout %s, max connections %d, max header bytes %d, %v", cfg.WriteTimeout, cfg.MaxConnections, cfg.MaxHeaderBytes, err)
	}
	base["WRITE_TIMEOUT"], base["MAX_CONNECTIONS"] = "soon", "0"
	_, err = loadConfig(env(base))
	for _, name := range []string{"WRITE_TIMEOUT", "MAX_CONNECTIONS"} {
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("the error does not name %s: %v", name, err)
		}
	}
}

// The token command refuses a secret the server would refuse, in the
// server's words.
func TestTokenWithAWeakSecretSaysWhatTheServerSays(t *testing.T) {
	t.Parallel()
	weak := env(map[string]string{"DATABASE_URL": "postgres://x@localhost/db", "JWT_SECRET": "too-short"})
	tokenErr := run(context.Background(), []string{"token", "alice"}, weak, io.Discard, io.Discard)
	serveErr := run(context.Background(), nil, weak, io.Discard, io.Discard)
	const want = "JWT_SECRET is required and must be at least 32 bytes (got 9); generate one with: openssl rand -hex 32"
	if tokenErr == nil || tokenErr.Error() != want {
		t.Errorf("token: %v\nwant %q", tokenErr, want)
	}
	if serveErr == nil || !strings.Contains(serveErr.Error(), want) {
		t.Errorf("serve: %v\nwant it to say %q", serveErr, want)
	}
}
