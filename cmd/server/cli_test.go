package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taskchat/taskchat/internal/store/storetest"
)

// The terminal client's commands against a real server on PostgreSQL:
// run in process, chat through a pseudo-terminal (cli_pty_test.go).

// client runs one command of the terminal client in process, as main
// would, with vars for its environment and stdin for its input.
func client(tb testing.TB, vars map[string]string, stdin string, args ...string) (stdout, stderr string, err error) {
	tb.Helper()
	var out, errOut bytes.Buffer
	con := console{stdin: strings.NewReader(stdin)}
	err = runIn(context.Background(), args, env(vars), con, &out, &errOut)
	return out.String(), errOut.String(), err
}

func TestLoginKeepsTheServerAndTokenForItsOwnerOnly(t *testing.T) {
	t.Parallel()
	base, _, _ := mustRun(t, map[string]string{"DEV_LOGIN": "true"})
	waitHealthy(t, base)
	home := map[string]string{"XDG_CONFIG_HOME": t.TempDir()}
	user := storetest.UserID(t)

	if _, stderr, err := client(t, home, "", "login", "--url", base, "--user", user); err != nil {
		t.Fatalf("login --user: %v\n%s", err, stderr)
	}
	path := filepath.Join(home["XDG_CONFIG_HOME"], "taskchat", "config.json")
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Fatalf("%s has mode %v; a file holding a token must be 0600", path, info.Mode().Perm())
	}
	var kept struct{ URL, Token, User string }
	b, _ := os.ReadFile(path)
	if err := json.Unmarshal(b, &kept); err != nil || kept.URL != base || kept.User != user || kept.Token == "" {
		t.Fatalf("kept %s (%v)", b, err)
	}

	// The login is what run uses from then on.
	stdout, stderr, err := client(t, home, "", "run", "Add a task to buy milk")
	if err != nil || !strings.Contains(stdout, "Buy milk") {
		t.Fatalf("run after login = %q, %q, %v", stdout, stderr, err)
	}

	// A token given on stdin is checked and kept the same way.
	other := map[string]string{"XDG_CONFIG_HOME": t.TempDir()}
	if _, stderr, err := client(t, other, mustMint(t, user)+"\n", "login", "--url", base); err != nil {
		t.Fatalf("login with the token on stdin: %v\n%s", err, stderr)
	}
	// One the server refuses is not kept.
	forged := unsignedToken(user, time.Now().Add(time.Hour))
	_, _, err = client(t, map[string]string{"XDG_CONFIG_HOME": t.TempDir()}, "", "login", "--url", base, "--token", forged)
	if err == nil || !strings.Contains(err.Error(), "refused the token") {
		t.Fatalf("login with a forged token: %v", err)
	}
}

func TestLoginWithoutADevLoginSaysWhatToDo(t *testing.T) {
	t.Parallel()
	base, _, _ := mustRun(t, nil)
	waitHealthy(t, base)
	_, _, err := client(t, map[string]string{"XDG_CONFIG_HOME": t.TempDir()}, "", "login", "--url", base, "--user", "alice")
	if err == nil || !strings.Contains(err.Error(), "no development login") || !strings.Contains(err.Error(), "--token") {
		t.Fatalf("err = %v", err)
	}
}

func TestRunPrintsTheReplyAloneOnStdout(t *testing.T) {
	t.Parallel()
	base, _, _ := mustRun(t, nil)
	waitHealthy(t, base)
	user := storetest.UserID(t)
	vars := map[string]string{"TASKCHAT_URL": base, "TASKCHAT_TOKEN": mustMint(t, user), "XDG_CONFIG_HOME": t.TempDir()}

	stdout, stderr, err := client(t, vars, "", "run", "Add a task to buy groceries")
	if err != nil || stdout != "Added task 1: Buy groceries.\n" {
		t.Fatalf("run = %q, %v; stderr %q", stdout, err, stderr)
	}
	if !strings.Contains(stderr, `→ add_task {"title":"Buy groceries"}`) {
		t.Fatalf("the tool call is not shown on stderr: %q", stderr)
	}

	// A prompt on stdin; --json prints the answer as the API gives it.
	stdout, _, err = client(t, vars, "Show me all my tasks\n", "run", "--json")
	var answer struct {
		ConversationID int64            `json:"conversation_id"`
		Response       string           `json:"response"`
		ToolCalls      []map[string]any `json:"tool_calls"`
	}
	if err != nil || json.Unmarshal([]byte(stdout), &answer) != nil || !strings.Contains(answer.Response, "Buy groceries") || len(answer.ToolCalls) != 1 {
		t.Fatalf("run --json = %q, %v", stdout, err)
	}

	// --conversation continues one.
	stdout, _, err = client(t, vars, "", "run", "--conversation", jsonNumber(answer.ConversationID), "Mark it as complete")
	if err != nil || !strings.Contains(stdout, "Buy groceries") {
		t.Fatalf("run --conversation = %q, %v", stdout, err)
	}
}

