package http

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/taskchat/taskchat/internal/agent/offline"
	"github.com/taskchat/taskchat/internal/store/storetest"
)

// withDevLogin turns the development login on.
func withDevLogin(c *serverConfig) {
	c.api.DevLogin = DevLogin{Enabled: true, TTL: time.Hour}
}

func TestDevLogin(t *testing.T) {
	t.Parallel()
	t.Run("a name gets a token that opens that user's API", func(t *testing.T) {
		s := mustServer(t, offline.New(), withDevLogin)
		user := storetest.UserID(t)
		before := time.Now()
		r := s.do(t, call{method: "POST", path: "/auth/dev/token", body: `{"user_id":"` + user + `"}`})
		mustMatchSpec(t, "POST", "/auth/dev/token", r.status, r.header, r.body)
		if r.status != 200 {
			t.Fatalf("status %d, body %s", r.status, r.body)
		}
		var got devTokenResponse
		if err := json.Unmarshal(r.body, &got); err != nil {
			t.Fatal(err)
		}
		if lo, hi := before.Add(time.Hour-time.Second), time.Now().Add(time.Hour); got.ExpiresAt.Before(lo) || got.ExpiresAt.After(hi) {
			t.Errorf("expires_at %s, want about an hour from now", got.ExpiresAt)
		}
		tasks := s.do(t, call{method: "GET", path: "/api/" + user + "/tasks", token: got.Token})
		if tasks.status != 200 {
			t.Errorf("GET tasks with the dev token: %d %s", tasks.status, tasks.body)
		}
		other := s.do(t, call{method: "GET", path: "/api/someone-else/tasks", token: got.Token})
		if other.status != 403 {
			t.Errorf("another user's tasks with the dev token: %d, want 403", other.status)
		}
	})

	t.Run("bad bodies are problems", func(t *testing.T) {
		s := mustServer(t, offline.New(), withDevLogin)
		cases := []struct {
			name, body string
			status     int
			field      string
		}{
			{"empty object", `{}`, 400, "user_id"},
			{"empty user", `{"user_id":""}`, 400, "user_id"},
			{"too long", `{"user_id":"` + strings.Repeat("a", 256) + `"}`, 400, "user_id"},
			{"control character", `{"user_id":"a\u0007b"}`, 400, "user_id"},
			{"wrong type", `{"user_id":7}`, 400, "user_id"},
			{"unknown member", `{"user_id":"alice","admin":true}`, 400, "admin"},
			{"not JSON", `alice`, 400, ""},
			{"too large", `{"user_id":"` + strings.Repeat("a", 5000) + `"}`, 413, ""},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				r := s.do(t, call{method: "POST", path: "/auth/dev/token", body: c.body})
				mustMatchSpec(t, "POST", "/auth/dev/token", r.status, r.header, r.body)
				if r.status != c.status {
					t.Fatalf("status %d, want %d: %s", r.status, c.status, r.body)
				}
				if c.field != "" && !strings.Contains(string(r.body), `"field":"`+c.field+`"`) {
					t.Errorf("body %s does not name field %q", r.body, c.field)
				}
			})
		}
	})

	t.Run("a form body is refused", func(t *testing.T) {
		s := mustServer(t, offline.New(), withDevLogin)
		r := s.do(t, call{method: "POST", path: "/auth/dev/token", body: "user_id=alice",
			header: map[string][]string{"Content-Type": {"application/x-www-form-urlencoded"}}})
		mustMatchSpec(t, "POST", "/auth/dev/token", r.status, r.header, r.body)
		if r.status != 415 {
			t.Errorf("status %d, want 415", r.status)
		}
	})

	t.Run("a request addressed to another name is misdirected", func(t *testing.T) {
		// As a web page whose name was rebound to 127.0.0.1 sends it.
		s := mustServer(t, offline.New(), withDevLogin)
		r := s.do(t, call{method: "POST", path: "/auth/dev/token", body: `{"user_id":"alice"}`, host: "attacker.example:8080"})
		mustMatchSpec(t, "POST", "/auth/dev/token", r.status, r.header, r.body)
		if r.status != 421 || !strings.Contains(string(r.body), `"code":"misdirected_request"`) || strings.Contains(string(r.body), "token\"") {
			t.Fatalf("status %d, body %s; want 421 misdirected_request and no token", r.status, r.body)
		}
		for _, host := range []string{"localhost:8080", "LOCALHOST", "app.localhost:8080", "127.0.0.1:8080", "127.0.0.2", "[::1]:8080"} {
			if r := s.do(t, call{method: "POST", path: "/auth/dev/token", body: `{"user_id":"alice"}`, host: host}); r.status != 200 {
				t.Errorf("Host %s: status %d, want 200: %s", host, r.status, r.body)
			}
		}
	})

	t.Run("off by default: the route does not exist", func(t *testing.T) {
		s := mustServer(t, offline.New())
		r := s.do(t, call{method: "POST", path: "/auth/dev/token", body: `{"user_id":"alice"}`})
		mustMatchSpec(t, "POST", "/auth/dev/token", r.status, r.header, r.body)
		if r.status != 404 {
			t.Errorf("status %d, want 404: %s", r.status, r.body)
		}
	})
}
