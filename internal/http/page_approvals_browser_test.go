package http

// The chat page and the calls that wait for the person's approval, tried
// in a real browser as page_browser_test.go tries the rest of the page:
// Approve and Deny under the call's summary, found by their accessible
// names, reached with Tab and pressed with the keyboard; still there after
// a reload; and what the page shows once the server has decided.

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/agent/agenttest"
	"github.com/taskchat/taskchat/internal/agent/offline"
)

// Expressions that read the calls waiting in the thread.
const (
	offerSummaries = `[...document.querySelectorAll('#thread .approval-summary')].map(e => e.textContent)`
	offerButtons   = `document.querySelectorAll('#thread .approval button').length`
	offerStatuses  = `[...document.querySelectorAll('#thread .approval-status')].map(e => e.textContent)`
)

// deleteWaits makes delete_task's calls wait for their person.
func deleteWaits(c *serverConfig) {
	c.chat.ApprovalTools = []string{"delete_task"}
	c.chat.ApprovalTTL = time.Hour
}

// tabTo presses Tab until the element of role named name has the focus,
// as a person who uses no mouse reaches it, and returns the element.
func (b *tab) tabTo(role, name string) cdp.BackendNodeID {
	b.t.Helper()
	id := b.find(role, name)
	focused := b.onNode(id, `function() { return this === document.activeElement }`)
	for range 60 {
		if js[bool](b, focused) {
			return id
		}
		b.do(chromedp.KeyEvent(kb.Tab))
	}
	b.t.Fatalf("Tab never reached the %s %q; the focus is on %s", role, name,
		js[string](b, `document.activeElement.outerHTML.slice(0, 120)`))
	return 0
}

// waitGone waits until no element of role named name is announced.
func (b *tab) waitGone(role, name string) {
	b.t.Helper()
	if !poll(b.ctx, func() bool { return b.absent(role, name) }) {
		b.t.Fatalf("the %s %q is still shown; the page shows:\n%s", role, name, b.text())
	}
}

// addTask sends a message that adds a task titled title, and returns the
// task's number from the task panel once it shows there.
func (b *tab) addTask(message, title string) string {
	b.t.Helper()
	b.send(message)
	titled := `[...document.querySelectorAll('#task-list .task')].find(e => e.querySelector('.task-title').textContent === ` +
		jsString(title) + `)`
	b.waitJS("the task "+title, titled)
	return js[string](b, titled+`.dataset.id`)
}

// approvalOf returns an approval as GET …/approvals/{id} answers it.
func approvalOf(t *testing.T, s *testServer, user string, id int64) map[string]any {
	t.Helper()
	r := s.do(t, call{method: "GET", path: fmt.Sprintf("/api/%s/approvals/%d", user, id), token: mustToken(t, user)})
	if r.status != 200 {
		t.Fatalf("GET the approval = %d %s", r.status, r.body)
	}
	return r.json(t)
}

// waitingApprovals returns the user's approvals that wait, by the API.
func waitingApprovals(t *testing.T, s *testServer, user string) []map[string]any {
	t.Helper()
	r := s.do(t, call{method: "GET", path: "/api/" + user + "/approvals", token: mustToken(t, user)})
	if r.status != 200 {
		t.Fatalf("GET approvals = %d %s", r.status, r.body)
	}
	var out []map[string]any
	for _, a := range r.json(t)["approvals"].([]any) {
		out = append(out, a.(map[string]any))
	}
	return out
}

// titlesOf is the user's task titles, by the API.
func titlesOf(t *testing.T, s *testServer, user string) []string {
	t.Helper()
	var out []string
	for _, task := range mustRESTTasks(t, s, user) {
		out = append(out, task.(map[string]any)["title"].(string))
	}
	return out
}

// deleteScript is a model that adds task 1, Buy milk, when first asked,
// asks to delete it when next asked, and answers the continuation of that
// turn, once the call is decided, with cont.
func deleteScript(cont func(ctx context.Context, onText func(string)) (agent.Response, error)) agent.Model {
	var calls atomic.Int32
	return agenttest.ModelFunc(func(ctx context.Context, _ agent.Request, onText func(string)) (agent.Response, error) {
		text := func(s string) (agent.Response, error) {
			onText(s)
			return agent.Response{Text: s}, nil
		}
		switch calls.Add(1) {
		case 1:
			return agent.Response{ToolCalls: []agent.ToolCall{{ID: "call_1", Name: "add_task", Arguments: `{"title":"Buy milk"}`}}}, nil
		case 2:
			return text("Added.")
		case 3:
			return agent.Response{ToolCalls: []agent.ToolCall{{ID: "call_2", Name: "delete_task", Arguments: `{"task_id":1}`}}}, nil
		case 4:
			return text("It waits for your approval.")
		case 5:
			return cont(ctx, onText)
		}
		return text("Nothing more.")
	})
}

