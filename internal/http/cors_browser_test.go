package http

// A web app on another origin calls the API from a real browser (Debian's
// chromium, as in page_browser_test.go): the browser, not the test,
// decides what the page may send and read.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/taskchat/taskchat/internal/agent/offline"
	"github.com/taskchat/taskchat/internal/store/storetest"
)

// mustAppServer serves a blank page: a web app on an origin of its own.
func mustAppServer(tb testing.TB) *httptest.Server {
	tb.Helper()
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, "<!doctype html><title>An app on another origin</title>")
	}))
	tb.Cleanup(app.Close)
	return app
}

// onLocalhost is s's URL under the name localhost. The app is on
// 127.0.0.1 and another port: two origins on one machine, as a Vite app
// on localhost:5173 and taskchat on localhost:8080 are.
func onLocalhost(tb testing.TB, s *httptest.Server) string {
	tb.Helper()
	u, err := url.Parse(s.URL)
	if err != nil {
		tb.Fatal(err)
	}
	return "http://localhost:" + u.Port()
}

// fetched is what a page learns of an answer through fetch.
type fetched struct {
	Status int               `json:"status"`
	Header map[string]string `json:"header"` // of the names asked, those the page could read
	Text   string            `json:"text"`
	Error  string            `json:"error"` // the exception fetch threw, if it did
}

// fetchFromPage runs fetch(url, init) in the page, init being a
// JavaScript object, and reads the answer as a page does: its status, the
// headers named, and its body read chunk by chunk as a stream is.
func fetchFromPage(tb testing.TB, b *tab, url, init string, headers ...string) fetched {
	tb.Helper()
	names, _ := json.Marshal(append([]string{}, headers...))
	script := fmt.Sprintf(`(async () => {
		try {
			const r = await fetch(%s, %s);
			const header = {};
			for (const name of %s) {
				if (r.headers.has(name)) header[name] = r.headers.get(name);
			}
			const reader = r.body.getReader(), decoder = new TextDecoder();
			let text = "";
			for (;;) {
				const {done, value} = await reader.read();
				if (done) break;
				text += decoder.decode(value, {stream: true});
			}
			return {status: r.status, header, text};
		} catch (e) {
			return {error: e.name + ": " + e.message};
		}
	})()`, jsString(url), init, string(names))
	got, err := chromedp.Run(b.ctx, chromedp.Evaluate[fetched](script, chromedp.EvalAwaitPromise))
	if err != nil {
		tb.Fatalf("fetch %s: %v", url, err)
	}
	return got
}

// blockedByCORS waits for the browser to report that it refused the
// preflight of a request to url, and takes the report from b's problems:
// a fetch that fails for another reason (the server down, say) fails
// with the same TypeError.
func (b *tab) blockedByCORS(url string) bool {
	return poll(b.ctx, func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		n := len(b.problems)
		b.problems = slices.DeleteFunc(b.problems, func(p string) bool {
			return strings.Contains(p, "Access to fetch at '"+url+"'") && strings.Contains(p, "blocked by CORS policy: Response to preflight request")
		})
		return len(b.problems) < n
	})
}

