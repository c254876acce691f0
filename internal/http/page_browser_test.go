package http

// The chat page, tried as a person tries it: in a real browser (Debian's
// chromium, driven by chromedp), against the real handler on PostgreSQL.
// Elements are found as a screen reader finds them, by role and accessible
// name, and clicked with the mouse at their centre. Every tab fails its test
// on a JavaScript exception, a Content-Security-Policy violation or any
// dialog.

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/agent/agenttest"
	"github.com/taskchat/taskchat/internal/agent/offline"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/tasks"
)

// browserWait bounds each wait for the page; the page itself answers in
// milliseconds.
const browserWait = 10 * time.Second

// mustBrowser starts one headless chromium for a test and its subtests.
// Without chromium the test fails, saying how to install it.
func mustBrowser(tb testing.TB) context.Context {
	tb.Helper()
	path := os.Getenv("CHROME_PATH")
	if path == "" {
		path = "/usr/bin/chromium"
	}
	if _, err := os.Stat(path); err != nil {
		tb.Fatalf("the page's tests need a browser at %s (%v): install Debian's chromium "+
			"(apt-get install -y chromium, as scripts/test does) or set CHROME_PATH to a Chrome or Chromium binary", path, err)
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(path), chromedp.UserDataDir(tb.TempDir()),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1280, 800))
	bctx, cancelBrowser := chromedp.NewContext(actx)
	if err := chromedp.Do(bctx); err != nil {
		cancelBrowser()
		cancelAlloc()
		tb.Fatalf("starting %s: %v", path, err)
	}
	tb.Cleanup(func() {
		cancelBrowser()
		cancelAlloc()
	})
	return bctx
}

// tab is one browser tab of a test, with what it noticed going wrong.
type tab struct {
	t   *testing.T
	ctx context.Context

	mu       sync.Mutex
	problems []string
	chatKeys []string // the Idempotency-Key of each chat request, in order
}

// openTab opens a tab at url, at a window width × height, in a browser
// profile of its own (its own localStorage: no other tab is signed in
// there).
func openTab(t *testing.T, browser context.Context, url string, width, height int64) *tab {
	t.Helper()
	return newTab(t, browser, url, width, height, chromedp.WithNewBrowserContext())
}

// openTabBeside opens a second tab at url in the profile of first, as a
// person does with Ctrl+T: they share localStorage.
func openTabBeside(t *testing.T, first *tab, url string) *tab {
	t.Helper()
	return newTab(t, first.ctx, url, 1280, 800, chromedp.WithExistingBrowserContext(chromedp.FromContext(first.ctx).BrowserContextID))
}

func newTab(t *testing.T, parent context.Context, url string, width, height int64, opts ...chromedp.ContextOption) *tab {
	t.Helper()
	ctx, cancel := chromedp.NewContext(parent, opts...)
	ctx, cancelTimeout := context.WithTimeout(ctx, time.Minute)
	t.Cleanup(func() {
		cancelTimeout()
		cancel()
	})
	b := &tab{t: t, ctx: ctx}
	if err := chromedp.Do(ctx); err != nil {
		t.Fatal(err)
	}
	b.watch()
	if _, err := chromedp.Call(ctx, cdplog.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	b.do(chromedp.EmulateViewport(width, height), chromedp.Navigate(url))
	t.Cleanup(func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, p := range b.problems {
			t.Error(p)
		}
	})
	return b
}

