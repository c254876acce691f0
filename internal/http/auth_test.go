package http

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/golang-jwt/jwt/v5"

	"github.com/taskchat/taskchat/internal/auth"
	"github.com/taskchat/taskchat/internal/auth/authtest"
)

const (
	authChallenge        = `Bearer realm="taskchat"`
	authInvalidChallenge = `Bearer realm="taskchat", error="invalid_token"`
)

// newAuthRouter serves GET /api/{user_id}/whoami behind both middlewares,
// answering with the user the handler sees.
func newAuthRouter(tb testing.TB, cfg auth.Config) http.Handler {
	tb.Helper()
	v := mustVerifier(tb, cfg)
	r := chi.NewRouter()
	r.Route("/api/{user_id}", func(r chi.Router) {
		r.Use(requireUser(v), requirePathUser)
		r.Get("/whoami", func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, userFrom(r.Context()))
		})
	})
	return r
}

func mustVerifier(tb testing.TB, cfg auth.Config) *auth.Verifier {
	tb.Helper()
	if cfg.Secret == nil {
		cfg.Secret = authtest.Secret
	}
	v, err := auth.NewVerifier(cfg)
	if err != nil {
		tb.Fatalf("NewVerifier: %v", err)
	}
	return v
}

// mustMint mints a token for userID whose lifetime started at start.
func mustMint(tb testing.TB, secret []byte, userID string, start time.Time, ttl time.Duration, iss, aud string) string {
	tb.Helper()
	token, err := auth.MintToken(secret, userID, ttl, iss, aud, start)
	if err != nil {
		tb.Fatalf("MintToken: %v", err)
	}
	return token
}

