package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"
)

// maxPrompt bounds a prompt read from stdin: the API takes a message of at
// most 4,000 characters in a body of 64 KiB.
const maxPrompt = 64 << 10

// Run is `run [--json] [--conversation N] PROMPT`: one turn, its reply
// printed. The reply goes to stdout, alone: the tool calls and anything
// else go to stderr, and a turn that fails prints its reason there and
// returns an error. On a terminal the reply prints as it is written;
// elsewhere once the turn is done, so that a script reading stdout gets
// nothing from a turn that failed half-way.
func Run(ctx context.Context, args []string, env Env) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	asJSON := fs.Bool("json", false, "print the chat answer as the API gives it")
	conversation := fs.Int64("conversation", 0, "continue conversation `N` (default: start a new one)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	prompt, err := readPrompt(ctx, fs.Args(), env.Stdin)
	if err != nil {
		return err
	}
	c, err := env.client()
	if err != nil {
		return err
	}
	if *asJSON {
		body, err := c.ChatJSON(ctx, *conversation, prompt)
		if err != nil {
			return env.explain(c, err)
		}
		_, err = env.Stdout.Write(append(JSON(body), '\n'))
		return err
	}
	return runStreamed(ctx, c, *conversation, prompt, env)
}

func runStreamed(ctx context.Context, c *Client, conversation int64, prompt string, env Env) error {
	live := isTerminal(env.Stdout)
	p := &printer{w: env.Stdout, col0: true}
	calls := &printer{w: env.Stderr, col0: true}
	answer, err := c.Chat(ctx, conversation, prompt, func(e Event) {
		switch e.Name {
		case "start":
			conversation = e.ConversationID
		case "delta":
			if live {
				p.text(e.Text)
			}
		case "tool_call":
			p.endLine() // the call starts on its own line, on a terminal
			calls.line(toolLine(e.Tool, e.Arguments))
		case "tool_result":
			if e.IsError {
				p.endLine()
				calls.line(toolError(e.Tool, e.Result))
			}
		}
	})
	if err != nil {
		p.endLine()
		if ctx.Err() != nil && conversation != 0 {
			// The turn runs on without its client: Ctrl-C means stop it.
			stopCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if c.Stop(stopCtx, conversation) == nil {
				return errors.New("interrupted: the turn was stopped")
			}
		}
		if ctx.Err() != nil {
			return errors.New("interrupted")
		}
		return env.explain(c, err)
	}
	if !live {
		p.text(answer.Response)
	}
	p.endLine()
	for _, a := range answer.Approvals {
		if a.State == "pending" {
			fmt.Fprintf(env.Stderr, "waiting for your approval: %s (approval %d; decide it in `%s chat --continue`)\n",
				Line(a.Summary), a.ID, env.Name)
		}
	}
	if answer.Interrupted {
		return fmt.Errorf("the reply of conversation %d was cut short", answer.ConversationID)
	}
	return nil
}

// readPrompt is the prompt from the arguments, or else from stdin.
func readPrompt(ctx context.Context, args []string, stdin io.Reader) (string, error) {
	prompt := strings.Join(args, " ")
	if prompt == "" && stdin != nil {
		b, err := readInput(ctx, stdin, maxPrompt+1)
		if err != nil {
			return "", err
		}
		if len(b) > maxPrompt {
			return "", fmt.Errorf("the prompt on stdin is longer than %d KiB", maxPrompt>>10)
		}
		prompt = string(b)
	}
	prompt = strings.TrimSpace(prompt)
	if prompt == "" {
		return "", errors.New(`run needs a prompt: run "add a task to buy milk", or the prompt on stdin`)
	}
	return prompt, nil
}

// readInput reads r whole, up to limit bytes, unless ctx ends first: main
// takes Ctrl-C from the terminal to cancel ctx, so a command that waits
// for what a person types must end with it rather than read on.
func readInput(ctx context.Context, r io.Reader, limit int64) ([]byte, error) {
	type read struct {
		b   []byte
		err error
	}
	done := make(chan read, 1)
	go func() {
		b, err := io.ReadAll(io.LimitReader(r, limit))
		done <- read{b, err}
	}()
	select {
	case got := <-done:
		return got.b, got.err
	case <-ctx.Done():
		return nil, errors.New("interrupted")
	}
}