// watch records exceptions, console errors, CSP violations, dialogs (which
// it closes) and the keys of chat requests.
func (b *tab) watch() {
	note := func(format string, args ...any) {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.problems = append(b.problems, fmt.Sprintf(format, args...))
	}
	exceptions := chromedp.Events(b.ctx, runtime.ExceptionThrown)
	logs := chromedp.Events(b.ctx, cdplog.EntryAdded)
	dialogs := chromedp.Events(b.ctx, cdppage.JavascriptDialogOpening)
	requests := chromedp.Events(b.ctx, network.RequestWillBeSent)
	go func() {
		for ev, err := range exceptions {
			if err != nil {
				return
			}
			note("the page threw: %s", exceptionText(ev.ExceptionDetails))
		}
	}()
	go func() {
		for ev, err := range logs {
			if err != nil {
				return
			}
			// Failed requests (a 429, a 409) are the page's business; failedRequests watches them.
			if ev.Entry.Level == cdplog.EntryLevelError && ev.Entry.Source != cdplog.EntrySourceNetwork {
				note("the browser logged an error (%s): %s", ev.Entry.Source, ev.Entry.Text)
			}
		}
	}()
	go func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			note("the page opened a %s dialog: %q", ev.Type, ev.Message)
			_, _ = chromedp.Call(b.ctx, cdppage.HandleJavaScriptDialog, cdppage.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
	go func() {
		for ev, err := range requests {
			if err != nil {
				return
			}
			if ev.Request.Method == "POST" && strings.HasSuffix(ev.Request.URL, "/chat") {
				b.mu.Lock()
				b.chatKeys = append(b.chatKeys, headerValue(ev.Request.Headers, "Idempotency-Key"))
				b.mu.Unlock()
			}
		}
	}()
}

func exceptionText(d *runtime.ExceptionDetails) string {
	if d.Exception != nil && d.Exception.Description != "" {
		return d.Exception.Description
	}
	return d.Text
}

func headerValue(h network.Headers, name string) string {
	for k, v := range h {
		if strings.EqualFold(k, name) {
			return fmt.Sprint(v)
		}
	}
	return ""
}

// countRequests counts the page's requests of method whose URL holds part.
func countRequests(b *tab, method, part string) *atomic.Int32 {
	var n atomic.Int32
	requests := chromedp.Events(b.ctx, network.RequestWillBeSent)
	go func() {
		for ev, err := range requests {
			if err != nil {
				return
			}
			if ev.Request.Method == method && strings.Contains(ev.Request.URL, part) {
				n.Add(1)
			}
		}
	}()
	return &n
}

func (b *tab) keys() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.chatKeys)
}

func (b *tab) do(actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		b.t.Fatal(err)
	}
}

// find waits for the one element of role whose accessible name is name,
// among those a screen reader would announce.
func (b *tab) find(role, name string) cdp.BackendNodeID {
	b.t.Helper()
	return b.findIn(0, role, name)
}

// findIn is find within the element scope, or the whole page when scope
// is 0.
func (b *tab) findIn(scope cdp.BackendNodeID, role, name string) cdp.BackendNodeID {
	b.t.Helper()
	var found cdp.BackendNodeID
	var last string
	ok := poll(b.ctx, func() bool {
		params := accessibility.QueryAXTreeParams{BackendNodeID: scope, AccessibleName: name, Role: role}
		if scope == 0 {
			doc, err := chromedp.Call(b.ctx, dom.GetDocument, dom.GetDocumentParams{})
			if err != nil {
				last = err.Error()
				return false
			}
			params.NodeID = doc.Root.NodeID
		}
		res, err := chromedp.Call(b.ctx, accessibility.QueryAXTree, params)
		if err != nil {
			last = err.Error()
			return false
		}
		var shown []cdp.BackendNodeID
		for _, n := range res.Nodes {
			if !n.Ignored {
				shown = append(shown, n.BackendDOMNodeID)
			}
		}
		last = fmt.Sprintf("%d shown", len(shown))
		if len(shown) == 1 {
			found = shown[0]
		}
		return len(shown) == 1
	})
	if !ok {
		b.t.Fatalf("no single %s named %q (%s); the page shows:\n%s", role, name, last, b.text())
	}
	return found
}

// absent reports whether no element of role named name is announced now.
func (b *tab) absent(role, name string) bool {
	doc, err := chromedp.Call(b.ctx, dom.GetDocument, dom.GetDocumentParams{})
	if err != nil {
		b.t.Fatal(err)
	}
	res, err := chromedp.Call(b.ctx, accessibility.QueryAXTree,
		accessibility.QueryAXTreeParams{NodeID: doc.Root.NodeID, AccessibleName: name, Role: role})
	if err != nil {
		b.t.Fatal(err)
	}
	return !slices.ContainsFunc(res.Nodes, func(n *accessibility.Node) bool { return !n.Ignored })
}

// click clicks the element of role named name with the mouse, at its
// centre, once it is enabled.
func (b *tab) click(role, name string) {
	b.t.Helper()
	b.clickNode(b.find(role, name), 1)
}