func TestCORSInBrowser(t *testing.T) {
	t.Parallel()
	browser := mustBrowser(t)
	app := mustAppServer(t)
	s := mustServer(t, offline.New(), withCORS(app.URL), func(c *serverConfig) { c.api.MCP.RequestsPerMinute, c.api.MCP.Burst = 1, 1 })
	api := onLocalhost(t, s.Server)
	user := storetest.UserID(t)
	bearer := jsString("Bearer " + mustToken(t, user))
	b := openTab(t, browser, app.URL+"/", 1024, 768)

	t.Run("a JSON turn, its key and its replay", func(t *testing.T) {
		init := `{method: "POST", headers: {Authorization: ` + bearer + `, "Content-Type": "application/json", "Idempotency-Key": "browser-1"},
			body: JSON.stringify({message: "Add a task to buy oat milk"})}`
		first := fetchFromPage(t, b, api+"/api/"+user+"/chat", init, "X-Request-Id", "Idempotent-Replayed")
		if first.Error != "" || first.Status != 200 || first.Header["X-Request-Id"] == "" || !strings.Contains(first.Text, `"tool":"add_task"`) {
			t.Fatalf("the turn as the page saw it: %+v", first)
		}
		again := fetchFromPage(t, b, api+"/api/"+user+"/chat", init, "Idempotent-Replayed")
		if again.Status != 200 || again.Header["Idempotent-Replayed"] != "true" || !jsonSame(t, []byte(again.Text), []byte(first.Text)) {
			t.Fatalf("the replay as the page saw it: %+v\nthe first: %+v", again, first)
		}
	})
	t.Run("a streamed turn", func(t *testing.T) {
		got := fetchFromPage(t, b, api+"/api/"+user+"/chat", `{method: "POST",
			headers: {Authorization: `+bearer+`, "Content-Type": "application/json", Accept: "text/event-stream"},
			body: JSON.stringify({message: "What is on my list?"})}`, "Content-Type")
		if got.Status != 200 || got.Header["Content-Type"] != "text/event-stream" || !strings.Contains(got.Text, "event: start\n") || !strings.Contains(got.Text, "event: done\n") {
			t.Fatalf("the stream as the page saw it: %+v", got)
		}
	})
	t.Run("an AI SDK stream, as DefaultChatTransport sends it", func(t *testing.T) {
		got := fetchFromPage(t, b, api+"/api/"+user+"/chat/ui", `{method: "POST",
			headers: {Authorization: `+bearer+`, "Content-Type": "application/json"},
			body: `+jsString(uiBody("browser-ui-1", "submit-message", "", "Add a task to call the plumber"))+`}`, "X-Vercel-Ai-Ui-Message-Stream")
		if got.Status != 200 || got.Header["X-Vercel-Ai-Ui-Message-Stream"] != "v1" || !strings.HasSuffix(got.Text, "data: [DONE]\n\n") {
			t.Fatalf("the stream as the page saw it: %+v", got)
		}
	})
	t.Run("a 401, to refresh the token", func(t *testing.T) {
		got := fetchFromPage(t, b, api+"/api/"+user+"/tasks", `{headers: {Authorization: `+jsString("Bearer "+mustExpiredToken(t, user))+`}}`, "WWW-Authenticate")
		if got.Status != 401 || !strings.HasPrefix(got.Header["WWW-Authenticate"], "Bearer ") || !strings.Contains(got.Text, `"code":"unauthorized"`) {
			t.Fatalf("the 401 as the page saw it: %+v", got)
		}
	})
	t.Run("an MCP client, its limit and Retry-After", func(t *testing.T) {
		init := `{method: "POST", headers: {Authorization: ` + bearer + `, "Content-Type": "application/json",
			Accept: "application/json, text/event-stream", "Mcp-Protocol-Version": "2025-06-18"},
			body: ` + jsString(listToolsMessage) + `}`
		// Its preflight spent none of the budget of one request.
		if got := fetchFromPage(t, b, api+"/mcp", init); got.Status != 200 || !strings.Contains(got.Text, `"name":"add_task"`) {
			t.Fatalf("tools/list as the page saw it: %+v", got)
		}
		if got := fetchFromPage(t, b, api+"/mcp", init, "Retry-After"); got.Status != 429 || got.Header["Retry-After"] == "" {
			t.Fatalf("the 429 as the page saw it: %+v", got)
		}
	})
	t.Run("a header the API does not take fails the preflight", func(t *testing.T) {
		target := api + "/api/" + user + "/tasks"
		got := fetchFromPage(t, b, target, `{headers: {Authorization: `+bearer+`, "X-Api-Key": "k"}}`)
		if got.Error != "TypeError: Failed to fetch" || !b.blockedByCORS(target) {
			t.Fatalf("fetch with X-Api-Key: %+v, want a TypeError for CORS", got)
		}
	})
	t.Run("a server that allows another origin lets the page send and read nothing", func(t *testing.T) {
		other := mustServer(t, offline.New(), withCORS("https://app.example.com"))
		target := onLocalhost(t, other.Server) + "/api/" + user + "/chat"
		got := fetchFromPage(t, b, target, `{method: "POST",
			headers: {Authorization: `+bearer+`, "Content-Type": "application/json"},
			body: JSON.stringify({message: "Add a task to leak the list"})}`)
		if got.Error != "TypeError: Failed to fetch" || !b.blockedByCORS(target) {
			t.Fatalf("fetch: %+v, want a TypeError for CORS", got)
		}
		tasks := other.do(t, call{method: "GET", path: "/api/" + user + "/tasks", token: mustToken(t, user)})
		if strings.Contains(strings.ToLower(string(tasks.body)), "leak") {
			t.Fatalf("the refused preflight let the turn through: %s", tasks.body)
		}
	})
}