func TestRunFailsOnStderrWithNothingOnStdout(t *testing.T) {
	t.Parallel()
	base, _, _ := mustRun(t, nil)
	waitHealthy(t, base)
	user := storetest.UserID(t)
	token := mustMint(t, user)
	cases := []struct {
		name string
		vars map[string]string
		args []string
		want string
	}{
		{"not logged in", nil, []string{"run", "hello"}, "not logged in: run `" + programName() + " login --user NAME`"},
		{"expired", map[string]string{"TASKCHAT_TOKEN": unsignedToken(user, time.Now().Add(-time.Hour))}, []string{"run", "hello"}, "TASKCHAT_TOKEN expired"},
		{"refused", map[string]string{"TASKCHAT_URL": base, "TASKCHAT_TOKEN": unsignedToken(user, time.Now().Add(time.Hour))}, []string{"run", "hello"},
			"the server refused the token"},
		{"server down", map[string]string{"TASKCHAT_URL": "http://127.0.0.1:1", "TASKCHAT_TOKEN": token}, []string{"run", "hello"}, "does not answer"},
		{"failed turn", map[string]string{"TASKCHAT_URL": base, "TASKCHAT_TOKEN": token}, []string{"run", "--conversation", "999999999", "hello"}, "not_found"},
		{"failed turn, json", map[string]string{"TASKCHAT_URL": base, "TASKCHAT_TOKEN": token}, []string{"run", "--json", "--conversation", "999999999", "hello"}, "not_found"},
		{"no prompt", map[string]string{"TASKCHAT_URL": base, "TASKCHAT_TOKEN": token}, []string{"run"}, "run needs a prompt"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			vars := map[string]string{"XDG_CONFIG_HOME": t.TempDir()}
			for k, v := range c.vars {
				vars[k] = v
			}
			stdout, _, err := client(t, vars, "", c.args...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v; want it to say %q", err, c.want)
			}
			if stdout != "" {
				t.Fatalf("stdout = %q; want nothing", stdout)
			}
		})
	}
}

// TestRunExitsNonZero runs the binary itself: its exit status, and what it
// prints where, are the contract a script relies on.
func TestRunExitsNonZero(t *testing.T) {
	t.Parallel()
	base, _, _ := mustRun(t, nil)
	waitHealthy(t, base)
	user := storetest.UserID(t)
	run := func(token string, args ...string) (stdout, stderr string, code int) {
		cmd := asBinary(t, map[string]string{"TASKCHAT_URL": base, "TASKCHAT_TOKEN": token}, args...)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatal(err)
		}
		return out.String(), errOut.String(), cmd.ProcessState.ExitCode()
	}
	if stdout, stderr, code := run(mustMint(t, user), "run", "Add a task to water the plants"); code != 0 || stdout != "Added task 1: Water the plants.\n" {
		t.Fatalf("run = %d, %q, %q", code, stdout, stderr)
	}
	stdout, stderr, code := run(unsignedToken(user, time.Now().Add(time.Hour)), "run", "hello")
	if code == 0 || stdout != "" || !strings.HasPrefix(stderr, programName()+": the server refused the token") {
		t.Fatalf("a refused token: %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// asBinary is a command that runs this test binary as the taskchat binary
// (see TestMain), with only vars in its environment, and a config
// directory of its own.
func asBinary(tb testing.TB, vars map[string]string, args ...string) *exec.Cmd {
	tb.Helper()
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = []string{asBinaryVar + "=1", "XDG_CONFIG_HOME=" + tb.TempDir(), "PATH=" + os.Getenv("PATH")}
	for k, v := range vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	return cmd
}

// asBinaryVar makes TestMain run main instead of the tests.
const asBinaryVar = "TASKCHAT_TEST_AS_BINARY"

// unsignedToken is a JWT for user that no server accepts: its signature is
// none of theirs. The client reads its claims as it reads any token's.
func unsignedToken(user string, exp time.Time) string {
	enc := base64.RawURLEncoding.EncodeToString
	payload, _ := json.Marshal(map[string]any{"sub": user, "exp": exp.Unix()})
	return enc([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." + enc(payload) + "." + enc([]byte("not a signature"))
}

func jsonNumber(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// Login gives a user with no time zone this machine's, as the page gives
// them the browser's; a zone the user set stays.
func TestLoginAdoptsTheMachinesTimeZone(t *testing.T) {
	t.Parallel()
	base, _, _ := mustRun(t, map[string]string{"DEV_LOGIN": "true"})
	waitHealthy(t, base)
	user := storetest.UserID(t)
	zone := func() string {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, base+"/api/"+user+"/settings", nil)
		req.Header.Set("Authorization", "Bearer "+mustMint(t, user))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var got struct {
			TimeZone string `json:"time_zone"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET settings = %d (%v)", resp.StatusCode, err)
		}
		return got.TimeZone
	}
	login := func(tz string) string {
		t.Helper()
		_, stderr, err := client(t, map[string]string{"XDG_CONFIG_HOME": t.TempDir(), "TZ": tz}, "", "login", "--url", base, "--user", user)
		if err != nil {
			t.Fatalf("login: %v\n%s", err, stderr)
		}
		return stderr
	}

	if stderr := login(":Asia/Tokyo"); !strings.Contains(stderr, "Your time zone is now Asia/Tokyo") {
		t.Fatalf("login from Tokyo said %q, want the zone it set", stderr)
	}
	if got := zone(); got != "Asia/Tokyo" {
		t.Fatalf("time zone after login = %q, want the machine's, Asia/Tokyo", got)
	}
	// Logging in again from a machine elsewhere keeps the zone.
	if stderr := login("America/Chicago"); strings.Contains(stderr, "time zone") {
		t.Fatalf("the second login said %q: the zone was set already", stderr)
	}
	if got := zone(); got != "Asia/Tokyo" {
		t.Fatalf("time zone after a login from Chicago = %q, want Asia/Tokyo kept", got)
	}
}
