package http

// The page as a newcomer meets it, in a real browser: a model's Markdown
// shown as formatted text (and never as HTML), a tool's change in the task
// panel while the turn still runs, a page load that asks nothing that
// fails, and a second tab that is signed in.

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/agent/agenttest"
	"github.com/taskchat/taskchat/internal/agent/offline"
)

// markdownReply is a reply as a real model writes it, with a trap in each
// place a renderer that inserts HTML would fall in.
const markdownReply = "Here is your list:\n" +
	"- [ ] #2 Pay bills\n" +
	"- [x] #1 Buy **milk**\n" +
	"\n" +
	"Use `list_tasks` or *ask* me. See [the docs](https://example.com/docs?a=1&b=2) or [this](javascript:alert(1)).\n" +
	"<img src=x onerror=alert(1)>\n" +
	"\n" +
	"```sh\n" +
	"echo \"<b>hi</b>\"\n" +
	"```\n"

// markdownShown is an expression that is true when the last reply shows
// markdownReply as formatted text.
const markdownShown = `(() => {
	const text = ` + lastReply + `?.querySelector('.text');
	if (!text) return false;
	const items = [...text.querySelectorAll('ul > li.md-task')];
	const boxes = items.map(li => li.querySelector('input[type=checkbox]'));
	const links = [...text.querySelectorAll('a')];
	return text.querySelector('p')?.textContent === 'Here is your list:' &&
		items.length === 2 && items[0].textContent === '#2 Pay bills' && items[1].textContent === '#1 Buy milk' &&
		boxes.every(b => b && b.disabled) && !boxes[0].checked && boxes[1].checked &&
		items[1].querySelector('strong')?.textContent === 'milk' &&
		text.querySelector('p > code')?.textContent === 'list_tasks' &&
		text.querySelector('em')?.textContent === 'ask' &&
		links.length === 1 && links[0].href === 'https://example.com/docs?a=1&b=2' && links[0].textContent === 'the docs' &&
		links[0].target === '_blank' && links[0].rel === 'noopener noreferrer' &&
		text.textContent.includes('[this](javascript:alert(1))') &&
		text.textContent.includes('<img src=x onerror=alert(1)>') &&
		text.querySelector('pre > code')?.textContent === 'echo "<b>hi</b>"';
})()`

// nothingFromText is an expression counting the elements that text could
// have made, had it been inserted as HTML.
const nothingFromText = `document.querySelectorAll('#app img, #app script, #app b, #app [onerror], #app a[href^="javascript"]').length === 0`