// authGet sends GET path with one Authorization header per value.
func authGet(h http.Handler, path string, authorization ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, path, nil)
	for _, v := range authorization {
		req.Header.Add("Authorization", v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// assertAuthProblem checks a 401 or 403 problem body, its challenge, and
// that nothing of the token came back.
func assertAuthProblem(tb testing.TB, rec *httptest.ResponseRecorder, status int, code, challenge, token string) {
	tb.Helper()
	if rec.Code != status {
		tb.Fatalf("status = %d, want %d; body %s", rec.Code, status, rec.Body)
	}
	if got := rec.Header().Get("WWW-Authenticate"); got != challenge {
		tb.Errorf("WWW-Authenticate = %q, want %q", got, challenge)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/problem+json" {
		tb.Errorf("Content-Type = %q, want application/problem+json", ct)
	}
	var p problem
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
		tb.Fatalf("body is not problem JSON: %v; %s", err, rec.Body)
	}
	if p.Code != code || p.Status != status || p.Detail == "" {
		tb.Errorf("problem = %+v, want code %q, status %d and a detail", p, code, status)
	}
	if len(token) > 8 && strings.Contains(rec.Body.String(), token) {
		tb.Errorf("the body echoes the token: %s", rec.Body)
	}
}

func TestAuthMatrix(t *testing.T) {
	t.Parallel()
	now := time.Now()
	alice := mustMint(t, authtest.Secret, "alice", now, time.Hour, "", "")
	aliceClaims := func(extra map[string]any) jwt.MapClaims {
		c := jwt.MapClaims{"sub": "alice", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
		for k, v := range extra {
			c[k] = v
		}
		return c
	}
	otherSecret := []byte("ffffffffffffffffffffffffffffffff")
	withIssAud := auth.Config{Issuer: "https://id.taskchat.dev", Audience: "taskchat-api"}

	tests := []struct {
		name      string
		cfg       auth.Config
		path      string   // default /api/alice/whoami
		header    []string // Authorization values
		status    int
		challenge string // WWW-Authenticate on 401
	}{
		{name: "missing header", status: 401, challenge: authChallenge},
		{name: "basic scheme", header: []string{"Basic YWxpY2U6c2VjcmV0"}, status: 401, challenge: authChallenge},
		{name: "bearer without token", header: []string{"Bearer"}, status: 401, challenge: authInvalidChallenge},
		{name: "bearer with blank token", header: []string{"Bearer    "}, status: 401, challenge: authInvalidChallenge},
		{name: "garbage token", header: []string{"Bearer not-a-jwt"}, status: 401, challenge: authInvalidChallenge},
		{name: "three garbage segments", header: []string{"Bearer a.b.c"}, status: 401, challenge: authInvalidChallenge},
		{name: "two authorization headers", header: []string{"Bearer " + alice, "Bearer " + alice}, status: 401, challenge: authInvalidChallenge},
		{name: "oversized token", header: []string{"Bearer " + alice + strings.Repeat("A", 9000)}, status: 401, challenge: authInvalidChallenge},
		{
			name: "tampered payload", path: "/api/bob/whoami", status: 401, challenge: authInvalidChallenge,
			header: []string{"Bearer " + authtest.WithPayload(t, alice, map[string]any{"sub": "bob", "exp": now.Add(time.Hour).Unix()})},
		},
		{name: "tampered signature", header: []string{"Bearer " + authtest.WithFlippedSignature(alice)}, status: 401, challenge: authInvalidChallenge},
		{name: "wrong key", header: []string{"Bearer " + mustMint(t, otherSecret, "alice", now, time.Hour, "", "")}, status: 401, challenge: authInvalidChallenge},
		{name: "alg none", header: []string{"Bearer " + authtest.AlgNone(t, "alice", now.Add(time.Hour))}, status: 401, challenge: authInvalidChallenge},
		{name: "HS512 with our secret", header: []string{"Bearer " + authtest.Sign(t, jwt.SigningMethodHS512, aliceClaims(nil), authtest.Secret)}, status: 401, challenge: authInvalidChallenge},
		{name: "RS256 header, HMAC signature", header: []string{"Bearer " + authtest.RS256Headed(t, authtest.Secret, "alice", now.Add(time.Hour))}, status: 401, challenge: authInvalidChallenge},
		{name: "expired beyond leeway", header: []string{"Bearer " + mustMint(t, authtest.Secret, "alice", now.Add(-2*time.Hour), 2*time.Hour-time.Minute, "", "")}, status: 401, challenge: authInvalidChallenge},
		{name: "expired within leeway", header: []string{"Bearer " + mustMint(t, authtest.Secret, "alice", now.Add(-2*time.Hour), 2*time.Hour-10*time.Second, "", "")}, status: 200},
		{
			name: "expired within a configured leeway", cfg: auth.Config{Leeway: 2 * time.Minute}, status: 200,
			header: []string{"Bearer " + mustMint(t, authtest.Secret, "alice", now.Add(-2*time.Hour), 2*time.Hour-time.Minute, "", "")},
		},
		{name: "not yet valid", header: []string{"Bearer " + mustMint(t, authtest.Secret, "alice", now.Add(5*time.Minute), time.Hour, "", "")}, status: 401, challenge: authInvalidChallenge},
		{name: "no exp", header: []string{"Bearer " + authtest.Sign(t, jwt.SigningMethodHS256, jwt.MapClaims{"sub": "alice"}, authtest.Secret)}, status: 401, challenge: authInvalidChallenge},
		{name: "exp not a number", header: []string{"Bearer " + authtest.Sign(t, jwt.SigningMethodHS256, aliceClaims(map[string]any{"exp": "tomorrow"}), authtest.Secret)}, status: 401, challenge: authInvalidChallenge},
		{name: "no sub", header: []string{"Bearer " + authtest.Sign(t, jwt.SigningMethodHS256, jwt.MapClaims{"exp": now.Add(time.Hour).Unix()}, authtest.Secret)}, status: 401, challenge: authInvalidChallenge},
		{name: "empty sub", header: []string{"Bearer " + authtest.Sign(t, jwt.SigningMethodHS256, aliceClaims(map[string]any{"sub": ""}), authtest.Secret)}, status: 401, challenge: authInvalidChallenge},
		{name: "numeric sub", header: []string{"Bearer " + authtest.Sign(t, jwt.SigningMethodHS256, aliceClaims(map[string]any{"sub": 42}), authtest.Secret)}, status: 401, challenge: authInvalidChallenge},
		{name: "sub of 256 bytes", header: []string{"Bearer " + authtest.Sign(t, jwt.SigningMethodHS256, aliceClaims(map[string]any{"sub": strings.Repeat("a", 256)}), authtest.Secret)}, status: 401, challenge: authInvalidChallenge},
		{name: "sub with a control character", path: "/api/al%07ice/whoami", header: []string{"Bearer " + authtest.Sign(t, jwt.SigningMethodHS256, aliceClaims(map[string]any{"sub": "al\aice"}), authtest.Secret)}, status: 401, challenge: authInvalidChallenge},
		{name: "issuer and audience match", cfg: withIssAud, header: []string{"Bearer " + mustMint(t, authtest.Secret, "alice", now, time.Hour, withIssAud.Issuer, withIssAud.Audience)}, status: 200},
		{name: "audience among several", cfg: withIssAud, header: []string{"Bearer " + authtest.Sign(t, jwt.SigningMethodHS256, aliceClaims(map[string]any{"iss": withIssAud.Issuer, "aud": []string{"billing", "taskchat-api"}}), authtest.Secret)}, status: 200},
		{name: "wrong issuer", cfg: withIssAud, header: []string{"Bearer " + mustMint(t, authtest.Secret, "alice", now, time.Hour, "https://evil.example", withIssAud.Audience)}, status: 401, challenge: authInvalidChallenge},
		{name: "wrong audience", cfg: withIssAud, header: []string{"Bearer " + mustMint(t, authtest.Secret, "alice", now, time.Hour, withIssAud.Issuer, "billing")}, status: 401, challenge: authInvalidChallenge},
		{name: "issuer and audience missing", cfg: withIssAud, header: []string{"Bearer " + alice}, status: 401, challenge: authInvalidChallenge},
		{name: "another user's path", path: "/api/bob/whoami", header: []string{"Bearer " + alice}, status: 403},
		{name: "the right user", header: []string{"Bearer " + alice}, status: 200},
		{name: "lower-case scheme", header: []string{"bearer " + alice}, status: 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.path
			if path == "" {
				path = "/api/alice/whoami"
			}
			rec := authGet(newAuthRouter(t, tc.cfg), path, tc.header...)
			token := ""
			if len(tc.header) > 0 {
				_, token, _ = strings.Cut(tc.header[0], " ")
			}
			switch tc.status {
			case http.StatusOK:
				if rec.Code != http.StatusOK || rec.Body.String() != "alice" {
					t.Fatalf("got %d %q, want 200 \"alice\"", rec.Code, rec.Body)
				}
			case http.StatusForbidden:
				assertAuthProblem(t, rec, tc.status, codeForbidden, "", token)
			default:
				assertAuthProblem(t, rec, tc.status, codeUnauthorized, tc.challenge, token)
			}
		})
	}
}

func TestRequirePathUserFailsClosed(t *testing.T) {
	t.Parallel()
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	t.Run("without requireUser", func(t *testing.T) {
		r := chi.NewRouter()
		r.With(requirePathUser).Get("/api/{user_id}", ok)
		assertAuthProblem(t, authGet(r, "/api/alice"), http.StatusForbidden, codeForbidden, "", "")
	})
	t.Run("without a user_id parameter", func(t *testing.T) {
		v := mustVerifier(t, auth.Config{})
		r := chi.NewRouter()
		r.With(requireUser(v), requirePathUser).Get("/api/me", ok)
		token := mustMint(t, authtest.Secret, "alice", time.Now(), time.Hour, "", "")
		assertAuthProblem(t, authGet(r, "/api/me", "Bearer "+token), http.StatusForbidden, codeForbidden, "", token)
	})
}

func TestAuthConcurrentRequests(t *testing.T) {
	t.Parallel()
	h := newAuthRouter(t, auth.Config{})
	users := []string{"alice", "bob", "carol", "dave"}
	var wg sync.WaitGroup
	for i := range 64 {
		user := users[i%len(users)]
		token := mustMint(t, authtest.Secret, user, time.Now(), time.Hour, "", "")
		wg.Go(func() {
			rec := authGet(h, "/api/"+user+"/whoami", "Bearer "+token)
			if rec.Code != http.StatusOK || rec.Body.String() != user {
				t.Errorf("%s: got %d %q", user, rec.Code, rec.Body)
			}
		})
	}
	wg.Wait()
}

func FuzzAuthorizationHeader(f *testing.F) {
	h := newAuthRouter(f, auth.Config{})
	valid := mustMint(f, authtest.Secret, "alice", time.Now(), 24*time.Hour, "", "")
	for _, seed := range []string{
		"Bearer " + valid,
		"bearer " + valid,
		"Bearer " + mustMint(f, authtest.Secret, "bob", time.Now(), 24*time.Hour, "", ""),
		"garbage",
		"Bearer ",
		"Bearer a.b.c",
		"Bearer " + authtest.AlgNone(f, "alice", time.Now().Add(time.Hour)),
		"Basic YWxpY2U6c2VjcmV0",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, header string) {
		rec := authGet(h, "/api/alice/whoami", header)
		switch rec.Code {
		case http.StatusOK:
			if rec.Body.String() != "alice" {
				t.Fatalf("200 with body %q", rec.Body)
			}
		case http.StatusUnauthorized:
			if !strings.HasPrefix(rec.Header().Get("WWW-Authenticate"), authChallenge) {
				t.Fatalf("401 without the Bearer challenge")
			}
		case http.StatusForbidden:
		default:
			t.Fatalf("status %d for Authorization %q", rec.Code, header)
		}
	})
}

// A token an identity provider signed is refused as any other is: 401 with
// the invalid_token challenge, whatever internal/auth's reason (here
// keys_unavailable: the provider never answered).
func TestJWKSRefusalIsUnauthorized(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	jwksURL := "http://" + ln.Addr().String() + "/jwks"
	ln.Close()
	h := newAuthRouter(t, auth.Config{
		Issuer: "https://auth.example.com", Audience: "taskchat-api",
		JWKS: auth.JWKSConfig{URL: jwksURL, Refresh: time.Hour, UnknownKeyRefresh: time.Minute, Timeout: time.Second},
	})
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	token := authtest.SignKID(t, jwt.SigningMethodEdDSA, "ed", jwt.MapClaims{
		"sub": "alice", "iss": "https://auth.example.com", "aud": "taskchat-api", "exp": time.Now().Add(time.Hour).Unix(),
	}, key)
	assertAuthProblem(t, authGet(h, "/api/alice/whoami", "Bearer "+token), http.StatusUnauthorized, codeUnauthorized, authInvalidChallenge, token)
}
