package cli

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Chat is `chat [--continue] [--conversation N]`: a conversation at the
// terminal. A reply prints as it is written; Ctrl-C stops it (on the
// server, through the stop route), and a second Ctrl-C, or Ctrl-D, leaves.
// Ctrl-C also ends a list or a check that waits on the server, which may
// take 30 seconds at most; the session goes on.
// A call that waits for approval is asked about, and the turn continues
// once it is decided.
func Chat(ctx context.Context, args []string, env Env) error {
	fs := flag.NewFlagSet("chat", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	cont := fs.Bool("continue", false, "reopen the most recently active conversation")
	conversation := fs.Int64("conversation", 0, "open conversation `N`")
	if err := fs.Parse(args); err != nil {
		return err
	}
	c, err := env.client()
	if err != nil {
		return err
	}
	s := newSession(env, c, *conversation)
	if *cont {
		var list []Conversation
		err := s.call(ctx, func(ctx context.Context) (err error) {
			list, _, err = c.Conversations(ctx, 1)
			return err
		})
		if err != nil && !errors.Is(err, errInterrupted) {
			return env.explain(c, err)
		}
		s.report(err)
		if len(list) > 0 {
			s.conv = list[0].ID
			s.out.line(fmt.Sprintf("Conversation %d: %s", list[0].ID, Line(list[0].Title)))
		}
	}
	s.out.line(fmt.Sprintf("taskchat at %s as %s. /help lists the commands; Ctrl-D leaves.", Line(c.URL), Line(c.User)))
	s.report(s.askWaiting(ctx))
	return s.loop(ctx)
}

// askWaiting asks about the calls of the open conversation that wait for
// approval, such as those a `run` left.
func (s *session) askWaiting(ctx context.Context) error {
	if s.conv == 0 {
		return nil
	}
	var waiting []Approval
	err := s.call(ctx, func(ctx context.Context) (err error) {
		waiting, err = s.c.Waiting(ctx, s.conv)
		return err
	})
	if err != nil {
		return err
	}
	return s.decide(ctx, waiting)
}

// session is one run of chat.
type session struct {
	env   Env
	c     *Client
	conv  int64 // the open conversation; 0 until a new one's first reply
	out   *printer
	lines <-chan string // what the person types, a line at a time; closed at Ctrl-D
	wait  time.Duration // how long a request other than a turn may take
	// startWait is how long a Ctrl-C waits for a turn's start event, to
	// stop the turn, before it hangs up.
	startWait time.Duration
}

func newSession(env Env, c *Client, conversation int64) *session {
	return &session{env: env, c: c, conv: conversation, out: &printer{w: env.Stdout, col0: true},
		lines: readLines(env.Stdin), wait: 30 * time.Second, startWait: 5 * time.Second}
}

var (
	// errLeave ends a session without an error to report.
	errLeave = errors.New("leave")
	// errInterrupted is a request that a Ctrl-C ended; the session goes on.
	errInterrupted = errors.New("interrupted")
)

// report says what became of a command that did not go as asked.
func (s *session) report(err error) {
	switch {
	case err == nil:
	case errors.Is(err, errInterrupted):
		s.out.line("(interrupted)")
	default:
		s.out.line("error: " + s.env.explain(s.c, err).Error())
	}
}

func (s *session) loop(ctx context.Context) error {
	interrupted := false // the last thing the person did was a Ctrl-C
	for {
		s.out.prompt("> ")
		select {
		case line, ok := <-s.lines:
			if !ok {
				s.out.line("")
				return nil
			}
			interrupted = false
			err := s.handle(ctx, strings.TrimSpace(line))
			if errors.Is(err, errLeave) {
				return nil
			}
			s.report(err)
		case <-s.env.Interrupts:
			if interrupted {
				s.out.line("")
				return nil
			}
			interrupted = true
			s.out.line("\n(Ctrl-C again or Ctrl-D to leave)")
		case <-ctx.Done():
			s.out.line("")
			return nil
		}
	}
}

func (s *session) handle(ctx context.Context, line string) error {
	switch cmd, arg, _ := strings.Cut(line, " "); cmd {
	case "":
		return nil
	case "/help":
		s.out.line(help)
		return nil
	case "/quit", "/exit":
		return errLeave
	case "/new":
		s.conv = 0
		s.out.line("(your next message starts a new conversation)")
		return nil
	case "/list":
		return s.list(ctx)
	case "/open":
		return s.open(ctx, strings.TrimSpace(arg))
	case "/tasks":
		return s.tasks(ctx)
	}
	if strings.HasPrefix(line, "/") && !strings.Contains(strings.Fields(line)[0][1:], "/") {
		s.out.line(fmt.Sprintf("unknown command %s; /help lists them", Line(strings.Fields(line)[0])))
		return nil
	}
	return s.turn(ctx, func(ctx context.Context, on func(Event)) (*Answer, error) {
		return s.c.Chat(ctx, s.conv, line, on)
	})
}

const help = `/new        start a new conversation with the next message
/list       your conversations, most recent first
/open N     continue conversation N
/tasks      your tasks
/help       this list
Ctrl-C stops a reply, or a command that waits; Ctrl-C twice, Ctrl-D or /quit leaves.`

// turn runs a turn (a message, or a decision that continues one) and shows
// it as it streams. Ctrl-C stops it on the server, which ends its stream
// with what it had written; a second one leaves at once. A Ctrl-C before
// the turn's start event waits for it, since only a started turn can be
// stopped (and a new conversation's is known only then); a server that
// says nothing for startWait is hung up on instead. Either way the session
// goes on.
func (s *session) turn(ctx context.Context, start func(context.Context, func(Event)) (*Answer, error)) error {
	ctx, hangUp := context.WithCancel(ctx)
	defer hangUp()
	var conv atomic.Int64
	started := make(chan struct{})
	markStarted := sync.OnceFunc(func() { close(started) }) // a stream may repeat it
	type result struct {
		answer *Answer
		err    error
	}
	done := make(chan result, 1)
	go func() {
		a, err := start(ctx, func(e Event) {
			if e.Name == "start" {
				conv.Store(e.ConversationID)
				markStarted()
			}
			s.show(e)
		})
		done <- result{a, err}
	}()
	var (
		stopping    bool
		toStop      <-chan struct{} // started, while a Ctrl-C waits for it
		giveUp      <-chan time.Time
		hungUpEarly bool
	)
	for {
		select {
		case r := <-done:
			if r.err != nil && hungUpEarly {
				s.out.line("(hung up: the server had not started the reply)")
				return nil
			}
			if r.err != nil {
				s.out.endLine()
				return r.err
			}
			return s.finish(ctx, r.answer)
		case <-s.env.Interrupts:
			if stopping {
				// A second Ctrl-C: leave; the turn runs on without us.
				hangUp()
				<-done
				s.out.line("")
				return errLeave
			}
			stopping = true
			toStop = started
			giveUp = time.After(s.startWait)
		case <-toStop:
			toStop, giveUp = nil, nil
			go s.stop(ctx, conv.Load())
		case <-giveUp:
			toStop, giveUp = nil, nil
			hungUpEarly = true
			hangUp()
		}
	}
}

// stop asks the server to stop the conversation's running turn; its
// stream then ends with a done event saying so.
func (s *session) stop(ctx context.Context, conv int64) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := s.c.Stop(ctx, conv); err != nil && ctx.Err() == nil {
		s.out.line("error: the reply could not be stopped: " + err.Error())
	}
}

