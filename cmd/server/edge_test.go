package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/taskchat/taskchat/internal/store/storetest"
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

// mustBeClosed fails unless the server has closed conn: a read ends
// rather than waiting.
func mustBeClosed(tb testing.TB, conn net.Conn, r *bufio.Reader, what string) {
	tb.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if b, err := r.ReadByte(); err == nil {
		tb.Fatalf("%s: the server sent %q", what, b)
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		tb.Fatalf("%s: still open after 5 s", what)
	}
}

// mustHealthcheck runs the healthcheck command, as Docker does: it gives
// /healthz 3 seconds.
func mustHealthcheck(tb testing.TB, base, what string) {
	tb.Helper()
	var stderr strings.Builder
	if err := run(context.Background(), []string{"healthcheck", "-url", base + "/healthz"}, env(nil), io.Discard, &stderr); err != nil {
		tb.Fatalf("%s: %v %s", what, err, stderr.String())
	}
}

// At MAX_CONNECTIONS, idle kept-alive connections make room for a new
// client: a health check is answered at once, one idle connection is
// closed, and the others still serve. Each one closed so is counted. (Which
// one goes — the quiet one used least recently — is
// TestLimitListenerClosesTheQuietOneUsedLeastRecently's: here the oldest
// may still be finishing its answer when the health check comes, on a
// loaded machine, and the next goes instead.)
func TestRunMakesRoomByClosingTheOldestIdleConnection(t *testing.T) {
	t.Parallel()
	const max = 8
	base, _, logs := mustRun(t, map[string]string{"MAX_CONNECTIONS": fmt.Sprint(max), "IDLE_TIMEOUT": "10m", "METRICS_ADDR": "127.0.0.1:0"})
	conns := make([]net.Conn, max)
	readers := make([]*bufio.Reader, max)
	for i := range max {
		conns[i], readers[i] = mustDial(t, base)
		if status, err := rawGet(t, conns[i], readers[i], 5*time.Second); err != nil || status != "200 OK" {
			t.Fatalf("connection %d, within the cap: %q, %v", i, status, err)
		}
	}
	mustHealthcheck(t, base, "a health check with every connection idle")
	var closed []int
	for i := range max {
		_, _ = io.WriteString(conns[i], "GET /healthz HTTP/1.1\r\nHost: taskchat\r\n\r\n") // fails on the closed one, or not yet
		_ = conns[i].SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(readers[i], nil)
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Fatalf("connection %d neither answered nor closed within 5 s", i)
		}
		if err != nil {
			closed = append(closed, i)
			continue
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if len(closed) != 1 || closed[0] > 1 {
		t.Fatalf("connections closed to make room: %v, want one of the two oldest", closed)
	}
	m := metricsListening.FindStringSubmatch(logs.String())
	if m == nil {
		t.Fatalf("no metrics listener in the log:\n%s", logs)
	}
	if status, text := get(t, "http://"+m[1]+"/metrics"); status != 200 || !strings.Contains(text, "\ntaskchat_connections_evicted_total 1\n") {
		t.Errorf("metrics (%d) do not count the one connection closed to make room", status)
	}
}

// Connections that opened and never sent a request (slowloris-style) make
// room too, once they have been silent for a second.
func TestRunMakesRoomByClosingSilentConnections(t *testing.T) {
	t.Parallel()
	base, _, _ := mustRun(t, map[string]string{"MAX_CONNECTIONS": "2"})
	first, r1 := mustDial(t, base)
	second, r2 := mustDial(t, base)
	mustHealthcheck(t, base, "a health check with every connection silent")
	mustBeClosed(t, first, r1, "the oldest silent connection")
	if status, err := rawGet(t, second, r2, 5*time.Second); err != nil || status != "200 OK" {
		t.Fatalf("the younger silent connection: %q, %v", status, err)
	}
}

// A new connection gets a moment to send its request before it may be
// closed to make room: here one takes a tenth of a second, with another
// client already waiting for its slot, and both are answered.
func TestRunSparesANewConnectionItsGrace(t *testing.T) {
	t.Parallel()
	base, _, _ := mustRun(t, map[string]string{"MAX_CONNECTIONS": "1"})
	slow, r := mustDial(t, base)
	waiting, wr := mustDial(t, base)
	if _, err := io.WriteString(waiting, "GET /healthz HTTP/1.1\r\nHost: taskchat\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // a slow client, well within silentGrace
	if status, err := rawGet(t, slow, r, 5*time.Second); err != nil || status != "200 OK" {
		t.Fatalf("the slow new connection: %q, %v", status, err)
	}
	_ = waiting.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(wr, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("the connection that waited for it: %v, %v", resp, err)
	}
	resp.Body.Close()
}

// Connections serving a request are never closed to make room: a new one
// waits, and is served as soon as one of them turns idle, long before
// IDLE_TIMEOUT.
func TestRunKeepsBusyConnections(t *testing.T) {
	t.Parallel()
	base, _, _ := mustRun(t, map[string]string{"MAX_CONNECTIONS": "2", "IDLE_TIMEOUT": "10m", "OFFLINE_MODEL_PACE": "300ms"})
	waitHealthy(t, base)
	user := storetest.UserID(t)
	tok := mustMint(t, user)
	var streams []*eventStream
	for range 2 {
		s := openStream(t, "POST", base+"/api/"+user+"/chat", tok, `{"message":"hello"}`, nil)
		s.until(t, func(e event) bool { return e.name == "delta" })
		streams = append(streams, s)
	}
	extra, r := mustDial(t, base)
	if status, err := rawGet(t, extra, r, 200*time.Millisecond); err == nil {
		t.Fatalf("a third connection was served (%s) while two streamed", status)
	}
	_ = extra.SetReadDeadline(time.Now().Add(20 * time.Second))
	resp, err := http.ReadResponse(r, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("the waiting connection once a stream ended: %v, %v", resp, err)
	}
	resp.Body.Close()
	for i, s := range streams {
		if rest := s.rest(); len(rest) == 0 || rest[len(rest)-1].name != "done" {
			t.Errorf("stream %d ended with %v", i, names(rest))
		}
	}
}

// IDLE_TIMEOUT closes a kept-alive connection that sends nothing more.
func TestRunClosesIdleConnections(t *testing.T) {
	t.Parallel()
	base, _, _ := mustRun(t, map[string]string{"IDLE_TIMEOUT": "300ms"})
	conn, r := mustDial(t, base)
	if status, err := rawGet(t, conn, r, 5*time.Second); err != nil || status != "200 OK" {
		t.Fatalf("a request: %q, %v", status, err)
	}
	mustBeClosed(t, conn, r, "a connection idle past IDLE_TIMEOUT")
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
	if err != nil || cfg.WriteTimeout != 30*time.Second || cfg.MaxConnections != 1024 || cfg.IdleTimeout != 30*time.Second || cfg.MaxHeaderBytes != 16<<10 {
		t.Fatalf("defaults: write timeout %s, max connections %d, idle timeout %s, max header bytes %d, %v", cfg.WriteTimeout, cfg.MaxConnections, cfg.IdleTimeout, cfg.MaxHeaderBytes, err)
	}
	base["WRITE_TIMEOUT"], base["MAX_CONNECTIONS"], base["IDLE_TIMEOUT"] = "soon", "0", "0s"
	_, err = loadConfig(env(base))
	for _, name := range []string{"WRITE_TIMEOUT", "MAX_CONNECTIONS", "IDLE_TIMEOUT"} {
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
