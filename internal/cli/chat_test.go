package cli

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// The chat session against a fake API over real HTTP, for what the real
// server cannot be made to do on cue: hold a turn before its start event,
// or not answer at all.

// chatting is a session under test: what it printed, keys typed at it.
type chatting struct {
	tb         testing.TB
	s          *session
	keys       *io.PipeWriter
	interrupts chan os.Signal
	out        *syncBuffer
	seen       int
	ended      chan error
}

func startChat(tb testing.TB, api http.Handler, adjust func(*session)) *chatting {
	tb.Helper()
	srv := httptest.NewServer(api)
	tb.Cleanup(srv.Close)
	claims := base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"alice","exp":4102444800}`))
	vars := map[string]string{"TASKCHAT_URL": srv.URL, "TASKCHAT_TOKEN": "e30." + claims + ".c2ln", "XDG_CONFIG_HOME": tb.TempDir()}
	stdin, keys := io.Pipe()
	out := &syncBuffer{}
	// Unbuffered, so that a Ctrl-C typed here has reached the session when
	// typing it returns.
	interrupts := make(chan os.Signal)
	env := Env{Name: "taskchat", Getenv: func(k string) string { return vars[k] }, Stdin: stdin, Stdout: out, Stderr: out, Interrupts: interrupts}
	c, err := env.client()
	if err != nil {
		tb.Fatal(err)
	}
	s := newSession(env, c, 0)
	if adjust != nil {
		adjust(s)
	}
	ch := &chatting{tb: tb, s: s, keys: keys, interrupts: interrupts, out: out, ended: make(chan error, 1)}
	go func() { ch.ended <- s.loop(context.Background()) }()
	tb.Cleanup(func() { keys.Close() })
	return ch
}

func (c *chatting) typ(line string) {
	c.tb.Helper()
	if _, err := io.WriteString(c.keys, line); err != nil {
		c.tb.Fatal(err)
	}
}

func (c *chatting) ctrlC() {
	c.tb.Helper()
	select {
	case c.interrupts <- os.Interrupt:
	case <-time.After(10 * time.Second):
		c.tb.Fatalf("the session took no Ctrl-C; it shows:\n%s", c.out.String())
	}
}

// expect waits for text to be printed after what the previous expect found.
func (c *chatting) expect(text string) {
	c.tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		out := c.out.String()
		if i := strings.Index(out[c.seen:], text); i >= 0 {
			c.seen += i + len(text)
			return
		}
		if time.Now().After(deadline) {
			c.tb.Fatalf("%q was not printed; the session shows:\n%s", text, out)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// leave types Ctrl-D and waits for the session to end.
func (c *chatting) leave() {
	c.tb.Helper()
	c.keys.Close()
	select {
	case err := <-c.ended:
		if err != nil {
			c.tb.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		c.tb.Fatalf("the session did not end at Ctrl-D; it shows:\n%s", c.out.String())
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func event(w http.ResponseWriter, name, data string) {
	fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, data)
	w.(http.Flusher).Flush()
}

func TestCtrlCBeforeATurnStartsStopsItOnceItStarts(t *testing.T) {
	asked, release, stopped := make(chan struct{}), make(chan struct{}), make(chan struct{})
	api := http.NewServeMux()
	api.HandleFunc("POST /api/alice/chat", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		close(asked)
		<-release
		event(w, "start", `{"conversation_id":7,"turn_id":1}`)
		event(w, "delta", `{"text":"Hel"}`)
		<-stopped
		event(w, "done", `{"conversation_id":7,"response":"Hel","stopped":true}`)
	})
	api.HandleFunc("POST /api/alice/conversations/7/stop", func(w http.ResponseWriter, r *http.Request) {
		close(stopped)
		w.WriteHeader(http.StatusAccepted)
	})
	chat := startChat(t, api, nil)
	chat.expect("> ")
	chat.typ("hello\n")
	<-asked
	chat.ctrlC() // before the start event: the conversation is not known yet
	close(release)
	chat.expect("Hel")
	chat.expect("(stopped)")
	chat.expect("> ") // the session goes on
	if chat.s.conv != 7 {
		t.Fatalf("the open conversation is %d; want the stopped turn's, 7", chat.s.conv)
	}
	chat.leave()
}

// hanging is a server that takes requests and never answers them; each
// comes on asked.
func hanging(tb testing.TB) (api http.Handler, asked <-chan string) {
	requests, quit := make(chan string), make(chan struct{})
	tb.Cleanup(func() { close(quit) }) // before the server closes
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		select {
		case requests <- r.Method + " " + r.URL.Path:
		case <-quit:
		}
		select {
		case <-r.Context().Done():
		case <-quit:
		}
	}), requests
}

func TestCtrlCHangsUpATurnThatDoesNotStart(t *testing.T) {
	api, asked := hanging(t)
	chat := startChat(t, api, func(s *session) { s.startWait = 10 * time.Millisecond })
	chat.expect("> ")
	chat.typ("hello\n")
	<-asked
	chat.ctrlC()
	chat.expect("(hung up: the server had not started the reply)")
	chat.expect("> ")
	chat.leave()
}

func TestCtrlCOrATimeLimitEndsAListTheServerDoesNotAnswer(t *testing.T) {
	api, asked := hanging(t)
	chat := startChat(t, api, func(s *session) { s.wait = time.Hour })
	for _, c := range []struct{ cmd, request string }{
		{"/list", "GET /api/alice/conversations"},
		{"/tasks", "GET /api/alice/tasks"},
		{"/open 3", "GET /api/alice/conversations/3/messages"},
	} {
		chat.expect("> ")
		chat.typ(c.cmd + "\n")
		if got := <-asked; got != c.request {
			t.Fatalf("%s asked %s; want %s", c.cmd, got, c.request)
		}
		chat.ctrlC()
		chat.expect("(interrupted)")
	}
	chat.expect("> ")
	chat.s.wait = 20 * time.Millisecond // read once the next line is typed
	chat.typ("/tasks\n")
	<-asked
	chat.expect("error: the server at ")
	chat.expect("did not answer within 20ms")
	chat.expect("> ")
	chat.leave()
}
