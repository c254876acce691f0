package http

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/taskchat/taskchat/internal/agent/offline"
	"github.com/taskchat/taskchat/internal/web"
)

func TestPageServed(t *testing.T) {
	t.Parallel()
	s := mustServer(t, offline.New())
	get := func(t *testing.T, path string, header http.Header) reply {
		t.Helper()
		r := s.do(t, call{method: "GET", path: path, header: header})
		route := path
		if strings.HasPrefix(path, "/app/") {
			route = "/app/{file}"
		}
		mustMatchSpec(t, "GET", route, r.status, r.header, r.body)
		return r
	}
	page := get(t, "/", nil)

	t.Run("the page comes with a strict policy and is revalidated on every load", func(t *testing.T) {
		if page.status != 200 || page.header.Get("Content-Type") != "text/html; charset=utf-8" {
			t.Fatalf("GET / = %d %q", page.status, page.header.Get("Content-Type"))
		}
		for name, want := range map[string]string{
			"Content-Security-Policy": web.CSP, "X-Content-Type-Options": "nosniff", "Cache-Control": "no-cache",
		} {
			if got := page.header.Get(name); got != want {
				t.Errorf("%s = %q, want %q", name, got, want)
			}
		}
		if r := get(t, "/", http.Header{"If-None-Match": {page.header.Get("ETag")}}); r.status != 304 || len(r.body) != 0 {
			t.Errorf("GET / with its ETag = %d with %d bytes, want 304 and none", r.status, len(r.body))
		}
	})

	t.Run("the page holds no inline script or style and loads nothing from elsewhere", func(t *testing.T) {
		html := string(page.body)
		for _, bad := range []*regexp.Regexp{
			regexp.MustCompile(`(?i)<script(?:\s[^>]*)?>\s*[^<\s]`), // a script with a body
			regexp.MustCompile(`(?i)<style`),
			regexp.MustCompile(`(?i)\sstyle=`),
			regexp.MustCompile(`(?i)\son[a-z]+=`),
			regexp.MustCompile(`(?i)(src|href)="(https?:)?//`),
		} {
			if m := bad.FindString(html); m != "" {
				t.Errorf("the page holds %q", m)
			}
		}
		for _, f := range []string{"app.js", "app.css", "icon.svg"} {
			if !regexp.MustCompile(`"/app/` + regexp.QuoteMeta(f) + `\?v=[A-Za-z0-9_-]+"`).MatchString(html) {
				t.Errorf("the page does not link %s with its version", f)
			}
		}
	})

	t.Run("assets have their type and are cached for good only under their version", func(t *testing.T) {
		version := regexp.MustCompile(`"/app/app\.js\?v=([A-Za-z0-9_-]+)"`).FindStringSubmatch(string(page.body))[1]
		for _, c := range []struct{ path, contentType, cache string }{
			{"/app/app.js?v=" + version, "text/javascript; charset=utf-8", "public, max-age=31536000, immutable"},
			{"/app/app.js", "text/javascript; charset=utf-8", "no-cache"},
			{"/app/app.js?v=old", "text/javascript; charset=utf-8", "no-cache"},
			{"/app/api.js", "text/javascript; charset=utf-8", "no-cache"},
			{"/app/app.css", "text/css; charset=utf-8", "no-cache"},
			{"/app/icon.svg", "image/svg+xml", "no-cache"},
		} {
			r := get(t, c.path, nil)
			if r.status != 200 || r.header.Get("Content-Type") != c.contentType || r.header.Get("Cache-Control") != c.cache ||
				r.header.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("GET %s = %d, %q, %q", c.path, r.status, r.header.Get("Content-Type"), r.header.Get("Cache-Control"))
			}
		}
		for _, path := range []string{"/app/index.html", "/app/nothing.js", "/app/"} {
			if r := s.do(t, call{method: "GET", path: path}); r.status != 404 {
				t.Errorf("GET %s = %d, want 404", path, r.status)
			}
		}
		mustMatchSpec(t, "GET", "/app/{file}", 404, s.do(t, call{method: "GET", path: "/app/nothing.js"}).header,
			s.do(t, call{method: "GET", path: "/app/nothing.js"}).body)
	})

	// http.ServeContent serves ranges and checks If-Match; the contract
	// documents what that answers, and these are the answers it documents.
	t.Run("ranges and a stale If-Match are answered as documented", func(t *testing.T) {
		for _, path := range []string{"/", "/app/app.css"} {
			for _, c := range []struct {
				header      http.Header
				status      int
				contentType string
			}{
				{http.Header{"Range": {"bytes=0-9"}}, 206, ""},
				{http.Header{"Range": {"bytes=0-1,5-6"}}, 206, "multipart/byteranges"},
				{http.Header{"Range": {"bytes=99999999-"}}, 416, "text/plain"},
				{http.Header{"Range": {"lines=1-2"}}, 416, "text/plain"},
				{http.Header{"If-Match": {`"another"`}}, 412, ""},
			} {
				r := get(t, path, c.header)
				if r.status != c.status || !strings.HasPrefix(r.header.Get("Content-Type"), c.contentType) {
					t.Errorf("GET %s with %v = %d %q, want %d %s", path, c.header, r.status, r.header.Get("Content-Type"), c.status, c.contentType)
				}
			}
		}
		if r := get(t, "/", http.Header{"Range": {"bytes=0-9"}}); string(r.body) != "<!doctype " || r.header.Get("Content-Range") == "" {
			t.Errorf("GET / with bytes 0-9 = %q, Content-Range %q", r.body, r.header.Get("Content-Range"))
		}
	})

	t.Run("every module the page imports is served", func(t *testing.T) {
		for _, name := range []string{"app.js", "api.js", "markdown.js", "thread.js", "tools.js"} {
			body := get(t, "/app/"+name, nil).body
			for _, m := range regexp.MustCompile(`from "\./([a-z]+\.js)"`).FindAllStringSubmatch(string(body), -1) {
				if r := s.do(t, call{method: "GET", path: "/app/" + m[1]}); r.status != 200 {
					t.Errorf("%s imports %s, which answers %d", name, m[1], r.status)
				}
			}
		}
	})
}

// The page learns whether the development login answers from the page
// itself, so that loading it asks no route that fails: the login is said
// on only where it is on, and only to a page addressed as it answers.
func TestPageSaysWhetherTheDevLoginAnswers(t *testing.T) {
	t.Parallel()
	off := mustServer(t, offline.New())
	on := mustServer(t, offline.New(), func(c *serverConfig) { c.api.DevLogin = DevLogin{Enabled: true, TTL: time.Hour} })
	for _, c := range []struct {
		name string
		s    *testServer
		host string
		want string
	}{
		{"off", off, "", `content="off"`},
		{"on, addressed by a loopback address", on, "", `content="on"`},
		{"on, addressed as localhost", on, "localhost:8080", `content="on"`},
		{"on, addressed by another name", on, "app.example:8080", `content="off"`},
	} {
		r := c.s.do(t, call{method: "GET", path: "/", host: c.host})
		meta := regexp.MustCompile(`<meta name="taskchat-dev-login" [^>]*>`).FindString(string(r.body))
		if r.status != 200 || !strings.Contains(meta, c.want) {
			t.Errorf("%s: GET / = %d with %q, want %s", c.name, r.status, meta, c.want)
		}
	}
	// The two pages differ, so a cached one is not taken for the other.
	if a, b := off.do(t, call{method: "GET", path: "/"}).header.Get("ETag"), on.do(t, call{method: "GET", path: "/"}).header.Get("ETag"); a == b {
		t.Errorf("both pages have the ETag %s", a)
	}
}