// show prints one event of a turn as it comes.
func (s *session) show(e Event) {
	switch e.Name {
	case "delta":
		s.out.text(e.Text)
	case "tool_call":
		s.out.line("  " + toolLine(e.Tool, e.Arguments))
	case "tool_result":
		if e.IsError {
			s.out.line("  " + toolError(e.Tool, e.Result))
		}
	}
}

// finish ends a turn's display, and asks about the calls that wait for
// approval; the turn continues once the last is decided.
func (s *session) finish(ctx context.Context, a *Answer) error {
	s.conv = a.ConversationID
	if a.Stopped {
		s.out.line("(stopped)")
	} else {
		s.out.endLine()
	}
	return s.decide(ctx, a.Approvals)
}

// decide asks about each approval that waits; the turn continues once the
// last is decided.
func (s *session) decide(ctx context.Context, approvals []Approval) error {
	for _, ap := range approvals {
		if ap.State != "pending" {
			continue
		}
		approved, ok := s.ask(Line(ap.Summary) + "? [y/N] ")
		if !ok {
			s.out.line("(left undecided; your next message sets it aside)")
			return nil
		}
		var next *Answer
		err := s.turn(ctx, func(ctx context.Context, on func(Event)) (*Answer, error) {
			var err error
			next, err = s.c.Decide(ctx, ap.ID, approved, on)
			return next, err
		})
		// A decision that leaves others of its turn waiting answers no
		// turn: ask about the next one.
		if err != nil || next != nil {
			return err
		}
	}
	return nil
}

// ask asks a yes-or-no question; not ok when the person pressed Ctrl-C or
// Ctrl-D instead of answering.
func (s *session) ask(question string) (yes, ok bool) {
	s.out.prompt(question)
	select {
	case line, open := <-s.lines:
		if !open {
			return false, false
		}
		answer := strings.ToLower(strings.TrimSpace(line))
		return answer == "y" || answer == "yes", true
	case <-s.env.Interrupts:
		s.out.line("")
		return false, false
	}
}

// readLines reads what the person types, a line at a time, until EOF
// (Ctrl-D on a terminal).
func readLines(r io.Reader) <-chan string {
	lines := make(chan string)
	go func() {
		defer close(lines)
		if r == nil {
			return
		}
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 0, 4096), maxPrompt)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	return lines
}
