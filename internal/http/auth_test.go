package http

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/golang-jwt/jwt/v5"
)

// authTestSecret is exactly the shortest secret NewAuthenticator accepts.
var authTestSecret = []byte("0123456789abcdef0123456789abcdef")

const (
	authChallenge        = `Bearer realm="taskchat"`
	authInvalidChallenge = `Bearer realm="taskchat", error="invalid_token"`
)

// newAuthRouter serves GET /api/{user_id}/whoami behind both middlewares,
// answering with the user the handler sees.
func newAuthRouter(tb testing.TB, cfg AuthConfig) http.Handler {
	tb.Helper()
	a := mustAuthenticator(tb, cfg)
	r := chi.NewRouter()
	r.Route("/api/{user_id}", func(r chi.Router) {
		r.Use(a.RequireUser, RequirePathUser)
		r.Get("/whoami", func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, userFrom(r.Context()))
		})
	})
	return r
}

func mustAuthenticator(tb testing.TB, cfg AuthConfig) *Authenticator {
	tb.Helper()
	if cfg.Secret == nil {
		cfg.Secret = authTestSecret
	}
	a, err := NewAuthenticator(cfg)
	if err != nil {
		tb.Fatalf("NewAuthenticator: %v", err)
	}
	return a
}

// mustMint mints a token for userID whose lifetime started at start.
func mustMint(tb testing.TB, secret []byte, userID string, start time.Time, ttl time.Duration, iss, aud string) string {
	tb.Helper()
	token, err := MintToken(secret, userID, ttl, iss, aud, start)
	if err != nil {
		tb.Fatalf("MintToken: %v", err)
	}
	return token
}

// mustSign signs claims with any method and key, for tokens MintToken
// rightly refuses to make.
func mustSign(tb testing.TB, method jwt.SigningMethod, claims jwt.Claims, key any) string {
	tb.Helper()
	token, err := jwt.NewWithClaims(method, claims).SignedString(key)
	if err != nil {
		tb.Fatalf("sign %s token: %v", method.Alg(), err)
	}
	return token
}