// clickNode clicks the element id with the mouse, at its centre, once it
// is enabled, times times in a row.
func (b *tab) clickNode(id cdp.BackendNodeID, times int) {
	b.t.Helper()
	b.waitJS(fmt.Sprintf("node %d enabled", id), b.onNode(id, `function() { return !this.disabled }`))
	// A radio button drawn by its label is clicked on the label, as a person does.
	at := js[[]float64](b, b.onNode(id, `function() {
		let e = this;
		const r = e.getBoundingClientRect();
		if ((r.width < 5 || r.height < 5) && e.labels && e.labels.length > 0) e = e.labels[0];
		e.scrollIntoView({block: "nearest"});
		const box = e.getBoundingClientRect();
		return [box.x + box.width / 2, box.y + box.height / 2];
	}`))
	clicks := make([]chromedp.Action[chromedp.Void], times)
	for i := range clicks {
		clicks[i] = chromedp.MouseClickXY(math.Round(at[0]), math.Round(at[1]))
	}
	b.do(clicks...)
}

// onNode is a JavaScript expression that calls fn on the node.
func (b *tab) onNode(id cdp.BackendNodeID, fn string) string {
	b.t.Helper()
	obj, err := chromedp.Call(b.ctx, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: id})
	if err != nil {
		b.t.Fatal(err)
	}
	// The object lives in the page; name it through a global for the poll.
	name := fmt.Sprintf("__node%d", id)
	if _, err := chromedp.Call(b.ctx, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
		ObjectID: obj.Object.ObjectID, FunctionDeclaration: `function() { window["` + name + `"] = this }`,
	}); err != nil {
		b.t.Fatal(err)
	}
	return fmt.Sprintf(`(%s).call(window[%q])`, fn, name)
}

// typeInto focuses the text field named name and types text into it.
func (b *tab) typeInto(name, text string) {
	b.t.Helper()
	id := b.find("textbox", name)
	if _, err := chromedp.Call(b.ctx, dom.Focus, dom.FocusParams{BackendNodeID: id}); err != nil {
		b.t.Fatal(err)
	}
	if _, err := chromedp.Call(b.ctx, input.InsertText, input.InsertTextParams{Text: text}); err != nil {
		b.t.Fatal(err)
	}
}

// pressEnter presses Enter in the focused element, as a keyboard does: a
// keyDown that carries its text (so that a page that cancels the keydown
// gets no new line), then a keyUp.
func (b *tab) pressEnter(modifiers ...kb.Modifier) {
	b.t.Helper()
	var mods int64
	for _, m := range modifiers {
		mods |= int64(m)
	}
	key := input.DispatchKeyEventParams{Key: "Enter", Code: "Enter", WindowsVirtualKeyCode: 13, NativeVirtualKeyCode: 13, Modifiers: mods}
	down, up := key, key
	down.Type, down.Text, down.UnmodifiedText = input.DispatchKeyEventTypeKeyDown, "\r", "\r"
	up.Type = input.DispatchKeyEventTypeKeyUp
	for _, k := range []input.DispatchKeyEventParams{down, up} {
		if _, err := chromedp.Call(b.ctx, input.DispatchKeyEvent, k); err != nil {
			b.t.Fatal(err)
		}
	}
}

// send types a message into the message box and sends it with Enter.
func (b *tab) send(message string) {
	b.t.Helper()
	// As a person can, only once Send is offered: while a turn ends, its
	// reply shows before Stop gives way to Send, and Enter sends nothing.
	b.find("button", "Send")
	b.typeInto("Message", message)
	b.pressEnter()
}

// js evaluates expr in the page and decodes its JSON value into T.
func js[T any](b *tab, expr string) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// waitJS waits until expr is true in the page.
func (b *tab) waitJS(what, expr string) {
	b.t.Helper()
	if !poll(b.ctx, func() bool {
		ok, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](`!!(`+expr+`)`))
		return err == nil && ok
	}) {
		b.t.Fatalf("timed out waiting for %s (%s); the page shows:\n%s", what, expr, b.text())
	}
}

