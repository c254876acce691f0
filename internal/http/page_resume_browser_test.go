package http

// The chat page and a turn that outlives its connection, tried in a real
// browser as page_browser_test.go tries the rest of the page: a reload in
// the middle of a reply, a second tab on the same conversation, and Stop,
// which stops the turn on the server and not only the page's connection.
// The model is held halfway through its reply until the test releases it,
// so every step waits on what the page shows, never on time.

import (
	"context"
	"crypto/rand"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/chromedp"

	"github.com/taskchat/taskchat/internal/agent"
)

// heldModel writes the first part of a reply, then holds it until the test
// releases it (or the turn's context ends, which it records), then writes
// the rest. The calls before that one get the replies of before, the calls
// after it after, written at once.
type heldModel struct {
	before        []string
	first, second string
	after         string

	calls       atomic.Int32
	release     chan struct{}
	releaseOnce sync.Once
	cancelled   chan struct{} // closed when a held reply's turn was cancelled
	cancelOnce  sync.Once
}

func newHeldModel(first, second string) *heldModel {
	return &heldModel{first: first, second: second, release: make(chan struct{}), cancelled: make(chan struct{})}
}

func (m *heldModel) Name() string { return "held" }

func (m *heldModel) Stream(ctx context.Context, _ agent.Request, onText func(string)) (agent.Response, error) {
	quick := func(text string) (agent.Response, error) {
		onText(text)
		return agent.Response{Text: text}, nil
	}
	switch n := int(m.calls.Add(1)); {
	case n <= len(m.before):
		return quick(m.before[n-1])
	case n > len(m.before)+1:
		return quick(m.after)
	}
	onText(m.first)
	select {
	case <-m.release:
	case <-ctx.Done():
		m.cancelOnce.Do(func() { close(m.cancelled) })
		return agent.Response{}, ctx.Err()
	}
	onText(m.second)
	return agent.Response{Text: m.first + m.second}, nil
}

// Release lets the held reply finish.
func (m *heldModel) Release() { m.releaseOnce.Do(func() { close(m.release) }) }

// mustServerHolding starts a server on m, whose held reply is released
// when the test ends, so that no turn outlives it.
func mustServerHolding(t *testing.T, m *heldModel) *testServer {
	t.Helper()
	s := mustServer(t, m)
	t.Cleanup(func() {
		m.Release() // before the server's cleanup
		if t.Failed() {
			t.Logf("the server logged:\n%s", s.logs)
		}
	})
	return s
}

// Expressions that read the thread.
const (
	msgCount    = `document.querySelectorAll('#thread .msg').length`
	lastUserTxt = `([...document.querySelectorAll('#thread .msg.user .text')].at(-1)?.textContent ?? '')`
	threadTxt   = `document.getElementById('thread').textContent`
)

// occurrences is an expression counting s in the thread's text.
func occurrences(s string) string {
	return threadTxt + `.split(` + jsString(s) + `).length - 1`
}

// storedMessages returns the conversation's stored messages, by the API.
func storedMessages(t *testing.T, s *testServer, user, conv string) []map[string]any {
	t.Helper()
	r := s.do(t, call{method: "GET", path: "/api/" + user + "/conversations/" + conv + "/messages", token: mustToken(t, user)})
	if r.status != 200 {
		t.Fatalf("the messages answer %d %s", r.status, r.body)
	}
	var out []map[string]any
	for _, m := range r.json(t)["messages"].([]any) {
		out = append(out, m.(map[string]any))
	}
	return out
}

// holdStreams holds the page's requests for a conversation's stream in
// the browser, before they are sent: each waits, named on the returned
// channel, until the test lets it go with fetch.ContinueRequest.
func holdStreams(t *testing.T, b *tab) <-chan fetch.RequestID {
	t.Helper()
	held := make(chan fetch.RequestID, 16)
	paused := chromedp.Events(b.ctx, fetch.RequestPaused)
	go func() {
		for ev, err := range paused {
			if err != nil {
				return
			}
			held <- ev.RequestID
		}
	}()
	if _, err := chromedp.Call(b.ctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*/stream"}}}); err != nil {
		t.Fatal(err)
	}
	return held
}

