package http

// Where a compacted conversation's summary ends, in a real browser: the
// marker after the last message it covers, its summary shown as text (it
// quotes what the person wrote, so it must never be inserted as HTML), and
// the messages after it still there.

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/taskchat/taskchat/internal/agent/offline"
	"github.com/taskchat/taskchat/internal/store/storetest"
)

func TestPageCompactedInBrowser(t *testing.T) {
	t.Parallel()
	browser := mustBrowser(t)
	s := mustServer(t, offline.New())
	user := storetest.UserID(t)

	// The offline summary names the tasks its messages added: the first
	// one's title carries markup.
	const markup = "Add a task to fix the <b>x</b> tag"
	var conv int64
	for i, msg := range []string{markup, "Add a task to buy milk", "Add a task to call mom", "Show me all my tasks"} {
		r := s.chat(t, user, conv, msg)
		if r.status != 200 {
			t.Fatalf("turn %d = %d %s", i, r.status, r.body)
		}
		conv = int64(r.json(t)["conversation_id"].(float64))
	}
	r := s.compact(t, user, conv)
	var body conversationShowJSON
	if err := json.Unmarshal(r.body, &body); r.status != 200 || err != nil || body.Summary == nil {
		t.Fatalf("compact = %d %s (%v)", r.status, r.body, err)
	}
	sum := body.Summary
	if !strings.Contains(sum.Text, "<b>x</b>") {
		t.Fatalf("the summary does not quote the markup: %q", sum.Text)
	}

	r = s.do(t, call{method: "GET", path: fmt.Sprintf("/api/%s/conversations/%d/messages", user, conv), token: mustToken(t, user)})
	var page messagesResponse
	if err := json.Unmarshal(r.body, &page); r.status != 200 || err != nil {
		t.Fatalf("messages = %d %s (%v)", r.status, r.body, err)
	}
	// The thread as it should read: each message by its role (and the
	// person's by their words), the marker after the last one covered.
	var want []string
	for _, m := range page.Messages {
		if m.Role == "user" {
			want = append(want, "user: "+m.Content)
		} else {
			want = append(want, m.Role)
		}
		if m.ID == sum.ThroughMessageID {
			want = append(want, "summary")
		}
	}
	if n := slices.Index(want, "summary"); n < 0 || n == len(want)-1 {
		t.Fatalf("the summary covers through message %d: want one of the messages before the last, in %v", sum.ThroughMessageID, page.Messages)
	}

	b := openTab(t, browser, fmt.Sprintf("%s/#c=%d", s.URL, conv), 1280, 800)
	b.signInWithToken(user)
	const thread = `[...document.querySelectorAll('#thread > li')].map(li =>
		li.classList.contains('compacted') ? 'summary' :
		li.classList.contains('user') ? 'user: ' + li.querySelector('.text').textContent :
		li.classList.contains('assistant') ? 'assistant' : li.className)`
	b.waitJS("the thread", `document.querySelectorAll('#thread > li').length === `+fmt.Sprint(len(want)))
	if got := js[[]string](b, thread); !slices.Equal(got, want) {
		t.Errorf("the thread reads\n%q\nwant\n%q", got, want)
	}

	const marker = `document.querySelector('#thread > li.compacted > details')`
	if label := js[string](b, marker+`.querySelector('summary').textContent`); label != "Earlier messages summarised" {
		t.Errorf("the marker says %q", label)
	}
	if js[bool](b, marker+`.open`) {
		t.Error("the summary is open before anyone opens it")
	}
	// As a person opens it: the marker is a disclosure a screen reader
	// announces by its label.
	b.click("DisclosureTriangle", "Earlier messages summarised")
	b.waitJS("the summary open", marker+`.open && `+marker+`.querySelector('.text').offsetHeight > 0`)
	if got := js[string](b, marker+`.querySelector('.text').textContent`); got != sum.Text {
		t.Errorf("the summary shows %q, want %q", got, sum.Text)
	}
	if n := js[int](b, `document.querySelectorAll('#app b').length`); n != 0 {
		t.Errorf("the page has %d <b> elements: the summary, a message or a task title was inserted as HTML", n)
	}
}