// text is what the page shows, for failure messages.
func (b *tab) text() string {
	ctx, cancel := context.WithTimeout(b.ctx, time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
	if err != nil {
		return "(unreadable: " + err.Error() + ")"
	}
	return s
}

func poll(ctx context.Context, cond func() bool) bool {
	ctx, cancel := context.WithTimeout(ctx, browserWait)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(20 * time.Millisecond):
		}
	}
	return true
}

// signInWithToken pastes a token for user, as a person does when the
// server has no DEV_LOGIN.
func (b *tab) signInWithToken(user string) {
	b.t.Helper()
	b.typeInto("Token", mustToken(b.t, user))
	b.click("button", "Sign in")
	b.find("textbox", "Message")
}

// Expressions that read the page.
const (
	lastReply    = `[...document.querySelectorAll('#thread .msg.assistant')].at(-1)`
	lastReplyTxt = `(` + lastReply + `?.querySelector('.text')?.textContent ?? '')`
	taskTitles   = `[...document.querySelectorAll('#task-list .task-title')].map(e => e.textContent)`
	convTitles   = `[...document.querySelectorAll('#conversation-list .conversation-title')].map(e => e.textContent)`
	errorText    = `(document.getElementById('chat-error').hidden ? '' : document.getElementById('chat-error').innerText)`
)

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// screenshotDir, when set, makes TestPageInBrowser write docs/clients.md's
// screenshots there: go test ./internal/http -run TestPageInBrowser/screenshots -screenshots ../../docs
var screenshotDir = flag.String("screenshots", "", "write screenshots of the page to this directory")