func TestPageNewcomerInBrowser(t *testing.T) {
	t.Parallel()
	browser := mustBrowser(t)
	run := strings.ToLower(rand.Text()[:8])
	user := func(name string) string { return "newcomer-" + name + "-" + run }
	devLogin := func(c *serverConfig) { c.api.DevLogin = DevLogin{Enabled: true, TTL: time.Hour} }

	t.Run("a reply's Markdown is shown formatted, streamed and stored, and nothing in it runs", func(t *testing.T) {
		t.Parallel()
		model := agenttest.ModelFunc(func(_ context.Context, _ agent.Request, onText func(string)) (agent.Response, error) {
			// In small pieces, as a model streams: a half-written fence or
			// link is drawn as it stands, and again as it ends.
			for rest := markdownReply; rest != ""; {
				n := min(len(rest), 7)
				onText(rest[:n])
				rest = rest[n:]
			}
			return agent.Response{Text: markdownReply}, nil
		})
		s := mustServer(t, model)
		b := openTab(t, browser, s.URL+"/", 1280, 800)
		b.signInWithToken(user("md"))
		b.send("What is on my list?")
		b.waitJS("the reply formatted", markdownShown)
		b.find("link", "the docs")
		if !b.absent("link", "this") {
			t.Error("the javascript: link is a link")
		}
		if !js[bool](b, nothingFromText) {
			t.Error("the reply's text made elements")
		}

		b.do(chromedp.Reload())
		b.waitJS("the stored reply formatted", markdownShown)
		if !js[bool](b, nothingFromText) {
			t.Error("the stored reply's text made elements")
		}
		b.do(chromedp.Sleep(200 * time.Millisecond)) // an onerror would have fired by now
	})

	t.Run("a tool's chip names what it touched, and the reply alone says what became of it", func(t *testing.T) {
		t.Parallel()
		s := mustServer(t, offline.New())
		b := openTab(t, browser, s.URL+"/", 1280, 800)
		b.signInWithToken(user("chip"))
		b.send("Add a task to buy groceries")
		b.waitJS("the reply", lastReplyTxt+`.match(/^Added task [0-9]+: Buy groceries[.]$/)`)
		chip := js[string](b, lastReply+`.querySelector('.tool.ok .tool-what').textContent`)
		reply := js[string](b, lastReplyTxt)
		if !strings.HasPrefix(chip, "#") || !strings.HasSuffix(chip, " Buy groceries") || strings.Contains(reply, chip) {
			t.Errorf("the chip says %q above the reply %q: want the task it touched, which the reply does not say the same way", chip, reply)
		}
	})

	t.Run("the task panel shows a tool's change while the turn still runs", func(t *testing.T) {
		t.Parallel()
		release := make(chan struct{})
		var once sync.Once
		t.Cleanup(func() { once.Do(func() { close(release) }) })
		var calls atomic.Int32
		model := agenttest.ModelFunc(func(ctx context.Context, _ agent.Request, onText func(string)) (agent.Response, error) {
			if calls.Add(1) == 1 {
				return agent.Response{ToolCalls: []agent.ToolCall{{ID: "call_1", Name: "add_task", Arguments: `{"title":"Buy milk"}`}}}, nil
			}
			select {
			case <-release:
			case <-ctx.Done():
				return agent.Response{}, ctx.Err()
			}
			onText("Added it.")
			return agent.Response{Text: "Added it."}, nil
		})
		s := mustServer(t, model)
		b := openTab(t, browser, s.URL+"/", 1280, 800)
		b.signInWithToken(user("panel"))
		b.send("Add a task to buy milk")
		b.waitJS("the task in the panel", taskTitles+`.join() === 'Buy milk'`)
		if b.absent("button", "Stop") || calls.Load() != 2 {
			t.Fatalf("the panel showed the task after the turn (Stop offered: %v, model calls: %d)", !b.absent("button", "Stop"), calls.Load())
		}
		once.Do(func() { close(release) })
		b.waitJS("the reply", lastReplyTxt+` === 'Added it.'`)
		b.find("button", "Send")
	})

	for _, dev := range []bool{true, false} {
		t.Run(fmt.Sprintf("loading the page and signing in asks nothing that fails (DEV_LOGIN %v)", dev), func(t *testing.T) {
			t.Parallel()
			var adjust []func(*serverConfig)
			name := user(fmt.Sprint("load-", dev))
			if dev {
				adjust = append(adjust, devLogin)
			}
			s := mustServer(t, offline.New(), adjust...)
			b := openTab(t, browser, "about:blank", 1280, 800)
			failed := failedRequests(b)
			devAsked := countRequests(b, "POST", "/auth/dev/token")
			b.do(chromedp.Navigate(s.URL + "/"))
			if dev {
				b.typeInto("User name", name)
				if n := devAsked.Load(); n != 0 {
					t.Errorf("the page asked the development login %d times before anyone signed in", n)
				}
				b.click("button", "Sign in")
				b.find("textbox", "Message")
			} else {
				b.find("textbox", "Token")
				if !b.absent("textbox", "User name") {
					t.Error("the page offers to sign in by name although DEV_LOGIN is off")
				}
				b.signInWithToken(name)
			}
			b.waitJS("the panels loaded", `!document.getElementById('tasks-empty').hidden && !document.getElementById('conversations-empty').hidden`)
			b.send("Show me all my tasks")
			b.waitJS("the reply", lastReplyTxt+` !== '' && !document.getElementById('send').hidden`)
			b.do(chromedp.Reload())
			b.waitJS("the thread after a reload", `document.querySelectorAll('#thread .msg').length === 2`)
			if got := failed(); len(got) > 0 {
				t.Errorf("requests failed:\n%s", strings.Join(got, "\n"))
			}
		})
	}

	t.Run("a second tab of the same browser is signed in, and signing out there signs out both", func(t *testing.T) {
		t.Parallel()
		s := mustServer(t, offline.New())
		one := openTab(t, browser, s.URL+"/", 1280, 800)
		one.signInWithToken(user("tabs"))
		one.send("Add a task to buy groceries")
		one.waitJS("the reply", lastReplyTxt+`.match(/^Added task [0-9]+: Buy groceries[.]$/)`)

		two := openTabBeside(t, one, s.URL+"/")
		two.find("textbox", "Message")
		two.waitJS("the user's name", `document.getElementById('who-name').textContent === `+jsString(user("tabs")))
		two.waitJS("the task", taskTitles+`.join() === 'Buy groceries'`)
		two.waitJS("the conversation", convTitles+`.join() === 'Add a task to buy groceries'`)

		two.click("button", "Sign out")
		two.find("textbox", "Token")
		one.find("textbox", "Token")
		one.waitJS("why", `document.getElementById('signin-error').textContent === 'You signed out in another tab.'`)
		if n := js[int](one, `document.querySelectorAll('#task-list .task, #thread .msg').length`); n != 0 {
			t.Errorf("the first tab still shows %d tasks and messages after signing out", n)
		}
	})
}

// failedRequests records the tab's requests that fail from now on: an
// answer of 400 or more, or no answer. A request the page itself cancels
// (a stream it leaves) is not a failure.
func failedRequests(b *tab) func() []string {
	var mu sync.Mutex
	urls := map[network.RequestID]string{}
	why := map[network.RequestID]string{}
	var order []network.RequestID
	fail := func(id network.RequestID, reason string) {
		mu.Lock()
		defer mu.Unlock()
		why[id] = reason
		order = append(order, id)
	}
	sent := chromedp.Events(b.ctx, network.RequestWillBeSent)
	answered := chromedp.Events(b.ctx, network.ResponseReceived)
	lost := chromedp.Events(b.ctx, network.LoadingFailed)
	go func() {
		for ev, err := range sent {
			if err != nil {
				return
			}
			mu.Lock()
			urls[ev.RequestID] = ev.Request.Method + " " + ev.Request.URL
			mu.Unlock()
		}
	}()
	go func() {
		for ev, err := range answered {
			if err != nil {
				return
			}
			if ev.Response.Status >= 400 {
				fail(ev.RequestID, fmt.Sprint(ev.Response.Status))
			}
		}
	}()
	go func() {
		for ev, err := range lost {
			if err != nil {
				return
			}
			if !ev.Canceled {
				fail(ev.RequestID, ev.ErrorText)
			}
		}
	}()
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		var failed []string
		for _, id := range order {
			failed = append(failed, urls[id]+": "+why[id])
		}
		return failed
	}
}