// authSegment is one base64url JSON segment of a hand-made token.
func authSegment(tb testing.TB, v any) string {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatalf("marshal segment: %v", err)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// algNoneToken is an unsigned token for user, as an attacker would write it.
func algNoneToken(tb testing.TB, user string, exp time.Time) string {
	tb.Helper()
	header := authSegment(tb, map[string]string{"alg": "none", "typ": "JWT"})
	return header + "." + authSegment(tb, map[string]any{"sub": user, "exp": exp.Unix()}) + "."
}

// rs256HeadedToken claims RS256 but is an HMAC-SHA256 over our secret: the
// classic algorithm-confusion forgery.
func rs256HeadedToken(tb testing.TB, user string, exp time.Time) string {
	tb.Helper()
	signing := authSegment(tb, map[string]string{"alg": "RS256", "typ": "JWT"}) + "." +
		authSegment(tb, map[string]any{"sub": user, "exp": exp.Unix()})
	sig, err := jwt.SigningMethodHS256.Sign(signing, authTestSecret)
	if err != nil {
		tb.Fatalf("sign: %v", err)
	}
	return signing + "." + base64.RawURLEncoding.EncodeToString(sig)
}

// withPayload swaps token's payload for claims and keeps its signature.
func withPayload(tb testing.TB, token string, claims map[string]any) string {
	tb.Helper()
	parts := strings.Split(token, ".")
	parts[1] = authSegment(tb, claims)
	return strings.Join(parts, ".")
}

// withFlippedSignature changes the first signature character, which is
// significant in every bit (the last one has padding bits).
func withFlippedSignature(token string) string {
	i := strings.LastIndexByte(token, '.') + 1
	c := byte('A')
	if token[i] == 'A' {
		c = 'B'
	}
	return token[:i] + string(c) + token[i+1:]
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
	now := time.Now()
	alice := mustMint(t, authTestSecret, "alice", now, time.Hour, "", "")
	aliceClaims := func(extra map[string]any) jwt.MapClaims {
		c := jwt.MapClaims{"sub": "alice", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
		for k, v := range extra {
			c[k] = v
		}
		return c
	}
	otherSecret := []byte("ffffffffffffffffffffffffffffffff")
	withIssAud := AuthConfig{Issuer: "https://id.taskchat.dev", Audience: "taskchat-api"}

	tests := []struct {
		name      string
		cfg       AuthConfig
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
			header: []string{"Bearer " + withPayload(t, alice, map[string]any{"sub": "bob", "exp": now.Add(time.Hour).Unix()})},
		},
		{name: "tampered signature", header: []string{"Bearer " + withFlippedSignature(alice)}, status: 401, challenge: authInvalidChallenge},
		{name: "wrong key", header: []string{"Bearer " + mustMint(t, otherSecret, "alice", now, time.Hour, "", "")}, status: 401, challenge: authInvalidChallenge},
		{name: "alg none", header: []string{"Bearer " + algNoneToken(t, "alice", now.Add(time.Hour))}, status: 401, challenge: authInvalidChallenge},
		{name: "HS512 with our secret", header: []string{"Bearer " + mustSign(t, jwt.SigningMethodHS512, aliceClaims(nil), authTestSecret)}, status: 401, challenge: authInvalidChallenge},
		{name: "RS256 header, HMAC signature", header: []string{"Bearer " + rs256HeadedToken(t, "alice", now.Add(time.Hour))}, status: 401, challenge: authInvalidChallenge},
		{name: "expired beyond leeway", header: []string{"Bearer " + mustMint(t, authTestSecret, "alice", now.Add(-2*time.Hour), 2*time.Hour-time.Minute, "", "")}, status: 401, challenge: authInvalidChallenge},
		{name: "expired within leeway", header: []string{"Bearer " + mustMint(t, authTestSecret, "alice", now.Add(-2*time.Hour), 2*time.Hour-10*time.Second, "", "")}, status: 200},
		{
			name: "expired within a configured leeway", cfg: AuthConfig{Leeway: 2 * time.Minute}, status: 200,
			header: []string{"Bearer " + mustMint(t, authTestSecret, "alice", now.Add(-2*time.Hour), 2*time.Hour-time.Minute, "", "")},
		},
		{name: "not yet valid", header: []string{"Bearer " + mustMint(t, authTestSecret, "alice", now.Add(5*time.Minute), time.Hour, "", "")}, status: 401, challenge: authInvalidChallenge},
		{name: "no exp", header: []string{"Bearer " + mustSign(t, jwt.SigningMethodHS256, jwt.MapClaims{"sub": "alice"}, authTestSecret)}, status: 401, challenge: authInvalidChallenge},
		{name: "exp not a number", header: []string{"Bearer " + mustSign(t, jwt.SigningMethodHS256, aliceClaims(map[string]any{"exp": "tomorrow"}), authTestSecret)}, status: 401, challenge: authInvalidChallenge},
		{name: "no sub", header: []string{"Bearer " + mustSign(t, jwt.SigningMethodHS256, jwt.MapClaims{"exp": now.Add(time.Hour).Unix()}, authTestSecret)}, status: 401, challenge: authInvalidChallenge},
		{name: "empty sub", header: []string{"Bearer " + mustSign(t, jwt.SigningMethodHS256, aliceClaims(map[string]any{"sub": ""}), authTestSecret)}, status: 401, challenge: authInvalidChallenge},
		{name: "numeric sub", header: []string{"Bearer " + mustSign(t, jwt.SigningMethodHS256, aliceClaims(map[string]any{"sub": 42}), authTestSecret)}, status: 401, challenge: authInvalidChallenge},
		{name: "sub of 256 bytes", header: []string{"Bearer " + mustSign(t, jwt.SigningMethodHS256, aliceClaims(map[string]any{"sub": strings.Repeat("a", 256)}), authTestSecret)}, status: 401, challenge: authInvalidChallenge},
		{name: "sub with a control character", path: "/api/al%07ice/whoami", header: []string{"Bearer " + mustSign(t, jwt.SigningMethodHS256, aliceClaims(map[string]any{"sub": "al\aice"}), authTestSecret)}, status: 401, challenge: authInvalidChallenge},
		{name: "issuer and audience match", cfg: withIssAud, header: []string{"Bearer " + mustMint(t, authTestSecret, "alice", now, time.Hour, withIssAud.Issuer, withIssAud.Audience)}, status: 200},
		{name: "audience among several", cfg: withIssAud, header: []string{"Bearer " + mustSign(t, jwt.SigningMethodHS256, aliceClaims(map[string]any{"iss": withIssAud.Issuer, "aud": []string{"billing", "taskchat-api"}}), authTestSecret)}, status: 200},
		{name: "wrong issuer", cfg: withIssAud, header: []string{"Bearer " + mustMint(t, authTestSecret, "alice", now, time.Hour, "https://evil.example", withIssAud.Audience)}, status: 401, challenge: authInvalidChallenge},
		{name: "wrong audience", cfg: withIssAud, header: []string{"Bearer " + mustMint(t, authTestSecret, "alice", now, time.Hour, withIssAud.Issuer, "billing")}, status: 401, challenge: authInvalidChallenge},
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

func TestNewAuthenticatorRefusesWeakSecret(t *testing.T) {
	_, err := NewAuthenticator(AuthConfig{Secret: authTestSecret[:31]})
	if !errors.Is(err, ErrWeakSecret) {
		t.Fatalf("31-byte secret: err = %v, want ErrWeakSecret", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "JWT_SECRET") || !strings.Contains(msg, "32") {
		t.Errorf("error %q should name JWT_SECRET and the 32-byte minimum", msg)
	}
	if _, err := NewAuthenticator(AuthConfig{Secret: authTestSecret}); err != nil {
		t.Errorf("32-byte secret: %v", err)
	}
	if _, err := NewAuthenticator(AuthConfig{Secret: authTestSecret, Leeway: -time.Second}); err == nil {
		t.Error("a negative leeway was accepted")
	}
}

func TestAuthenticatorKeepsItsOwnSecret(t *testing.T) {
	secret := append([]byte(nil), authTestSecret...)
	a := mustAuthenticator(t, AuthConfig{Secret: secret})
	secret[0] ^= 0xff
	token := mustMint(t, authTestSecret, "alice", time.Now(), time.Minute, "", "")
	if _, err := a.Verify(token); err != nil {
		t.Fatalf("changing the caller's slice changed the authenticator: %v", err)
	}
}

func TestMintTokenRoundTrip(t *testing.T) {
	t.Run("plain", func(t *testing.T) {
		a := mustAuthenticator(t, AuthConfig{})
		token := mustMint(t, authTestSecret, "user-ü@example.com", time.Now(), time.Minute, "", "")
		if got, err := a.Verify(token); err != nil || got != "user-ü@example.com" {
			t.Fatalf("Verify = %q, %v", got, err)
		}
	})
	t.Run("claims", func(t *testing.T) {
		now := time.Unix(1_700_000_000, 0)
		token := mustMint(t, authTestSecret, "alice", now, time.Hour, "iss-1", "aud-1")
		var c jwt.RegisteredClaims
		if _, _, err := jwt.NewParser().ParseUnverified(token, &c); err != nil {
			t.Fatal(err)
		}
		if c.Subject != "alice" || c.Issuer != "iss-1" || len(c.Audience) != 1 || c.Audience[0] != "aud-1" ||
			!c.IssuedAt.Equal(now) || !c.NotBefore.Equal(now) || !c.ExpiresAt.Equal(now.Add(time.Hour)) {
			t.Errorf("claims = %+v", c)
		}
	})
	t.Run("refuses bad input", func(t *testing.T) {
		now := time.Now()
		for name, mint := range map[string]func() (string, error){
			"weak secret":   func() (string, error) { return MintToken(authTestSecret[:31], "alice", time.Hour, "", "", now) },
			"empty user":    func() (string, error) { return MintToken(authTestSecret, "", time.Hour, "", "", now) },
			"control chars": func() (string, error) { return MintToken(authTestSecret, "a\nb", time.Hour, "", "", now) },
			"zero ttl":      func() (string, error) { return MintToken(authTestSecret, "alice", 0, "", "", now) },
		} {
			if _, err := mint(); err == nil {
				t.Errorf("%s: MintToken succeeded", name)
			}
		}
	})
}

func TestVerifyErrorsNeverEchoToken(t *testing.T) {
	a := mustAuthenticator(t, AuthConfig{})
	now := time.Now()
	for _, token := range []string{
		"eyJhbGciOiJIUzI1NiJ9.secret-looking-payload.sig",
		algNoneToken(t, "alice", now.Add(time.Hour)),
		mustMint(t, authTestSecret, "alice", now.Add(-2*time.Hour), time.Hour, "", ""),
		withFlippedSignature(mustMint(t, authTestSecret, "alice", now, time.Hour, "", "")),
	} {
		_, err := a.Verify(token)
		if !errors.Is(err, ErrInvalidToken) {
			t.Errorf("err = %v, want ErrInvalidToken", err)
			continue
		}
		for _, part := range strings.Split(token, ".") {
			if len(part) > 8 && strings.Contains(err.Error(), part) {
				t.Errorf("error %q echoes a token segment", err)
			}
		}
	}
}

func TestRequirePathUserFailsClosed(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	t.Run("without RequireUser", func(t *testing.T) {
		r := chi.NewRouter()
		r.With(RequirePathUser).Get("/api/{user_id}", ok)
		assertAuthProblem(t, authGet(r, "/api/alice"), http.StatusForbidden, codeForbidden, "", "")
	})
	t.Run("without a user_id parameter", func(t *testing.T) {
		a := mustAuthenticator(t, AuthConfig{})
		r := chi.NewRouter()
		r.With(a.RequireUser, RequirePathUser).Get("/api/me", ok)
		token := mustMint(t, authTestSecret, "alice", time.Now(), time.Hour, "", "")
		assertAuthProblem(t, authGet(r, "/api/me", "Bearer "+token), http.StatusForbidden, codeForbidden, "", token)
	})
}

func TestAuthConcurrentRequests(t *testing.T) {
	h := newAuthRouter(t, AuthConfig{})
	users := []string{"alice", "bob", "carol", "dave"}
	var wg sync.WaitGroup
	for i := range 64 {
		user := users[i%len(users)]
		token := mustMint(t, authTestSecret, user, time.Now(), time.Hour, "", "")
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
	h := newAuthRouter(f, AuthConfig{})
	valid := mustMint(f, authTestSecret, "alice", time.Now(), 24*time.Hour, "", "")
	for _, seed := range []string{
		"Bearer " + valid,
		"bearer " + valid,
		"Bearer " + mustMint(f, authTestSecret, "bob", time.Now(), 24*time.Hour, "", ""),
		"garbage",
		"Bearer ",
		"Bearer a.b.c",
		"Bearer " + algNoneToken(f, "alice", time.Now().Add(time.Hour)),
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