// waitClosed waits for ch to close, failing the test with what otherwise.
func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(browserWait):
		t.Fatal(what)
	}
}

func TestPageResumesTurns(t *testing.T) {
	t.Parallel()
	browser := mustBrowser(t)
	run := strings.ToLower(rand.Text()[:8])
	user := func(name string) string { return "resume-" + name + "-" + run }
	const first, second = "Once upon a time, ", "the end."

	t.Run("a reload in the middle of a reply shows the reply going on, once", func(t *testing.T) {
		t.Parallel()
		m := newHeldModel(first, second)
		s := mustServerHolding(t, m)
		b := openTab(t, browser, s.URL+"/", 1280, 800)
		b.signInWithToken(user("ana"))
		b.send("Tell me a story")
		b.waitJS("the start of the reply", lastReplyTxt+` === `+jsString(first))

		// The page's connection goes with the reload; the turn does not.
		b.do(chromedp.Reload())
		b.waitJS("the reply going on after the reload", msgCount+` === 2 && `+lastUserTxt+` === 'Tell me a story' && `+
			lastReplyTxt+` === `+jsString(first))
		b.find("button", "Stop")
		if !b.absent("button", "Send") {
			t.Error("Send is offered while the reply is still being written")
		}

		m.Release()
		b.waitJS("the whole reply, once", lastReplyTxt+` === `+jsString(first+second)+` && `+msgCount+` === 2 && `+
			occurrences("Once upon a time")+` === 1 && `+occurrences("Tell me a story")+` === 1`)
		b.find("button", "Send")
		if n := m.calls.Load(); n != 1 {
			t.Errorf("the model was called %d times, want once", n)
		}
		conv := strings.TrimPrefix(js[string](b, `location.hash`), "#c=")
		msgs := storedMessages(t, s, user("ana"), conv)
		if last := msgs[len(msgs)-1]; len(msgs) != 2 || last["content"] != first+second || last["interrupted"] != false {
			t.Errorf("the conversation stored %v, want the question and the whole reply, not interrupted", msgs)
		}
	})

	t.Run("a second tab on the conversation shows the other tab's reply live", func(t *testing.T) {
		t.Parallel()
		m := newHeldModel(first, second)
		m.before = []string{"Hello."}
		s := mustServerHolding(t, m)
		one := openTab(t, browser, s.URL+"/", 1280, 800)
		one.signInWithToken(user("bo"))
		one.send("Hi")
		one.waitJS("the first reply", lastReplyTxt+` === 'Hello.'`)
		conv := strings.TrimPrefix(js[string](one, `location.hash`), "#c=")

		two := openTab(t, browser, s.URL+"/#c="+conv, 1280, 800)
		two.signInWithToken(user("bo"))
		two.waitJS("the conversation in the second tab", msgCount+` === 2 && `+lastReplyTxt+` === 'Hello.'`)
		if v := js[string](two, `document.visibilityState`); v != "visible" {
			t.Fatalf("the second tab is %s: it only looks for turns while visible", v)
		}

		one.send("Tell me a story")
		two.waitJS("the first tab's message and reply, live", msgCount+` === 4 && `+lastUserTxt+` === 'Tell me a story' && `+
			lastReplyTxt+` === `+jsString(first))
		two.find("button", "Stop")

		m.Release()
		two.waitJS("the whole reply in the second tab", lastReplyTxt+` === `+jsString(first+second)+` && `+msgCount+` === 4 && `+
			occurrences("Once upon a time")+` === 1`)
		two.find("button", "Send")
		one.waitJS("the whole reply in the first tab", lastReplyTxt+` === `+jsString(first+second)+` && `+msgCount+` === 4`)
		one.find("button", "Send")
	})

	t.Run("Stop stops the turn on the server, and the next message is accepted at once", func(t *testing.T) {
		t.Parallel()
		m := newHeldModel("Working on it", " and never done.")
		m.after = "Here you are."
		s := mustServerHolding(t, m)
		b := openTab(t, browser, s.URL+"/", 1280, 800)
		stops := countRequests(b, "POST", "/stop")
		b.signInWithToken(user("cid"))
		b.send("Take your time")
		b.waitJS("the start of the reply", lastReplyTxt+` === 'Working on it'`)

		b.click("button", "Stop")
		waitClosed(t, m.cancelled, "the model's turn went on after Stop: the page only left its stream")
		b.waitJS("the reply marked stopped", lastReply+`.classList.contains('interrupted') && `+
			lastReply+`.querySelector('.note')?.textContent.startsWith('Interrupted: this reply was stopped.') && `+lastReplyTxt+` === 'Working on it'`)
		b.find("button", "Send")
		if n := stops.Load(); n != 1 {
			t.Errorf("the page asked the stop route %d times, want once", n)
		}
		conv := strings.TrimPrefix(js[string](b, `location.hash`), "#c=")
		msgs := storedMessages(t, s, user("cid"), conv)
		if last := msgs[len(msgs)-1]; last["role"] != "assistant" || last["content"] != "Working on it" || last["interrupted"] != true {
			t.Errorf("the conversation stored %v last, want the reply as written, interrupted", last)
		}

		// The conversation is free: the next message is answered, not refused.
		b.send("And now?")
		b.waitJS("the next reply", lastReplyTxt+` === 'Here you are.' && `+errorText+` === ''`)
		if n := m.calls.Load(); n != 2 {
			t.Errorf("the model was called %d times, want twice", n)
		}
	})

	t.Run("after a reload, Stop stops the turn the page follows", func(t *testing.T) {
		t.Parallel()
		m := newHeldModel(first, second)
		s := mustServerHolding(t, m)
		b := openTab(t, browser, s.URL+"/", 1280, 800)
		b.signInWithToken(user("dee"))
		b.send("Tell me a story")
		b.waitJS("the start of the reply", lastReplyTxt+` === `+jsString(first))
		b.do(chromedp.Reload())
		b.waitJS("the reply going on after the reload", lastReplyTxt+` === `+jsString(first))

		b.click("button", "Stop")
		waitClosed(t, m.cancelled, "the model's turn went on after Stop")
		b.waitJS("the reply marked stopped", lastReply+`.querySelector('.note')?.textContent.startsWith('Interrupted: this reply was stopped.') && `+
			lastReplyTxt+` === `+jsString(first)+` && `+msgCount+` === 2`)
		b.find("button", "Send")
	})

	t.Run("a turn that ends between loading the thread and asking for its stream is shown whole", func(t *testing.T) {
		t.Parallel()
		m := newHeldModel(first, second)
		s := mustServerHolding(t, m)
		b := openTab(t, browser, s.URL+"/", 1280, 800)
		b.signInWithToken(user("eli"))
		b.send("Tell me a story")
		b.waitJS("the start of the reply", lastReplyTxt+` === `+jsString(first))
		conv := strings.TrimPrefix(js[string](b, `location.hash`), "#c=")

		// After the reload the page has loaded the thread, the question
		// alone, and asks for the turn's stream: the request waits while
		// the turn ends, so that the answer is 204.
		held := holdStreams(t, b)
		b.do(chromedp.Reload())
		var asked fetch.RequestID
		select {
		case asked = <-held:
		case <-time.After(browserWait):
			t.Fatal("the reloaded page did not ask for the conversation's stream")
		}
		b.waitJS("the thread loaded before the turn ended", msgCount+` === 1 && `+lastUserTxt+` === 'Tell me a story'`)
		m.Release()
		tok := mustToken(t, user("eli"))
		waitFor(t, "the turn to end", func() bool {
			return s.do(t, call{method: "GET", path: "/api/" + user("eli") + "/conversations/" + conv + "/stream", token: tok}).status == 204
		})
		if _, err := chromedp.Call(b.ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: asked}); err != nil {
			t.Fatal(err)
		}
		if _, err := chromedp.Call(b.ctx, fetch.Disable, cdp.Empty{}); err != nil {
			t.Fatal(err)
		}
		b.waitJS("the whole reply, loaded again", msgCount+` === 2 && `+lastReplyTxt+` === `+jsString(first+second))
		b.find("button", "Send")
	})
}
