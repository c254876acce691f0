package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
)

// call runs a request that is not a turn (a list, a check) for as long as
// wait, or until a Ctrl-C, so that a server that does not answer leaves the
// person at the prompt rather than stuck.
func (s *session) call(ctx context.Context, request func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, s.wait)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- request(ctx) }()
	select {
	case err := <-done:
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("the server at %s did not answer within %v", Line(s.c.URL), s.wait)
		}
		return err
	case <-s.env.Interrupts:
		cancel()
		<-done
		return errInterrupted
	}
}

// list is /list.
func (s *session) list(ctx context.Context) error {
	var list []Conversation
	var more bool
	err := s.call(ctx, func(ctx context.Context) (err error) {
		list, more, err = s.c.Conversations(ctx, 20)
		return err
	})
	if err != nil {
		return err
	}
	if len(list) == 0 {
		s.out.line("(no conversations yet)")
	}
	for _, cv := range list {
		mark := " "
		if cv.ID == s.conv {
			mark = "*"
		}
		s.out.line(fmt.Sprintf("%s %4d  %s  (%s)", mark, cv.ID, Line(cv.Title), cv.UpdatedAt.Local().Format("2006-01-02 15:04")))
	}
	if more {
		s.out.line("  … and older ones")
	}
	return nil
}

// open is /open N.
func (s *session) open(ctx context.Context, arg string) error {
	id, err := strconv.ParseInt(arg, 10, 64)
	if err != nil || id < 1 {
		s.out.line("/open takes a conversation's number, as /list shows it")
		return nil
	}
	// Asking for one message says whether the conversation is the user's.
	err = s.call(ctx, func(ctx context.Context) error {
		return s.c.get(ctx, "/conversations/"+strconv.FormatInt(id, 10)+"/messages?limit=1", &struct{}{})
	})
	if err != nil {
		return err
	}
	s.conv = id
	s.out.line(fmt.Sprintf("(conversation %d: your next message continues it)", id))
	return s.askWaiting(ctx)
}

// tasks is /tasks.
func (s *session) tasks(ctx context.Context) error {
	var list []Task
	var more bool
	err := s.call(ctx, func(ctx context.Context) (err error) {
		list, more, err = s.c.Tasks(ctx, 200)
		return err
	})
	if err != nil {
		return err
	}
	if len(list) == 0 {
		s.out.line("(no tasks)")
	}
	for _, t := range list {
		box := "[ ]"
		if t.Completed {
			box = "[x]"
		}
		line := fmt.Sprintf("%s #%d %s", box, t.ID, Line(t.Title))
		if t.Due != nil {
			if t.Overdue {
				line += " (overdue: " + Line(*t.Due) + ")"
			} else {
				line += " (due " + Line(*t.Due) + ")"
			}
		}
		if t.Priority != nil {
			line += " [" + Line(*t.Priority) + "]"
		}
		s.out.line(line)
	}
	if more {
		s.out.line("… and more (the first 200 are shown)")
	}
	return nil
}
