package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/agent/openaitest"
	"github.com/taskchat/taskchat/internal/store/storetest"
)

// terminal is the binary running in a pseudo-terminal: what it printed,
// and keys typed at it. Ctrl-C typed here reaches it as SIGINT, from the
// terminal, as it does for a person.
type terminal struct {
	tb  testing.TB
	cmd *exec.Cmd
	pty interface {
		Write([]byte) (int, error)
		Close() error
	}
	mu     sync.Mutex
	output strings.Builder
	seen   int // how far expect has read
	exited chan error
}

func startInTerminal(tb testing.TB, vars map[string]string, args ...string) *terminal {
	tb.Helper()
	cmd := asBinary(tb, vars, args...)
	cmd.Env = append(cmd.Env, "TERM=dumb")
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 200})
	if err != nil {
		tb.Fatal(err)
	}
	t := &terminal{tb: tb, cmd: cmd, pty: f, exited: make(chan error, 1)}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			t.mu.Lock()
			t.output.Write(buf[:n])
			t.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	go func() { t.exited <- cmd.Wait() }()
	tb.Cleanup(func() {
		_ = cmd.Process.Kill()
		f.Close()
	})
	return t
}

// expect waits for text to be printed after what the previous expect
// found, and returns what was printed up to it.
func (t *terminal) expect(text string) string {
	t.tb.Helper()
	var got string
	waitFor(t.tb, fmt.Sprintf("%q on the terminal", text), func() bool {
		t.mu.Lock()
		defer t.mu.Unlock()
		out := t.output.String()
		i := strings.Index(out[t.seen:], text)
		if i < 0 {
			return false
		}
		got = out[t.seen : t.seen+i+len(text)]
		t.seen += i + len(text)
		return true
	})
	return got
}

func (t *terminal) all() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.output.String()
}

func (t *terminal) typ(keys string) {
	t.tb.Helper()
	if _, err := t.pty.Write([]byte(keys)); err != nil {
		t.tb.Fatal(err)
	}
}

// exit waits for the binary to exit, and fails the test unless it exits 0.
func (t *terminal) exit() {
	t.tb.Helper()
	select {
	case err := <-t.exited:
		if err != nil {
			t.tb.Fatalf("the client exited with %v; the terminal shows:\n%s", err, t.all())
		}
	case <-time.After(15 * time.Second):
		t.tb.Fatalf("the client did not exit; the terminal shows:\n%s", t.all())
	}
}

// A model whose replies the test holds: a message about counting is
// answered half-way and then held until the turn is stopped; one asking to
// delete calls delete_task; the result of a tool is confirmed.
func fakeModel(tb testing.TB) *openaitest.Server {
	hold := make(chan struct{})
	fake := openaitest.New()
	fake.Respond = func(req map[string]any, _ int) openaitest.Step {
		msgs, _ := req["messages"].([]any)
		last, _ := msgs[len(msgs)-1].(map[string]any)
		content, _ := last["content"].(string)
		switch {
		case last["role"] == "tool" && strings.Contains(content, "awaiting_approval"):
			return openaitest.Step{Text: "I'll delete task 2 once you approve."}
		case last["role"] == "tool" && strings.Contains(content, "declined"):
			return openaitest.Step{Text: "Kept it."}
		case last["role"] == "tool":
			return openaitest.Step{Text: "Deleted task 2: Buy milk."}
		case strings.Contains(content, "count"):
			return openaitest.Step{Text: "Counting: one \u202e two ", Pause: hold, Rest: "three."}
		case strings.Contains(content, "remove"):
			return openaitest.Step{Calls: []agent.ToolCall{{ID: "call_1", Name: "delete_task", Arguments: `{"task_id":1}`}}}
		case strings.Contains(content, "delete"):
			return openaitest.Step{Calls: []agent.ToolCall{{ID: "call_1", Name: "delete_task", Arguments: `{"task_id":2}`}}}
		}
		return openaitest.Step{Text: "Sure."}
	}
	tb.Cleanup(func() { close(hold); fake.Close() })
	return fake
}

