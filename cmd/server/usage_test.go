package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestHelp(t *testing.T) {
	name := filepath.Base(os.Args[0])
	runWith := func(t *testing.T, args ...string) (stdout, stderr string, err error) {
		t.Helper()
		var out, errOut bytes.Buffer
		err = run(context.Background(), args, env(nil), &out, &errOut)
		return out.String(), errOut.String(), err
	}

	for _, arg := range []string{"help", "-h", "--help", "dev -h", "serve --help"} {
		t.Run(arg+" prints one usage, aligned, under the binary's name", func(t *testing.T) {
			out, errOut, err := runWith(t, strings.Fields(arg)...)
			if err != nil || errOut != "" {
				t.Fatalf("err = %v, stderr %q", err, errOut)
			}
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			if lines[0] != "usage:" || strings.Count(out, "usage:") != 1 || len(lines) != len(commands)+1 {
				t.Fatalf("the usage is not one usage of %d commands:\n%s", len(commands), out)
			}
			column := -1
			for i, line := range lines[1:] {
				prefix := "  " + name + " " + commands[i].synopsis
				if !strings.HasPrefix(line, prefix) {
					t.Errorf("line %q does not start with %q", line, prefix)
					continue
				}
				at := strings.Index(line, commands[i].does)
				if at < len(prefix)+2 || strings.TrimSpace(line[len(prefix):at]) != "" {
					t.Errorf("line %q: the description does not follow its command", line)
				}
				if column == -1 {
					column = at
				} else if at != column {
					t.Errorf("line %q: the description starts at column %d, the first at %d", line, at, column)
				}
			}
		})
	}

	for _, cmd := range []string{"token", "healthcheck"} {
		t.Run(cmd+" -h prints its own line of the usage and its flags, once, and succeeds", func(t *testing.T) {
			out, errOut, err := runWith(t, cmd, "-h")
			if err != nil || out != "" {
				t.Fatalf("err = %v, stdout %q", err, out)
			}
			if !strings.HasPrefix(errOut, "usage: "+name+" "+synopsis(cmd)+"\n  -") || strings.Count(errOut, "sage") != 1 {
				t.Errorf("%s -h printed:\n%s", cmd, errOut)
			}
		})
	}

	t.Run("an unknown command is refused with the usage", func(t *testing.T) {
		_, _, err := runWith(t, "bogus")
		if err == nil || !strings.HasPrefix(err.Error(), `unknown command "bogus"`+"\nusage:\n  "+name+" ") {
			t.Errorf("err = %v", err)
		}
	})

	t.Run("token without a user says how to call it", func(t *testing.T) {
		_, _, err := runWith(t, "token")
		if err == nil || err.Error() != "token needs exactly one USER_ID: "+name+" token [-ttl 24h] USER_ID" {
			t.Errorf("err = %v", err)
		}
	})
}
