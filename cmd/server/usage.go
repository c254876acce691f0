package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
)

// command is one line of the binary's usage: what follows its name, and
// what the command does.
type command struct {
	synopsis, does string
}

// commands are the binary's commands, in the order its usage lists them.
var commands = []command{
	{"[serve]", "run the HTTP service (configuration from the environment)"},
	{"dev", "run it on this machine: local PostgreSQL, a kept dev secret, DEV_LOGIN on"},
	{"token [-ttl 24h] USER_ID", "print a development token for USER_ID, signed with JWT_SECRET (else dev's kept secret)"},
	{"healthcheck [-url URL]", "exit 0 when the service's /healthz answers (for Docker)"},
	{"login [--url URL] (--user NAME | --token TOKEN)", "keep the server and a token in the config directory (the token may come on stdin; see docs/terminal.md)"},
	{"run [--json] [--conversation N] PROMPT", "one turn: print its reply (PROMPT may come on stdin)"},
	{"chat [--continue] [--conversation N]", "a conversation in the terminal; Ctrl-C stops a reply, /help lists its commands"},
	{"help", "print this usage"},
}

// programName is the name the binary runs under (taskchat in the image,
// server under go run): its usage and its messages say that name, which
// is the one a person types.
func programName() string {
	return filepath.Base(os.Args[0])
}

// usage is the binary's usage under name, one command a line, their
// descriptions aligned in one column.
func usage(name string) string {
	var b strings.Builder
	b.WriteString("usage:\n")
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, c := range commands {
		fmt.Fprintf(w, "  %s %s\t%s\n", name, c.synopsis, c.does)
	}
	w.Flush()
	return strings.TrimSuffix(b.String(), "\n")
}

// synopsis is what follows the binary's name in the usage of the command
// name.
func synopsis(name string) string {
	for _, c := range commands {
		if c.synopsis == name || strings.HasPrefix(c.synopsis, name+" ") {
			return c.synopsis
		}
	}
	return name
}

// newFlags is the flag set of the command name: its -h prints the
// command's line of the usage and its flags, once (not the flag package's
// own usage beside the binary's), and Parse then reports flag.ErrHelp,
// which the command answers with success.
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: %s %s\n", programName(), synopsis(name))
		fs.PrintDefaults()
	}
	return fs
}

// helpAsked reports whether err is a flag set's answer to -h.
func helpAsked(err error) bool {
	return errors.Is(err, flag.ErrHelp)
}