func TestChatInATerminal(t *testing.T) {
	t.Parallel()
	fake := fakeModel(t)
	base, _, _ := mustRun(t, map[string]string{"OPENAI_BASE_URL": fake.URL + "/v1", "OPENAI_API_KEY": "sk-test", "APPROVAL_TOOLS": "delete_task"})
	waitHealthy(t, base)
	user := storetest.UserID(t)
	token := mustMint(t, user)
	// A title with an escape sequence that would set the terminal's title,
	// written past the API, which refuses it, as an old row or a bug might.
	ctx := context.Background()
	if _, err := storetest.Pool(t).Exec(ctx, `INSERT INTO tasks (user_id, title) VALUES ($1, $2), ($1, 'Buy milk')`,
		user, "Pwn \x1b]0;owned\x07 \x1b[2J here"); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"TASKCHAT_URL": base, "TASKCHAT_TOKEN": token}
	term := startInTerminal(t, vars, "chat")
	term.expect("> ")

	term.typ("/tasks\n")
	term.expect(`[ ] #1 Pwn \x1b]0;owned\x07 \x1b[2J here`)
	term.expect("[ ] #2 Buy milk")
	term.expect("> ")

	// Ctrl-C in the middle of a reply stops the turn on the server.
	term.typ("count to three slowly\n")
	term.expect(`Counting: one \u202e two`)
	term.typ("\x03")
	term.expect("(stopped)")
	term.expect("> ")
	conv := latestConversation(t, base, token, user)
	waitFor(t, "the stopped reply stored interrupted", func() bool {
		last := lastMessage(t, base, token, user, conv)
		return last.Role == "assistant" && last.Interrupted && strings.HasPrefix(last.Content, "Counting: one")
	})

	// The client still runs: a call that waits for approval is asked
	// about, and the turn continues once it is approved.
	term.typ("now delete the milk task\n")
	term.expect("→ delete_task {\"task_id\":2}")
	term.expect("I'll delete task 2 once you approve.")
	term.expect("Delete task 2, Buy milk? [y/N] ")
	term.typ("y\n")
	term.expect("Deleted task 2: Buy milk.")
	term.expect("> ")
	if n := storetest.Count(t, `SELECT count(*) FROM tasks WHERE user_id = $1`, user); n != 1 {
		t.Fatalf("%d tasks left; the approved deletion should leave 1", n)
	}

	term.typ("\x04") // Ctrl-D leaves
	term.exit()
	if out := term.all(); strings.ContainsAny(out, "\x1b\x07\u202e\u009b") {
		t.Fatalf("a control character from the server reached the terminal:\n%q", out)
	}

	// A call that run left waiting is named on stderr; chat --continue
	// reopens the conversation and asks about it.
	_, stderr, err := client(t, vars, "", "run", "--conversation", jsonNumber(conv), "remove the first task")
	summary := `Delete task 1, Pwn \x1b]0;owned\x07 \x1b[2J here`
	if err != nil || !strings.Contains(stderr, "waiting for your approval: "+summary) {
		t.Fatalf("run = %v, stderr %q", err, stderr)
	}
	term = startInTerminal(t, vars, "chat", "--continue")
	term.expect(fmt.Sprintf("Conversation %d: count to three slowly", conv))
	term.expect(summary + "? [y/N] ")
	term.typ("n\n")
	term.expect("Kept it.")
	term.expect("> ")
	if n := storetest.Count(t, `SELECT count(*) FROM tasks WHERE user_id = $1`, user); n != 1 {
		t.Fatalf("%d tasks left; the declined deletion should leave 1", n)
	}
	// Ctrl-C twice at the prompt leaves.
	term.typ("/list\n")
	term.expect(fmt.Sprintf("* %4d  count to three slowly", conv))
	term.expect("> ")
	term.typ("\x03")
	term.expect("Ctrl-C again or Ctrl-D to leave")
	term.typ("\x03")
	term.exit()
}

type message struct {
	Role        string `json:"role"`
	Content     string `json:"content"`
	Interrupted bool   `json:"interrupted"`
}

func latestConversation(tb testing.TB, base, token, user string) int64 {
	tb.Helper()
	var page struct {
		Conversations []struct{ ID int64 } `json:"conversations"`
	}
	getJSON(tb, base+"/api/"+user+"/conversations?limit=1", token, &page)
	if len(page.Conversations) != 1 {
		tb.Fatalf("no conversation")
	}
	return page.Conversations[0].ID
}

func lastMessage(tb testing.TB, base, token, user string, conv int64) message {
	tb.Helper()
	var page struct {
		Messages []message `json:"messages"`
	}
	getJSON(tb, fmt.Sprintf("%s/api/%s/conversations/%d/messages", base, user, conv), token, &page)
	if len(page.Messages) == 0 {
		return message{}
	}
	return page.Messages[len(page.Messages)-1]
}

func getJSON(tb testing.TB, url, token string, into any) {
	tb.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(into); err != nil || resp.StatusCode != 200 {
		tb.Fatalf("GET %s = %d, %v", url, resp.StatusCode, err)
	}
}

// Ctrl-C ends a command that waits for what a person types: main takes
// SIGINT for chat, so without this login would wait on for its token.
func TestCtrlCEndsALoginThatWaitsForItsToken(t *testing.T) {
	t.Parallel()
	term := startInTerminal(t, map[string]string{"XDG_CONFIG_HOME": t.TempDir()}, "login", "--url", "http://127.0.0.1:1")
	term.expect("Paste the token")
	term.typ("\x03")
	select {
	case err := <-term.exited:
		if err == nil {
			t.Fatal("login succeeded after Ctrl-C")
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("login did not exit at Ctrl-C; the terminal shows:\n%s", term.all())
	}
	term.expect("interrupted")
}
