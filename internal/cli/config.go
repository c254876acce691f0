package cli

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// DefaultURL is the server a person reaches when nothing says otherwise:
// the one `taskchat dev` starts.
const DefaultURL = "http://localhost:8080"

// saved is what login keeps in the config file.
type saved struct {
	URL   string `json:"url"`
	Token string `json:"token"`
	User  string `json:"user"`
}

// configFile is where login keeps the server and the token:
// $XDG_CONFIG_HOME/taskchat/config.json, or ~/.config/taskchat/ without it.
func configFile(getenv func(string) string) (string, error) {
	dir := getenv("XDG_CONFIG_HOME")
	if dir == "" || !filepath.IsAbs(dir) { // the spec says to ignore a relative one
		home := getenv("HOME")
		if home == "" {
			return "", errors.New("neither XDG_CONFIG_HOME nor HOME is set: there is nowhere to keep the login")
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "taskchat", "config.json"), nil
}

// load reads the config file; a missing one, or none for want of a home,
// is an empty config (TASKCHAT_URL and TASKCHAT_TOKEN may be all there is).
func load(getenv func(string) string) (saved, error) {
	var s saved
	path, err := configFile(getenv)
	if err != nil {
		return s, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("%s does not parse (%v): log in again", path, err)
	}
	return s, nil
}

// store writes the config file, readable by its owner only: it holds a
// bearer token. It replaces the file whole, so a crash leaves the old one.
func store(getenv func(string) string, s saved) (string, error) {
	path, err := configFile(getenv)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	b, _ := json.MarshalIndent(s, "", "  ")
	tmp, err := os.CreateTemp(filepath.Dir(path), ".config-*.json")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	// CreateTemp makes the file 0600 already; Chmod says so, whatever the umask.
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return "", err
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	return path, os.Rename(tmp.Name(), path)
}

// claims are what the client reads of a token: whom it is for, until when.
// It does not verify the token; the server does, and refuses a bad one.
type claims struct {
	Sub string `json:"sub"`
	Exp int64  `json:"exp"`
}

// readClaims decodes a JWT's payload without verifying it.
func readClaims(token string) (claims, error) {
	var c claims
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return c, errors.New("this is not a JWT (three parts separated by dots)")
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return c, errors.New("the token's payload is not base64url")
	}
	if err := json.Unmarshal(payload, &c); err != nil {
		return c, errors.New("the token's payload is not JSON with sub and exp")
	}
	if c.Sub == "" {
		return c, errors.New("the token names no user (no sub claim)")
	}
	return c, nil
}

// expired reports whether c's exp has passed at now; a token without exp
// is left for the server to judge.
func (c claims) expired(now time.Time) bool {
	return c.Exp != 0 && now.After(time.Unix(c.Exp, 0))
}
