package main

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The server that run builds answers a browser's preflight from an
// origin CORS_ALLOWED_ORIGINS lists, however the operator wrote it, and
// from no other.
func TestRunAllowsTheOriginsConfigured(t *testing.T) {
	t.Parallel()
	base, _, _ := mustRun(t, map[string]string{"CORS_ALLOWED_ORIGINS": "HTTPS://App.Example.com:443/, http://localhost:5173"})
	waitHealthy(t, base)
	for _, c := range []struct {
		origin, allowed string
	}{
		{"https://app.example.com", "https://app.example.com"},
		{"http://localhost:5173", "http://localhost:5173"},
		{"https://evil.example.com", ""},
	} {
		req, _ := http.NewRequest("OPTIONS", base+"/api/alice/chat", nil)
		req.Header.Set("Origin", c.origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "authorization,content-type")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		h := resp.Header
		if got := h.Get("Access-Control-Allow-Origin"); resp.StatusCode != 204 || got != c.allowed {
			t.Errorf("preflight from %s: %d, Access-Control-Allow-Origin %q; want 204 and %q", c.origin, resp.StatusCode, got, c.allowed)
		}
		if c.allowed != "" && h.Get("Access-Control-Max-Age") != "600" {
			t.Errorf("preflight from %s: Access-Control-Max-Age %q, want 600", c.origin, h.Get("Access-Control-Max-Age"))
		}
	}
}

func TestConfigOfCORS(t *testing.T) {
	t.Parallel()
	base := map[string]string{"DATABASE_URL": "postgres://x@localhost/db", "JWT_SECRET": secret}
	with := func(origins string) func(string) string {
		return func(k string) string {
			if k == "CORS_ALLOWED_ORIGINS" {
				return origins
			}
			return base[k]
		}
	}
	t.Run("off by default", func(t *testing.T) {
		t.Parallel()
		cfg, err := loadConfig(with(""))
		if err != nil || cfg.CORSOrigins != nil || cfg.CORSMaxAge != 10*time.Minute {
			t.Fatalf("origins %q, max age %s, %v; want none and 10m", cfg.CORSOrigins, cfg.CORSMaxAge, err)
		}
	})
	t.Run("origins as browsers write them", func(t *testing.T) {
		t.Parallel()
		for _, c := range []struct {
			value string
			want  []string
		}{
			{"*", []string{"*"}},
			{" * ", []string{"*"}},
			{"http://localhost:5173", []string{"http://localhost:5173"}},
			{"https://app.example.com/", []string{"https://app.example.com"}},
			{"HTTPS://App.Example.COM", []string{"https://app.example.com"}},
			{"https://app.example.com:443,http://app.example.com:80", []string{"https://app.example.com", "http://app.example.com"}},
			{"http://app.example.com:443, https://app.example.com:8443", []string{"http://app.example.com:443", "https://app.example.com:8443"}},
			{"http://localhost:05173", []string{"http://localhost:5173"}},
			{"http://127.0.0.1:8081,http://[0:0:0:0:0:0:0:1]:5173", []string{"http://127.0.0.1:8081", "http://[::1]:5173"}},
			{"https://xn--bcher-kva.example,,http://my_app:3000,", []string{"https://xn--bcher-kva.example", "http://my_app:3000"}},
		} {
			cfg, err := loadConfig(with(c.value))
			if err != nil || !reflect.DeepEqual(cfg.CORSOrigins, c.want) {
				t.Errorf("%q: %q, %v; want %q", c.value, cfg.CORSOrigins, err, c.want)
			}
		}
	})
	t.Run("refused, naming the entry", func(t *testing.T) {
		t.Parallel()
		for _, c := range []struct {
			value, entry, why string
		}{
			{"app.example.com", "app.example.com", "is not an http(s) URL with a host"},
			{"localhost:5173", "localhost:5173", "is not an http(s) URL with a host"},
			{"ftp://files.example.com", "ftp://files.example.com", "is not http or https"},
			{"https://app.example.com/chat", "https://app.example.com/chat", "has more than a scheme, host and port"},
			{"https://app.example.com?x=1", "https://app.example.com?x=1", "has more than a scheme, host and port"},
			{"https://app.example.com#top", "https://app.example.com#top", "has more than a scheme, host and port"},
			{"https://ada@app.example.com", "https://ada@app.example.com", "has more than a scheme, host and port"},
			{"http://localhost:0", "http://localhost:0", "has a port out of 1-65535"},
			{"http://localhost:70000", "http://localhost:70000", "has a port out of 1-65535"},
			{"https://*.example.com", "https://*.example.com", "has a host that is not"},
			{"https://bücher.example", "https://bücher.example", "xn--"},
			{"https://app.example.com,*", "*", "is allowed only alone"},
			{",", ",", "lists no origin"},
		} {
			_, err := loadConfig(with(c.value))
			if err == nil || !strings.Contains(err.Error(), "CORS_ALLOWED_ORIGINS") || !strings.Contains(err.Error(), `"`+c.entry+`"`) || !strings.Contains(err.Error(), c.why) {
				t.Errorf("%q: %v; want an error naming CORS_ALLOWED_ORIGINS and %q, saying it %s", c.value, err, c.entry, c.why)
			}
		}
	})
	t.Run("every bad entry is named", func(t *testing.T) {
		t.Parallel()
		_, err := loadConfig(with("https://ok.example.com,https://a.example.com/x,localhost:3000"))
		for _, entry := range []string{`"https://a.example.com/x"`, `"localhost:3000"`} {
			if err == nil || !strings.Contains(err.Error(), entry) {
				t.Errorf("the error does not name %s: %v", entry, err)
			}
		}
	})
}