func TestPageInBrowser(t *testing.T) {
	t.Parallel()
	browser := mustBrowser(t)
	// user names the test run alone has: the database outlives a run (and
	// a user's token budget is counted by day), so a second run, with
	// -count or on the same database, starts from users with nothing.
	run := strings.ToLower(rand.Text()[:8])
	user := func(name string) string { return "page-" + name + "-" + run }
	devLogin := func(c *serverConfig) { c.api.DevLogin = DevLogin{Enabled: true, TTL: time.Hour} }

	t.Run("a person signs in by name, sends a message and sees the reply stream in and the task appear", func(t *testing.T) {
		t.Parallel()
		s := mustServer(t, offline.New(), devLogin)
		b := openTab(t, browser, s.URL+"/", 1280, 800)
		b.typeInto("User name", user("ada"))
		b.click("button", "Sign in")
		for _, region := range []string{"Conversations", "Messages", "Tasks"} {
			b.find("region", region)
		}
		b.find("button", "New chat")
		b.find("button", "Send")
		if js[bool](b, `document.getElementById('thread').getAttribute('aria-live') !== 'polite'`) {
			t.Error("the thread is not a polite live region")
		}

		// Shift+Enter adds a line; Enter sends.
		b.typeInto("Message", "first line")
		b.pressEnter(kb.ModifierShift)
		if v := js[string](b, `document.getElementById('message').value`); v != "first line\n" || len(b.keys()) != 0 {
			t.Fatalf("after Shift+Enter the box holds %q and %d messages were sent", v, len(b.keys()))
		}
		b.do(chromedp.Evaluate[chromedp.Void](`document.getElementById('message').value = ''`))

		b.send("Add a task to buy groceries")
		b.waitJS("the reply", lastReplyTxt+`.match(/^Added task [0-9]+: Buy groceries[.]$/)`)
		if v := js[string](b, `document.getElementById('message').value`); v != "" {
			t.Errorf("after Enter sent the message the box holds %q", v)
		}
		// The chip names what the call touched; the reply says what became of it.
		b.waitJS("the tool call", lastReply+`.querySelector('.tool.ok')?.textContent.match(/^add_task#[0-9]+ Buy groceries$/)`)
		b.waitJS("the task in the panel", taskTitles+`.join() === 'Buy groceries'`)
		task := js[string](b, `document.querySelector('#task-list .task').dataset.id`)
		added := "Added task " + task + ": Buy groceries."
		if got := js[string](b, lastReplyTxt); got != added {
			t.Errorf("the reply says %q, want %q", got, added)
		}
		b.waitJS("the conversation in the list", convTitles+`.join() === 'Add a task to buy groceries'`)
		// Once the stream has ended, Send is offered again and Stop is not
		// (the reply and the panels may show before the stream's body
		// closes).
		b.find("button", "Send")
		if !b.absent("button", "Stop") {
			t.Error("Stop is offered while no turn runs")
		}
		keys := b.keys()
		if len(keys) != 1 || len(keys[0]) != 36 {
			t.Errorf("the chat requests carried the keys %q, want one UUID", keys)
		}
		if url := js[string](b, `location.href`); strings.Contains(url, "ey") || !strings.Contains(url, "#c=") {
			t.Errorf("the URL is %s: want the conversation in its fragment and no token", url)
		}

		// A reload keeps the session (the browser's localStorage) and the open conversation.
		b.do(chromedp.Reload())
		b.waitJS("the thread after a reload", `document.querySelectorAll('#thread .msg').length === 2`)
		b.waitJS("the reply after a reload", lastReplyTxt+` === `+jsString(added))
		b.waitJS("the conversation after a reload", convTitles+`.join() === 'Add a task to buy groceries'`)

		// The next turn completes the task; the filters show it where it belongs.
		b.send("Mark task " + task + " as complete")
		b.waitJS("the task done", `document.querySelector('#task-list .task.done .task-title')?.textContent === 'Buy groceries'`)
		b.click("radio", "Pending")
		b.waitJS("no pending task", `document.getElementById('task-list').children.length === 0 && !document.getElementById('tasks-empty').hidden`)
		b.click("radio", "Completed")
		b.waitJS("the completed task", taskTitles+`.join() === 'Buy groceries'`)

		// A new chat starts empty; the old one is a click away.
		b.click("button", "New chat")
		b.waitJS("an empty thread", `document.querySelectorAll('#thread .msg').length === 0 && location.hash === ''`)
		b.click("button", "Add a task to buy groceries")
		b.waitJS("the old thread", `document.querySelectorAll('#thread .msg').length === 4`)
	})

	t.Run("without DEV_LOGIN a person pastes a token, and signing out forgets it", func(t *testing.T) {
		t.Parallel()
		s := mustServer(t, offline.New())
		b := openTab(t, browser, s.URL+"/", 1280, 800)
		b.find("textbox", "Token")
		if !b.absent("textbox", "User name") {
			t.Error("the page offers to sign in by name although DEV_LOGIN is off")
		}
		b.typeInto("Token", "not a token")
		b.click("button", "Sign in")
		b.waitJS("the refusal", `document.getElementById('signin-error').textContent.includes('not a taskchat token')`)
		b.do(chromedp.Evaluate[chromedp.Void](`document.getElementById('token').value = ''`))
		b.signInWithToken(user("bea"))
		b.waitJS("the user's name", `document.getElementById('who-name').textContent === '`+user("bea")+`'`)
		b.click("button", "Sign out")
		b.find("textbox", "Token")
		if n := js[int](b, `localStorage.length + sessionStorage.length`); n != 0 {
			t.Errorf("the browser's storage holds %d items after signing out", n)
		}
	})

	t.Run("a task titled with HTML is shown as text and runs nothing", func(t *testing.T) {
		t.Parallel()
		const title = `<img src=x onerror=alert(1)>`
		s := mustServer(t, offline.New())
		b := openTab(t, browser, s.URL+"/", 1280, 800)
		b.signInWithToken(user("cy"))
		b.send(`Add "` + title + `" to my list`)
		b.waitJS("the task", taskTitles+`.join() === `+jsString(title))
		b.waitJS("the reply", lastReplyTxt+`.includes(`+jsString(title)+`)`)
		b.waitJS("the conversation", convTitles+`[0]?.includes('<img')`)
		if n := js[int](b, `document.querySelectorAll('#app img, #app [onerror]').length`); n != 0 {
			t.Errorf("the page holds %d elements made from text", n)
		}
		b.do(chromedp.Sleep(200 * time.Millisecond)) // an onerror would have fired by now
	})

	t.Run("Stop ends a slow turn, and the reply stays marked interrupted", func(t *testing.T) {
		t.Parallel()
		slow := agenttest.ModelFunc(func(ctx context.Context, _ agent.Request, onText func(string)) (agent.Response, error) {
			onText("Let me think about that")
			<-ctx.Done()
			return agent.Response{}, ctx.Err()
		})
		s := mustServer(t, slow)
		b := openTab(t, browser, s.URL+"/", 1280, 800)
		b.signInWithToken(user("dan"))
		b.send("Take your time")
		b.waitJS("the streamed start of the reply", lastReplyTxt+` === 'Let me think about that'`)
		if !b.absent("button", "Send") {
			t.Error("Send is offered while a turn runs")
		}
		b.click("button", "Stop")
		b.waitJS("the reply marked interrupted", lastReply+`.querySelector('.note')?.textContent.startsWith('Interrupted')`)
		b.find("button", "Send")

		// The server stored it so: a reload shows it from there.
		tok := mustToken(t, user("dan"))
		id := strings.TrimPrefix(js[string](b, `location.hash`), "#c=")
		waitFor(t, "the interrupted reply to be stored", func() bool {
			r := s.do(t, call{method: "GET", path: "/api/" + user("dan") + "/conversations/" + id + "/messages", token: tok})
			return strings.Contains(string(r.body), `"interrupted":true`)
		})
		b.do(chromedp.Reload())
		b.waitJS("the stored interrupted reply", lastReply+`?.classList.contains('interrupted') && `+lastReplyTxt+` === 'Let me think about that'`)
	})

	t.Run("too many messages: the page says how long to wait", func(t *testing.T) {
		t.Parallel()
		s := mustServer(t, offline.New(), func(c *serverConfig) { c.chat.TurnRate = tasks.Rate{PerMinute: 1, Burst: 1} })
		b := openTab(t, browser, s.URL+"/", 1280, 800)
		b.signInWithToken(user("eve"))
		b.send("Add a task to buy groceries")
		b.waitJS("the first reply", lastReplyTxt+`.match(/^Added task [0-9]+: Buy groceries[.]$/)`)
		b.send("Add a task to pay bills")
		b.waitJS("the wait", errorText+`.match(/You are sending messages too fast. Wait (5[0-9]|60) seconds, then retry./)`)
		b.find("button", "Retry")
		if js[bool](b, `!document.getElementById('retry').disabled`) {
			t.Error("Retry is enabled before the wait is over")
		}
	})

	t.Run("over the daily token budget: the page says when it renews", func(t *testing.T) {
		t.Parallel()
		s := mustServer(t, offline.New(), func(c *serverConfig) { c.chat.DailyTokenBudget = 1 })
		b := openTab(t, browser, s.URL+"/", 1280, 800)
		b.signInWithToken(user("budget"))
		b.send("Add a task to buy groceries")
		b.waitJS("the first reply", lastReplyTxt+`.match(/^Added task [0-9]+: Buy groceries[.]$/)`)
		b.send("Add a task to pay bills")
		b.waitJS("the budget", errorText+`.match(/You have used today's token budget; it renews at midnight UTC, (in about [0-9]+ hours?|within the hour)[.] Your message was not saved[.]/)`)
	})

	t.Run("the model fails: the message is saved, and Retry continues the same conversation", func(t *testing.T) {
		t.Parallel()
		var calls atomic.Int32
		flaky := agenttest.ModelFunc(func(ctx context.Context, _ agent.Request, onText func(string)) (agent.Response, error) {
			if calls.Add(1) == 1 {
				return agent.Response{}, &agent.ModelError{Kind: agent.ErrModelServer, Status: 500}
			}
			onText("Here I am again.")
			return agent.Response{Text: "Here I am again."}, nil
		})
		s := mustServer(t, flaky)
		b := openTab(t, browser, s.URL+"/", 1280, 800)
		b.signInWithToken(user("fay"))
		b.send("Hello there")
		b.waitJS("the explanation", errorText+`.includes('The model is unavailable, your message was saved.')`)
		b.click("button", "Retry")
		b.waitJS("the reply", lastReplyTxt+` === 'Here I am again.'`)
		b.waitJS("the error gone", errorText+` === ''`)
		// The server said nothing was changed, and the turn had opened a
		// conversation: the retry goes on in it, under a fresh key.
		if keys := b.keys(); len(keys) != 2 || keys[0] == keys[1] || keys[0] == "" || keys[1] == "" {
			t.Errorf("the send and its retry carried the keys %q, want two keys", keys)
		}
		convs := s.do(t, call{method: "GET", path: "/api/" + user("fay") + "/conversations", token: mustToken(t, user("fay"))}).json(t)["conversations"].([]any)
		if len(convs) != 1 {
			t.Errorf("the retry left %d conversations, want the one the send opened", len(convs))
		}
	})

	t.Run("the model fails after a change: the page lists what was saved", func(t *testing.T) {
		t.Parallel()
		var calls atomic.Int32
		failing := agenttest.ModelFunc(func(ctx context.Context, _ agent.Request, _ func(string)) (agent.Response, error) {
			if calls.Add(1) == 1 {
				return agent.Response{ToolCalls: []agent.ToolCall{{ID: "call_1", Name: "add_task", Arguments: `{"title":"Buy milk"}`}}}, nil
			}
			return agent.Response{}, &agent.ModelError{Kind: agent.ErrModelServer, Status: 500}
		})
		s := mustServer(t, failing)
		b := openTab(t, browser, s.URL+"/", 1280, 800)
		b.signInWithToken(user("gus"))
		b.send("Add a task to buy milk")
		b.waitJS("the explanation", errorText+`.includes('The model is unavailable, your message was saved.')`)
		b.waitJS("the saved change", errorText+`.includes('Before that, these changes were made and saved:') && `+errorText+`.match(/Added task [0-9]+: Buy milk/)`)
		b.waitJS("the task in the panel", taskTitles+`.join() === 'Buy milk'`)
	})

	t.Run("conversations page with More, and one is deleted after a confirmation", func(t *testing.T) {
		t.Parallel()
		s := mustServer(t, offline.New())
		for i := range 22 {
			if r := s.chat(t, user("hal"), 0, fmt.Sprintf("Show me all my tasks %d", i)); r.status != 200 {
				t.Fatalf("turn %d: %d %s", i, r.status, r.body)
			}
		}
		b := openTab(t, browser, s.URL+"/", 1280, 800)
		b.signInWithToken(user("hal"))
		b.waitJS("the first page", convTitles+`.length === 20 && `+convTitles+`[0] === 'Show me all my tasks 21'`)
		b.click("button", "More")
		b.waitJS("the second page", convTitles+`.length === 22 && `+convTitles+`[21] === 'Show me all my tasks 0'`)
		if !b.absent("button", "More") {
			t.Error("More is still offered after the last page")
		}
		b.click("button", "Delete “Show me all my tasks 21”")
		b.find("dialog", "Delete this chat?")
		b.click("button", "Cancel")
		b.waitJS("nothing deleted", convTitles+`.length === 22`)
		id := js[string](b, `document.querySelector('#conversation-list li').dataset.id`)
		b.click("button", "Delete “Show me all my tasks 21”")
		b.click("button", "Delete")
		b.waitJS("the conversation gone", convTitles+`.length === 20 && !`+convTitles+`.includes('Show me all my tasks 21')`)
		r := s.do(t, call{method: "GET", path: "/api/" + user("hal") + "/conversations/" + id + "/messages", token: mustToken(t, user("hal"))})
		if r.status != 404 {
			t.Errorf("the deleted conversation answers %d", r.status)
		}
	})

	t.Run("a long conversation is read to its end, page after page", func(t *testing.T) {
		t.Parallel()
		s := mustServer(t, offline.New())
		conv := int64(s.chat(t, user("jo"), 0, "Show me all my tasks").json(t)["conversation_id"].(float64))
		for i := range 64 {
			if r := s.chat(t, user("jo"), conv, fmt.Sprintf("What's pending? %d", i)); r.status != 200 {
				t.Fatalf("turn %d: %d %s", i, r.status, r.body)
			}
		}
		b := openTab(t, browser, fmt.Sprintf("%s/#c=%d", s.URL, conv), 1280, 800)
		b.signInWithToken(user("jo"))
		b.waitJS("every message", `document.querySelectorAll('#thread .msg').length === 130`)
		b.waitJS("the last one last", `[...document.querySelectorAll('#thread .msg.user .text')].at(-1).textContent === "What's pending? 63"`)
	})

	t.Run("more tasks than a page holds are shown whole, for each filter", func(t *testing.T) {
		t.Parallel()
		pool := storetest.Pool(t)
		s := mustServerOn(t, pool, offline.New())
		// 2,101 tasks, every other one completed: each filter's list is more
		// than the 1,000 a page holds at most.
		if _, err := pool.Exec(context.Background(), `
			INSERT INTO tasks (user_id, title, completed)
			SELECT $1, 'Task ' || g, g % 2 = 0 FROM generate_series(1, 2101) g ORDER BY g`, user("kim")); err != nil {
			t.Fatal(err)
		}
		b := openTab(t, browser, s.URL+"/", 1280, 800)
		b.signInWithToken(user("kim"))
		// Every task once, in number order, from the first to the last.
		whole := func(n int, first, last string) string {
			ids := `[...document.querySelectorAll('#task-list .task')].map(e => Number(e.dataset.id))`
			return fmt.Sprintf(`%[1]s.length === %[2]d && %[1]s.every((id, i, a) => i === 0 || a[i-1] < id) && `+
				`%[3]s[0] === %[4]q && %[3]s.at(-1) === %[5]q`, ids, n, taskTitles, first, last)
		}
		b.waitJS("all 2,101 tasks", whole(2101, "Task 1", "Task 2101"))
		b.waitJS("the count", `document.getElementById('task-count').textContent === '1050 of 2101 done'`)
		b.click("radio", "Pending")
		b.waitJS("the 1,051 pending tasks", whole(1051, "Task 1", "Task 2101"))
		b.click("radio", "Completed")
		b.waitJS("the 1,050 completed tasks", whole(1050, "Task 2", "Task 2100"))
	})

	t.Run("on a phone-sized screen one panel shows at a time", func(t *testing.T) {
		t.Parallel()
		s := mustServer(t, offline.New())
		b := openTab(t, browser, s.URL+"/", 390, 844)
		b.signInWithToken(user("ida"))
		b.send("Add a task to buy groceries")
		b.waitJS("the reply", lastReplyTxt+`.match(/^Added task [0-9]+: Buy groceries[.]$/)`)
		if !b.absent("region", "Tasks") || !b.absent("region", "Conversations") {
			t.Error("the side panels show beside the thread on a phone")
		}
		if js[bool](b, `document.documentElement.scrollWidth > innerWidth`) {
			t.Error("the page is wider than the phone's screen")
		}
		b.click("button", "Tasks")
		b.find("region", "Tasks")
		b.waitJS("the task", taskTitles+`.join() === 'Buy groceries'`)
		b.click("button", "Chats")
		b.find("region", "Conversations")
		b.click("button", "Add a task to buy groceries")
		b.find("region", "Messages")
	})

	if *screenshotDir != "" {
		t.Run("screenshots", func(t *testing.T) { writeScreenshots(t, browser, *screenshotDir) })
	}
}