func TestPageApprovals(t *testing.T) {
	t.Parallel()
	browser := mustBrowser(t)
	run := strings.ToLower(rand.Text()[:8])
	user := func(name string) string { return "approve-" + name + "-" + run }

	t.Run("Approve, pressed with the keyboard after a reload, runs the call that waited", func(t *testing.T) {
		t.Parallel()
		s := mustServer(t, offline.New(), deleteWaits)
		b := openTab(t, browser, s.URL+"/", 1280, 800)
		decisions := countRequests(b, "POST", "/approvals/")
		b.signInWithToken(user("ana"))
		task := b.addTask("Add a task to buy milk", "Buy milk")
		summary := "Delete task " + task + ", Buy milk"

		b.send("Delete task " + task)
		b.waitJS("the call waiting in the reply", lastReply+`.querySelector('.approval-summary')?.textContent === `+jsString(summary))
		b.find("group", summary)
		for _, name := range []string{"Approve", "Deny"} {
			if tag := js[string](b, b.onNode(b.find("button", name), `function() { return this.tagName }`)); tag != "BUTTON" {
				t.Errorf("%s is a %s, want a button", name, tag)
			}
		}
		if got := titlesOf(t, s, user("ana")); len(got) != 1 {
			t.Fatalf("before a decision the tasks are %q, want Buy milk still there", got)
		}

		b.do(chromedp.Reload())
		b.waitJS("the call waiting after a reload", msgCount+` === 4 && `+offerSummaries+`.join() === `+jsString(summary))
		b.find("group", summary)
		b.tabTo("button", "Approve")
		b.pressEnter()

		b.waitGone("button", "Approve")
		b.waitGone("button", "Deny")
		deleted := "Deleted task " + task + ": Buy milk."
		b.waitJS("the continued turn's reply in place of the one that asked", lastReplyTxt+` === `+jsString(deleted)+` && `+msgCount+` === 4`)
		b.waitJS("the task gone from the panel", `document.querySelectorAll('#task-list .task').length === 0`)
		b.find("button", "Send")
		if got := titlesOf(t, s, user("ana")); len(got) != 0 {
			t.Errorf("after Approve the tasks are %q, want none", got)
		}
		if w := waitingApprovals(t, s, user("ana")); len(w) != 0 {
			t.Errorf("after Approve %d approvals wait", len(w))
		}
		if n := decisions.Load(); n != 1 {
			t.Errorf("the page sent %d decisions, want one", n)
		}
		if id := js[string](b, `document.activeElement.id`); id != "message" {
			t.Errorf("after the decision the focus is on %q, want the message box", id)
		}
	})

	t.Run("Deny, pressed with Space, leaves the task; a summary with HTML in it is shown as text", func(t *testing.T) {
		t.Parallel()
		const title = `<img src=x onerror=alert(1)>`
		s := mustServer(t, offline.New(), deleteWaits)
		b := openTab(t, browser, s.URL+"/", 1280, 800)
		b.signInWithToken(user("bo"))
		task := b.addTask(`Add "`+title+`" to my list`, title)
		summary := "Delete task " + task + ", " + title

		b.send("Delete task " + task)
		b.waitJS("the call waiting", offerSummaries+`.join() === `+jsString(summary))
		if n := js[int](b, `document.querySelectorAll('#app img, #app [onerror]').length`); n != 0 {
			t.Errorf("the page holds %d elements made from text", n)
		}
		id := int64(waitingApprovals(t, s, user("bo"))[0]["id"].(float64))
		b.tabTo("button", "Deny")
		b.do(chromedp.KeyEvent(" "))

		b.waitGone("button", "Deny")
		b.waitGone("button", "Approve")
		b.waitJS("the continued turn's reply", msgCount+` === 4 && `+lastReply+`.querySelector('.tool.error')`)
		b.find("button", "Send")
		if got := titlesOf(t, s, user("bo")); len(got) != 1 || got[0] != title {
			t.Errorf("after Deny the tasks are %q, want the task still there", got)
		}
		b.waitJS("the task still in the panel", taskTitles+`.join() === `+jsString(title))
		if state := approvalOf(t, s, user("bo"), id)["state"]; state != "denied" {
			t.Errorf("the approval is %v, want denied", state)
		}
	})

	t.Run("of two calls waiting, a double-clicked Approve decides one, and the turn continues after the other", func(t *testing.T) {
		t.Parallel()
		s := mustServer(t, offline.New(), deleteWaits)
		b := openTab(t, browser, s.URL+"/", 1280, 800)
		decisions := countRequests(b, "POST", "/approvals/")
		b.signInWithToken(user("cy"))
		milk := b.addTask("Add a task to buy milk", "Buy milk")
		bills := b.addTask("Add a task to pay bills", "Pay bills")
		milkSummary, billsSummary := "Delete task "+milk+", Buy milk", "Delete task "+bills+", Pay bills"

		b.send("Delete tasks " + milk + " and " + bills)
		b.waitJS("both calls waiting", offerSummaries+`.join('|') === `+jsString(milkSummary+"|"+billsSummary))
		b.find("button", "Send")
		b.clickNode(b.findIn(b.find("group", milkSummary), "button", "Approve"), 2)

		b.waitJS("the first decided, the second still waiting", offerButtons+` === 2 && `+offerStatuses+`.join() === 'Approved: it runs once you have decided the rest.'`)
		b.find("group", billsSummary)
		if n := decisions.Load(); n != 1 {
			t.Fatalf("a double click sent %d decisions, want one", n)
		}
		if got := titlesOf(t, s, user("cy")); len(got) != 2 {
			t.Fatalf("before the last decision the tasks are %q, want both", got)
		}

		b.clickNode(b.findIn(b.find("group", billsSummary), "button", "Deny"), 1)
		b.waitJS("the continued turn's reply", offerButtons+` === 0 && `+msgCount+` === 6 && `+
			lastReply+`.querySelector('.tool.ok')?.textContent === 'delete_task#`+milk+` Buy milk'`)
		b.waitJS("only the approved call run", taskTitles+`.join() === 'Pay bills'`)
		if got := titlesOf(t, s, user("cy")); len(got) != 1 || got[0] != "Pay bills" {
			t.Errorf("after the decisions the tasks are %q, want Pay bills", got)
		}
		if n := decisions.Load(); n != 2 {
			t.Errorf("the page sent %d decisions, want two", n)
		}
	})

	t.Run("a new message supersedes the call that waits: its buttons go, and a reload does not bring them back", func(t *testing.T) {
		t.Parallel()
		s := mustServer(t, offline.New(), deleteWaits)
		b := openTab(t, browser, s.URL+"/", 1280, 800)
		b.signInWithToken(user("eli"))
		task := b.addTask("Add a task to buy milk", "Buy milk")
		b.send("Delete task " + task)
		b.waitJS("the call waiting", offerButtons+` === 2`)

		b.send("Show me all my tasks")
		b.waitJS("the call superseded", offerButtons+` === 0 && `+offerStatuses+`.join() === 'Not run: your next message came before a decision.'`)
		b.waitJS("the reply to the new message", msgCount+` === 6 && `+lastReplyTxt+`.includes('Buy milk')`)
		if w := waitingApprovals(t, s, user("eli")); len(w) != 0 {
			t.Errorf("after a new message %d approvals wait", len(w))
		}
		b.do(chromedp.Reload())
		b.waitJS("the thread after a reload", msgCount+` === 6`)
		if n := js[int](b, offerButtons); n != 0 {
			t.Errorf("after a reload the page offers %d buttons for a superseded call", n)
		}
		if got := titlesOf(t, s, user("eli")); len(got) != 1 {
			t.Errorf("the tasks are %q, want Buy milk still there", got)
		}
	})

	t.Run("a decision in one tab shows in another: the buttons go and the new reply comes", func(t *testing.T) {
		t.Parallel()
		s := mustServer(t, offline.New(), deleteWaits)
		one := openTab(t, browser, s.URL+"/", 1280, 800)
		one.signInWithToken(user("fay"))
		task := one.addTask("Add a task to buy milk", "Buy milk")
		one.send("Delete task " + task)
		one.waitJS("the call waiting", offerButtons+` === 2`)
		conv := strings.TrimPrefix(js[string](one, `location.hash`), "#c=")

		two := openTab(t, browser, s.URL+"/#c="+conv, 1280, 800)
		two.signInWithToken(user("fay"))
		two.waitJS("the call waiting in the second tab", offerButtons+` === 2 && `+msgCount+` === 4`)

		one.click("button", "Approve")
		deleted := "Deleted task " + task + ": Buy milk."
		one.waitJS("the continued turn's reply", lastReplyTxt+` === `+jsString(deleted))
		two.waitJS("the continued turn's reply in the second tab", offerButtons+` === 0 && `+msgCount+` === 4 && `+
			lastReplyTxt+` === `+jsString(deleted))
		two.waitJS("the task gone from the second tab's panel", `document.querySelectorAll('#task-list .task').length === 0`)
	})

	t.Run("a continuation that runs when another tab opens shows live in place of the reply that asked", func(t *testing.T) {
		t.Parallel()
		release := make(chan struct{})
		script := deleteScript(func(ctx context.Context, onText func(string)) (agent.Response, error) {
			onText("Deleted it")
			select {
			case <-release:
			case <-ctx.Done():
				return agent.Response{}, ctx.Err()
			}
			onText(", as you said.")
			return agent.Response{Text: "Deleted it, as you said."}, nil
		})
		s := mustServer(t, script, deleteWaits)
		var once sync.Once
		free := func() { once.Do(func() { close(release) }) }
		t.Cleanup(free)
		one := openTab(t, browser, s.URL+"/", 1280, 800)
		one.signInWithToken(user("gil"))
		one.addTask("Add milk", "Buy milk")
		one.send("Delete it")
		one.waitJS("the call waiting", offerButtons+` === 2`)
		conv := strings.TrimPrefix(js[string](one, `location.hash`), "#c=")
		two := openTab(t, browser, s.URL+"/#c="+conv, 1280, 800)
		two.signInWithToken(user("gil"))
		two.waitJS("the call waiting in the second tab", offerButtons+` === 2 && `+msgCount+` === 4`)

		one.click("button", "Approve")
		one.waitJS("the continuation, live", lastReplyTxt+` === 'Deleted it'`)
		two.waitJS("the continuation, live in the second tab", lastReplyTxt+` === 'Deleted it' && `+msgCount+` === 4 && `+offerButtons+` === 0`)
		two.find("button", "Stop")
		free()
		for _, b := range []*tab{one, two} {
			b.waitJS("the whole reply", lastReplyTxt+` === 'Deleted it, as you said.' && `+msgCount+` === 4 && `+occurrences("Deleted it")+` === 1`)
			b.waitJS("the task gone from the panel", `document.querySelectorAll('#task-list .task').length === 0`)
			b.find("button", "Send")
		}
	})

	t.Run("the model fails after the approved call ran: the page says so, and shows what was stored", func(t *testing.T) {
		t.Parallel()
		failing := deleteScript(func(context.Context, func(string)) (agent.Response, error) {
			return agent.Response{}, &agent.ModelError{Kind: agent.ErrModelServer, Status: 500}
		})
		s := mustServer(t, failing, deleteWaits)
		b := openTab(t, browser, s.URL+"/", 1280, 800)
		b.signInWithToken(user("hu"))
		b.addTask("Add milk", "Buy milk")
		b.send("Delete it")
		b.waitJS("the call waiting", offerButtons+` === 2`)
		b.click("button", "Approve")
		b.waitJS("the explanation", errorText+`.includes('The model is unavailable')`)
		b.waitJS("the task gone from the panel", `document.querySelectorAll('#task-list .task').length === 0`)
		b.waitJS("the thread as stored, without buttons", msgCount+` === 4 && `+offerButtons+` === 0`)
		b.find("button", "Send")
		if got := titlesOf(t, s, user("hu")); len(got) != 0 {
			t.Errorf("after Approve the tasks are %q, want none", got)
		}
	})

	t.Run("a call decided elsewhere: the page says so and takes the buttons away", func(t *testing.T) {
		t.Parallel()
		s := mustServer(t, offline.New(), deleteWaits)
		b := openTab(t, browser, s.URL+"/", 1280, 800)
		b.signInWithToken(user("dee"))
		task := b.addTask("Add a task to buy milk", "Buy milk")
		b.send("Delete task " + task)
		b.waitJS("the call waiting", offerButtons+` === 2`)
		b.find("button", "Send")

		id := int64(waitingApprovals(t, s, user("dee"))[0]["id"].(float64))
		r := s.do(t, call{method: "POST", path: fmt.Sprintf("/api/%s/approvals/%d", user("dee"), id),
			token: mustToken(t, user("dee")), body: `{"approved":true}`})
		if r.status != 200 {
			t.Fatalf("approving by the API = %d %s", r.status, r.body)
		}

		b.click("button", "Deny")
		want := fmt.Sprintf("Approval %d can no longer be decided so: it was approved already.", id)
		b.waitJS("the server's explanation", offerStatuses+`.join() === `+jsString(want)+` && `+offerButtons+` === 0`)
		b.find("button", "Send")
		if state := approvalOf(t, s, user("dee"), id)["state"]; state != "approved" {
			t.Errorf("the approval is %v, want approved as decided first", state)
		}
	})
}
