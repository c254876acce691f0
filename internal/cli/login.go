package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/taskchat/taskchat/internal/tasks"
)

// Login is `login [--url URL] (--user NAME | --token TOKEN)`: it gets a
// token from the server's development login for NAME, or takes the one
// given (or the one on stdin), checks that the server accepts it, and
// keeps the server's URL and the token in the config file.
func Login(ctx context.Context, args []string, env Env) error {
	fs := flag.NewFlagSet("login", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	s, err := load(env.Getenv)
	if err != nil {
		s = saved{} // a broken file is replaced
	}
	base := fs.String("url", firstOf(env.Getenv("TASKCHAT_URL"), s.URL, DefaultURL), "the server's `URL`")
	user := fs.String("user", "", "log in as `NAME` with the server's development login (DEV_LOGIN)")
	token := fs.String("token", "", "the `TOKEN` to use (read from stdin when neither --user nor --token is given)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 || *user != "" && *token != "" {
		return errors.New("login takes --user NAME or --token TOKEN (or the token on stdin), not both")
	}
	*base = strings.TrimRight(*base, "/")
	switch {
	case *user != "":
		*token, err = devToken(ctx, env.HTTP, *base, *user)
	case *token == "":
		if isTerminal(env.Stdin) {
			fmt.Fprint(env.Stderr, "Paste the token, then press Enter and Ctrl-D: ")
		}
		*token, err = readToken(ctx, env.Stdin)
	}
	if err != nil {
		return err
	}
	c, err := readClaims(*token)
	if err != nil {
		return err
	}
	if c.expired(time.Now()) {
		return fmt.Errorf("this token expired at %s", time.Unix(c.Exp, 0).Format(time.RFC3339))
	}
	client := &Client{URL: *base, Token: *token, User: c.Sub, HTTP: env.HTTP}
	if _, _, err := client.Conversations(ctx, 1); err != nil {
		var p *Problem
		if errors.As(err, &p) && p.Status == http.StatusUnauthorized {
			return fmt.Errorf("the server at %s refused the token: %v", *base, p)
		}
		return err
	}
	adoptTimeZone(ctx, client, env)
	path, err := store(env.Getenv, saved{URL: *base, Token: *token, User: c.Sub})
	if err != nil {
		return fmt.Errorf("keeping the login: %w", err)
	}
	until := ""
	if c.Exp != 0 {
		until = ", until " + time.Unix(c.Exp, 0).Local().Format("2006-01-02 15:04")
	}
	fmt.Fprintf(env.Stderr, "Logged in to %s as %s%s (kept in %s).\n", Line(*base), Line(c.Sub), until, path)
	return nil
}

// devToken asks the server's development login for a token for user.
func devToken(ctx context.Context, hc *http.Client, base, user string) (string, error) {
	resp, err := send(ctx, hc, http.MethodPost, base+"/auth/dev/token", "", map[string]string{"user_id": user}, "application/json")
	if err != nil {
		var p *Problem
		if errors.As(err, &p) && p.Status == http.StatusNotFound {
			return "", fmt.Errorf("the server at %s has no development login (DEV_LOGIN is off): get a token from its identity provider and log in with --token TOKEN", base)
		}
		return "", err
	}
	defer resp.Body.Close()
	var body struct {
		Token string `json:"token"`
	}
	b, err := readAll(resp.Body)
	if err == nil {
		err = json.Unmarshal(b, &body)
	}
	if err != nil || body.Token == "" {
		return "", fmt.Errorf("the development login of %s answered no token", base)
	}
	return body.Token, nil
}

// readToken is a token given on stdin, such as `pass show taskchat |
// taskchat login`: it then appears in no process list or shell history.
func readToken(ctx context.Context, stdin io.Reader) (string, error) {
	if stdin == nil {
		return "", errors.New("login needs --user NAME, --token TOKEN or the token on stdin")
	}
	b, err := readInput(ctx, stdin, 16<<10)
	if err != nil {
		return "", err
	}
	token := strings.TrimSpace(string(b))
	if token == "" {
		return "", errors.New("login needs --user NAME, --token TOKEN or the token on stdin; stdin was empty")
	}
	return token, nil
}

// adoptTimeZone gives the user this machine's time zone when they have
// none set yet, so that "tomorrow" and "at 5" mean theirs, as the chat
// page gives them the browser's; a zone they set stays. It says what it
// did; a failure only costs the default (UTC), so it is only said.
func adoptTimeZone(ctx context.Context, c *Client, env Env) {
	zone := machineZone(env.Getenv)
	if zone == "" {
		return
	}
	set, err := c.Settings(ctx)
	if err == nil && set.UpdatedAt == nil {
		if err = c.SetTimeZone(ctx, zone); err == nil {
			fmt.Fprintf(env.Stderr, "Your time zone is now %s, this machine's (dates you write are read in it).\n", Line(zone))
		}
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "Your time zone could not be set (%v); dates are read in UTC until it is.\n", err)
	}
}

// machineZone is the IANA name of this machine's time zone: TZ's, else
// the system's (/etc/timezone, or the zone /etc/localtime links to); ""
// when none is known.
func machineZone(getenv func(string) string) string {
	candidates := []string{strings.TrimPrefix(getenv("TZ"), ":")}
	if b, err := os.ReadFile("/etc/timezone"); err == nil {
		candidates = append(candidates, strings.TrimSpace(string(b)))
	}
	if target, err := os.Readlink("/etc/localtime"); err == nil {
		if _, name, ok := strings.Cut(target, "zoneinfo/"); ok {
			candidates = append(candidates, name)
		}
	}
	for _, name := range candidates {
		if name == "" || strings.HasPrefix(name, "/") {
			continue
		}
		if _, err := tasks.LoadZone(name); err != nil {
			continue // not a place's zone: the server would refuse it
		}
		if loc, _ := time.LoadLocation(name); isUTC(loc) {
			return "" // a server's machine, more likely than a person's: leave it for the page to set
		}
		return name
	}
	return ""
}

// isUTC reports whether loc is UTC at every instant (UTC, Etc/UTC, Zulu…).
func isUTC(loc *time.Location) bool {
	for _, t := range []time.Time{time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC), time.Date(2026, 7, 15, 12, 0, 0, 0, time.UTC)} {
		if _, off := t.In(loc).Zone(); off != 0 {
			return false
		}
	}
	return true
}