// writeScreenshots writes the pictures of the page in README.md and docs/clients.md: light and
// dark, desktop and phone.
func writeScreenshots(t *testing.T, browser context.Context, dir string) {
	s := mustServer(t, offline.New())
	for _, m := range []string{"Add a task to buy groceries", "I need to remember to pay bills", "Please remind me to call the dentist."} {
		s.chat(t, "alice", 0, m)
	}
	b := openTab(t, browser, s.URL+"/", 1280, 800)
	b.signInWithToken("alice")
	b.waitJS("the tasks", taskTitles+`.length === 3`)
	b.send("Mark task " + js[string](b, `document.querySelector('#task-list .task').dataset.id`) + " as complete")
	b.waitJS("the reply", lastReplyTxt+`.startsWith('Marked task')`)
	b.send("What's pending?")
	b.waitJS("the list", lastReplyTxt+`.includes('Pay bills')`)
	b.do(chromedp.Evaluate[chromedp.Void](`document.activeElement.blur()`))
	for _, shot := range []struct {
		name          string
		width, height int64
		scheme        string
	}{
		{"page-desktop-light.png", 1280, 800, "light"},
		{"page-desktop-dark.png", 1280, 800, "dark"},
		{"page-phone-light.png", 390, 844, "light"},
		{"page-phone-dark.png", 390, 844, "dark"},
	} {
		if _, err := chromedp.Call(b.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: shot.scheme}},
		}); err != nil {
			t.Fatal(err)
		}
		b.do(chromedp.EmulateViewport(shot.width, shot.height), chromedp.Sleep(300*time.Millisecond))
		png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, shot.name), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
