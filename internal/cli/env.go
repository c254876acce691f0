package cli

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

// Env is what a command reads and writes; cmd/server passes the process's.
type Env struct {
	// Name is the binary's name, as the commands a message asks a person
	// to run spell it.
	Name           string
	Getenv         func(string) string
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Interrupts brings each Ctrl-C to chat, which stops the reply it is
	// writing rather than dying; nil when none come.
	Interrupts <-chan os.Signal
	HTTP       *http.Client // nil: http.DefaultClient
}

// client is the API client the environment and the config file describe:
// TASKCHAT_URL and TASKCHAT_TOKEN override what login saved. A missing
// or expired token is an error that says what to run.
func (env Env) client() (*Client, error) {
	s, err := load(env.Getenv)
	if err != nil {
		return nil, err
	}
	base := firstOf(env.Getenv("TASKCHAT_URL"), s.URL, DefaultURL)
	token, fromEnv := env.Getenv("TASKCHAT_TOKEN"), true
	if token == "" {
		token, fromEnv = s.Token, false
	}
	if token == "" {
		return nil, fmt.Errorf("not logged in: %s", env.loginHint(s.User))
	}
	c, err := readClaims(token)
	switch {
	case err != nil && fromEnv:
		return nil, fmt.Errorf("TASKCHAT_TOKEN: %v", err)
	case err != nil:
		return nil, fmt.Errorf("the saved token: %v; %s", err, env.loginHint(s.User))
	case c.expired(time.Now()) && fromEnv:
		return nil, fmt.Errorf("TASKCHAT_TOKEN expired at %s: set a fresh one, or unset it and %s",
			time.Unix(c.Exp, 0).Format(time.RFC3339), env.loginHint(c.Sub))
	case c.expired(time.Now()):
		return nil, fmt.Errorf("the token for %s expired at %s: %s",
			Line(c.Sub), time.Unix(c.Exp, 0).Format(time.RFC3339), env.loginHint(c.Sub))
	}
	return &Client{URL: strings.TrimRight(base, "/"), Token: token, User: c.Sub, HTTP: env.HTTP}, nil
}

// loginHint says what to run to log in, for user when known.
func (env Env) loginHint(user string) string {
	name := user
	if name == "" {
		name = "NAME"
	}
	return fmt.Sprintf("run `%s login --user %s` (with the development login of `%s dev`) or `%s login --token TOKEN`",
		env.Name, shellWord(name), env.Name, env.Name)
}

// explain makes an error of the API into what a person can act on: a
// refused token says how to log in again.
func (env Env) explain(c *Client, err error) error {
	var p *Problem
	if errors.As(err, &p) && p.Status == http.StatusUnauthorized {
		return fmt.Errorf("the server refused the token: %v; %s", p, env.loginHint(c.User))
	}
	return err
}

// shellWord is s as one word of a shell command, quoted when it must be.
func shellWord(s string) string {
	s = Line(s)
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.@+/:", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func firstOf(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// isTerminal reports whether f (a reader or writer) is a terminal: where a
// reply is worth printing as it is written, or a person types.
func isTerminal(f any) bool {
	file, ok := f.(*os.File)
	if !ok {
		return false
	}
	st, err := file.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
