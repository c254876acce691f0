package http

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/golang-jwt/jwt/v5"
)

// The issuer and audience an identity provider such as Better Auth puts in
// its tokens: its own base URL, by default.
const (
	idpIssuer   = "https://auth.example.com"
	idpAudience = "https://auth.example.com"
)

// idpKeys are the provider's signing keys, made once: RSA keys are slow to
// generate.
type idpKeys struct {
	ed      ed25519.PrivateKey
	rsa     *rsa.PrivateKey
	p256    *ecdsa.PrivateKey
	p384    *ecdsa.PrivateKey
	weakRSA *rsa.PrivateKey // 1024 bits
	rotated ed25519.PrivateKey
	other   ed25519.PrivateKey // an attacker's
}

var (
	testIDPKeysOnce sync.Once
	testIDPKeys     idpKeys
)

func mustIDPKeys(tb testing.TB) idpKeys {
	tb.Helper()
	testIDPKeysOnce.Do(func() {
		k := &testIDPKeys
		_, k.ed, _ = ed25519.GenerateKey(rand.Reader)
		_, k.rotated, _ = ed25519.GenerateKey(rand.Reader)
		_, k.other, _ = ed25519.GenerateKey(rand.Reader)
		k.rsa, _ = rsa.GenerateKey(rand.Reader, 2048)
		k.weakRSA, _ = rsa.GenerateKey(rand.Reader, 1024)
		k.p256, _ = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		k.p384, _ = ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	})
	if testIDPKeys.rsa == nil || testIDPKeys.p256 == nil || testIDPKeys.weakRSA == nil {
		tb.Fatal("generating the test keys failed")
	}
	return testIDPKeys
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// publicJWK is pub as a provider publishes it, with kid and any members
// of extra (alg, use, key_ops...). It is written out by hand rather than
// with jwkset, so that the test does not check the library against itself.
func publicJWK(tb testing.TB, kid string, pub any, extra map[string]any) map[string]any {
	tb.Helper()
	jwk := map[string]any{"kid": kid}
	switch k := pub.(type) {
	case ed25519.PublicKey:
		jwk["kty"], jwk["crv"], jwk["x"] = "OKP", "Ed25519", b64(k)
	case *rsa.PublicKey:
		jwk["kty"], jwk["n"], jwk["e"] = "RSA", b64(k.N.Bytes()), b64(big.NewInt(int64(k.E)).Bytes())
	case *ecdsa.PublicKey:
		point, err := k.Bytes() // 0x04 || X || Y
		if err != nil {
			tb.Fatal(err)
		}
		size := (len(point) - 1) / 2
		jwk["kty"], jwk["crv"] = "EC", k.Curve.Params().Name
		jwk["x"], jwk["y"] = b64(point[1:1+size]), b64(point[1+size:])
	default:
		tb.Fatalf("no JWK for %T", pub)
	}
	for name, v := range extra {
		jwk[name] = v
	}
	return jwk
}

// jwksServer serves a key set the test changes as it goes, and counts the
// fetches.
type jwksServer struct {
	*httptest.Server
	fetches atomic.Int64
	mu      sync.Mutex
	keys    []map[string]any
	status  int // when not 0, every fetch is answered with it
}

func newJWKSServer(tb testing.TB, keys ...map[string]any) *jwksServer {
	tb.Helper()
	s := &jwksServer{keys: keys}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.fetches.Add(1)
		s.mu.Lock()
		status, body := s.status, map[string]any{"keys": s.keys}
		s.mu.Unlock()
		if status != 0 {
			w.WriteHeader(status)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(body)
	}))
	tb.Cleanup(s.Close)
	return s
}

func (s *jwksServer) url() string { return s.URL + "/api/auth/jwks" }

func (s *jwksServer) setKeys(keys ...map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys = keys
}

func (s *jwksServer) setStatus(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status = status
}

// logBuffer collects an authenticator's log lines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// testJWKS is the JWKS configuration of these tests: no periodic refresh
// within a test unless it asks for one, so that fetch counts are exact.
func testJWKS(url string) JWKSConfig {
	return JWKSConfig{URL: url, Refresh: time.Hour, UnknownKeyRefresh: time.Minute, Timeout: 5 * time.Second}
}

// mustJWKSAuthenticator trusts the key set at url, with the provider's
// issuer and audience; change adjusts the configuration first.
func mustJWKSAuthenticator(tb testing.TB, url string, change func(*AuthConfig)) (*Authenticator, *logBuffer) {
	tb.Helper()
	logs := &logBuffer{}
	cfg := AuthConfig{
		Issuer: idpIssuer, Audience: idpAudience, JWKS: testJWKS(url),
		Log: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if change != nil {
		change(&cfg)
	}
	a, err := NewAuthenticator(cfg)
	if err != nil {
		tb.Fatalf("NewAuthenticator: %v", err)
	}
	tb.Cleanup(a.Close)
	return a, logs
}

// idpClaims are the claims of a token the provider issues for sub.
func idpClaims(sub string, extra jwt.MapClaims) jwt.MapClaims {
	now := time.Now()
	c := jwt.MapClaims{"sub": sub, "iss": idpIssuer, "aud": idpAudience, "iat": now.Unix(), "exp": now.Add(15 * time.Minute).Unix()}
	for k, v := range extra {
		c[k] = v
	}
	return c
}

// mustSignKID signs claims with method and key, naming kid in the header
// when it is not empty.
func mustSignKID(tb testing.TB, method jwt.SigningMethod, kid string, claims jwt.Claims, key any) string {
	tb.Helper()
	t := jwt.NewWithClaims(method, claims)
	if kid != "" {
		t.Header["kid"] = kid
	}
	token, err := t.SignedString(key)
	if err != nil {
		tb.Fatalf("sign %s token: %v", method.Alg(), err)
	}
	return token
}

// assertRefused checks that a refuses token, for reason, and that the
// API answers it 401 with the invalid_token challenge.
func assertRefused(tb testing.TB, a *Authenticator, token, reason string) {
	tb.Helper()
	user, err := a.Verify(token)
	if !errors.Is(err, ErrInvalidToken) {
		tb.Fatalf("Verify = %q, %v; want ErrInvalidToken", user, err)
	}
	if got := a.rejectionReason(err, token); got != reason {
		tb.Errorf("reason = %q, want %q (%v)", got, reason, err)
	}
	rec := authGet(whoamiRouter(a), "/api/alice/whoami", "Bearer "+token)
	assertAuthProblem(tb, rec, http.StatusUnauthorized, codeUnauthorized, authInvalidChallenge, token)
}

func assertVerified(tb testing.TB, a *Authenticator, token, user string) {
	tb.Helper()
	if got, err := a.Verify(token); err != nil || got != user {
		tb.Fatalf("Verify = %q, %v; want %q (reason %s)", got, err, user, a.rejectionReason(err, token))
	}
}

// whoamiRouter serves GET /api/{user_id}/whoami behind a's middleware.
func whoamiRouter(a *Authenticator) http.Handler {
	r := chi.NewRouter()
	r.With(a.RequireUser, RequirePathUser).Get("/api/{user_id}/whoami", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(userFrom(r.Context())))
	})
	return r
}

// A provider's EdDSA, RS256 and ES256 tokens are verified with the key
// their kid names, from one fetch of the set.
func TestJWKSVerifiesEachAlgorithm(t *testing.T) {
	k := mustIDPKeys(t)
	srv := newJWKSServer(t,
		publicJWK(t, "ed", k.ed.Public(), map[string]any{"alg": "EdDSA"}), // as Better Auth publishes it
		publicJWK(t, "rsa", &k.rsa.PublicKey, map[string]any{"use": "sig", "alg": "RS256"}),
		publicJWK(t, "p256", &k.p256.PublicKey, nil), // neither alg nor use: both are optional
	)
	a, logs := mustJWKSAuthenticator(t, srv.url(), nil)
	for _, tc := range []struct {
		method jwt.SigningMethod
		kid    string
		key    any
	}{
		{jwt.SigningMethodEdDSA, "ed", k.ed},
		{jwt.SigningMethodRS256, "rsa", k.rsa},
		{jwt.SigningMethodES256, "p256", k.p256},
	} {
		t.Run(tc.method.Alg(), func(t *testing.T) {
			user := "user-" + tc.kid
			token := mustSignKID(t, tc.method, tc.kid, idpClaims(user, nil), tc.key)
			assertVerified(t, a, token, user)
			rec := authGet(whoamiRouter(a), "/api/"+user+"/whoami", "Bearer "+token)
			if rec.Code != http.StatusOK || rec.Body.String() != user {
				t.Fatalf("GET whoami = %d %q, want 200 %q", rec.Code, rec.Body, user)
			}
		})
	}
	if n := srv.fetches.Load(); n != 1 {
		t.Errorf("the key set was fetched %d times, want once", n)
	}
	if !strings.Contains(logs.String(), `"msg":"JWKS loaded"`) || !strings.Contains(logs.String(), `"keys":3`) {
		t.Errorf("the start did not log the keys it loaded:\n%s", logs)
	}
}

// Every token the issue lists is refused, each for a reason an operator
// can act on, and answered 401.
func TestJWKSRefusals(t *testing.T) {
	k := mustIDPKeys(t)
	srv := newJWKSServer(t,
		publicJWK(t, "ed", k.ed.Public(), map[string]any{"alg": "EdDSA"}),
		publicJWK(t, "rsa", &k.rsa.PublicKey, map[string]any{"use": "sig"}),
		publicJWK(t, "p256", &k.p256.PublicKey, nil),
		publicJWK(t, "p384", &k.p384.PublicKey, nil),
		publicJWK(t, "rsa-enc", &k.rsa.PublicKey, map[string]any{"use": "enc"}),
		publicJWK(t, "rsa-encrypt-ops", &k.rsa.PublicKey, map[string]any{"key_ops": []string{"encrypt"}}),
		publicJWK(t, "rsa-512", &k.rsa.PublicKey, map[string]any{"alg": "RS512"}),
		publicJWK(t, "rsa-1024", &k.weakRSA.PublicKey, nil),
	)
	a, _ := mustJWKSAuthenticator(t, srv.url(), nil)
	claims := idpClaims("alice", nil)
	edPublic := []byte(k.ed.Public().(ed25519.PublicKey))
	good := mustSignKID(t, jwt.SigningMethodEdDSA, "ed", claims, k.ed)

	cases := []struct {
		name, token, reason string
	}{
		{"alg none", algNoneToken(t, "alice", time.Now().Add(time.Hour)), reasonWrongAlgorithm},
		{"HS256 to a JWKS-only server", mustSignKID(t, jwt.SigningMethodHS256, "", claims, authTestSecret), reasonWrongAlgorithm},
		{"HS256 keyed with the provider's public key", mustSignKID(t, jwt.SigningMethodHS256, "ed", claims, edPublic), reasonWrongAlgorithm},
		{"PS256, an algorithm not accepted", mustSignKID(t, jwt.SigningMethodPS256, "rsa", claims, k.rsa), reasonWrongAlgorithm},
		{"RS256 naming the Ed25519 key", mustSignKID(t, jwt.SigningMethodRS256, "ed", claims, k.rsa), reasonWrongKey},
		{"ES256 naming the RSA key", mustSignKID(t, jwt.SigningMethodES256, "rsa", claims, k.p256), reasonWrongKey},
		{"EdDSA naming the P-256 key", mustSignKID(t, jwt.SigningMethodEdDSA, "p256", claims, k.ed), reasonWrongKey},
		{"ES256 naming a P-384 key", mustSignKID(t, jwt.SigningMethodES256, "p384", claims, k.p256), reasonWrongKey},
		{"a key whose use is enc", mustSignKID(t, jwt.SigningMethodRS256, "rsa-enc", claims, k.rsa), reasonWrongKey},
		{"a key whose key_ops lack verify", mustSignKID(t, jwt.SigningMethodRS256, "rsa-encrypt-ops", claims, k.rsa), reasonWrongKey},
		{"a key whose alg disagrees with the header", mustSignKID(t, jwt.SigningMethodRS256, "rsa-512", claims, k.rsa), reasonWrongKey},
		{"an RSA key under 2048 bits", mustSignKID(t, jwt.SigningMethodRS256, "rsa-1024", claims, k.weakRSA), reasonWrongKey},
		{"a tampered signature", withFlippedSignature(good), reasonBadSignature},
		{"a tampered payload", withPayload(t, good, map[string]any{"sub": "bob", "iss": idpIssuer, "aud": idpAudience, "exp": time.Now().Add(time.Hour).Unix()}), reasonBadSignature},
		{"signed by another key under a known kid", mustSignKID(t, jwt.SigningMethodEdDSA, "ed", claims, k.other), reasonBadSignature},
		{"another issuer", mustSignKID(t, jwt.SigningMethodEdDSA, "ed", idpClaims("alice", jwt.MapClaims{"iss": "https://evil.example"}), k.ed), reasonWrongIssuer},
		{"another audience", mustSignKID(t, jwt.SigningMethodEdDSA, "ed", idpClaims("alice", jwt.MapClaims{"aud": "https://billing.example.com"}), k.ed), reasonWrongAudience},
		{"no issuer or audience", mustSignKID(t, jwt.SigningMethodEdDSA, "ed", jwt.MapClaims{"sub": "alice", "exp": time.Now().Add(time.Hour).Unix()}, k.ed), reasonWrongIssuer},
		{"expired", mustSignKID(t, jwt.SigningMethodEdDSA, "ed", idpClaims("alice", jwt.MapClaims{"exp": time.Now().Add(-time.Hour).Unix()}), k.ed), reasonExpired},
		{"no kid", mustSignKID(t, jwt.SigningMethodEdDSA, "", claims, k.ed), reasonUnknownKey},
		{"a kid that is not a string", withHeader(t, good, map[string]any{"alg": "EdDSA", "kid": 7}), reasonUnknownKey},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { assertRefused(t, a, tc.token, tc.reason) })
	}
	assertVerified(t, a, good, "alice")
	if n := srv.fetches.Load(); n != 1 {
		t.Errorf("the key set was fetched %d times; no case names an unknown kid, so want once", n)
	}
}

// A provider that publishes a private key has leaked it: anyone who reads
// the set can sign with it, so the tokens naming it prove nothing. They
// are refused, and the load says why; the set's other keys keep working.
func TestJWKSRefusesAPublishedPrivateKey(t *testing.T) {
	k := mustIDPKeys(t)
	leaked := publicJWK(t, "leaked", k.rotated.Public(), map[string]any{"alg": "EdDSA", "d": b64(k.rotated.Seed())})
	srv := newJWKSServer(t, publicJWK(t, "ed", k.ed.Public(), nil), leaked)
	a, logs := mustJWKSAuthenticator(t, srv.url(), nil)
	assertRefused(t, a, mustSignKID(t, jwt.SigningMethodEdDSA, "leaked", idpClaims("alice", nil), k.rotated), reasonWrongKey)
	if !strings.Contains(logs.String(), `"msg":"the JWKS publishes a private key`) || !strings.Contains(logs.String(), `"kid":"leaked"`) {
		t.Errorf("the load did not say the set holds a private key:\n%s", logs)
	}
	if strings.Contains(logs.String(), b64(k.rotated.Seed())) {
		t.Errorf("the log holds the private key:\n%s", logs)
	}
	assertVerified(t, a, mustSignKID(t, jwt.SigningMethodEdDSA, "ed", idpClaims("alice", nil), k.ed), "alice")
}

// withHeader swaps token's header for header and keeps the rest.
func withHeader(tb testing.TB, token string, header map[string]any) string {
	tb.Helper()
	parts := strings.Split(token, ".")
	parts[0] = authSegment(tb, header)
	return strings.Join(parts, ".")
}

// A flood of made-up kids costs the provider one fetch a minute, however
// many there are and however they arrive; the known keys keep working.
func TestJWKSFloodOfUnknownKidsFetchesOncePerMinute(t *testing.T) {
	k := mustIDPKeys(t)
	srv := newJWKSServer(t, publicJWK(t, "ed", k.ed.Public(), nil))
	a, _ := mustJWKSAuthenticator(t, srv.url(), nil)
	forged := func(i int) string {
		return mustSignKID(t, jwt.SigningMethodEdDSA, fmt.Sprintf("random-%d-%d", i, time.Now().UnixNano()), idpClaims("alice", nil), k.other)
	}
	var wg sync.WaitGroup
	for i := range 100 {
		wg.Go(func() {
			token := forged(i)
			if _, err := a.Verify(token); !errors.Is(err, errUnknownKey) {
				t.Errorf("a made-up kid: %v, want an unknown key", err)
			}
		})
	}
	wg.Wait()
	for i := range 100 {
		assertRefused(t, a, forged(100+i), reasonUnknownKey)
	}
	if n := srv.fetches.Load(); n != 2 {
		t.Fatalf("the key set was fetched %d times, want 2: at start, and once for the first unknown kid", n)
	}
	assertVerified(t, a, mustSignKID(t, jwt.SigningMethodEdDSA, "ed", idpClaims("alice", nil), k.ed), "alice")
	if n := srv.fetches.Load(); n != 2 {
		t.Errorf("a known kid fetched the set (%d fetches)", n)
	}
}

// The provider rotates a key in: the first token it signs fetches the set
// again and is accepted, and the ones after it need no fetch.
func TestJWKSRotationAddsAKey(t *testing.T) {
	k := mustIDPKeys(t)
	old := publicJWK(t, "2026-01", k.ed.Public(), map[string]any{"alg": "EdDSA"})
	srv := newJWKSServer(t, old)
	a, logs := mustJWKSAuthenticator(t, srv.url(), nil)
	assertVerified(t, a, mustSignKID(t, jwt.SigningMethodEdDSA, "2026-01", idpClaims("alice", nil), k.ed), "alice")

	srv.setKeys(old, publicJWK(t, "2026-02", k.rotated.Public(), map[string]any{"alg": "EdDSA"}))
	rotated := mustSignKID(t, jwt.SigningMethodEdDSA, "2026-02", idpClaims("alice", nil), k.rotated)
	assertVerified(t, a, rotated, "alice")
	assertVerified(t, a, rotated, "alice")
	assertVerified(t, a, mustSignKID(t, jwt.SigningMethodEdDSA, "2026-01", idpClaims("bob", nil), k.ed), "bob")
	if n := srv.fetches.Load(); n != 2 {
		t.Errorf("the key set was fetched %d times, want 2: at start and for the rotated key", n)
	}
	if !strings.Contains(logs.String(), `"kids":["2026-01","2026-02"]`) {
		t.Errorf("the rotation was not logged:\n%s", logs)
	}
}

// Once the interval has passed, an unknown kid fetches the set again: the
// limit delays a rotated-in key by at most that interval, even after a
// flood.
func TestJWKSUnknownKidFetchesAgainAfterTheInterval(t *testing.T) {
	k := mustIDPKeys(t)
	old := publicJWK(t, "old", k.ed.Public(), nil)
	srv := newJWKSServer(t, old)
	const interval = 100 * time.Millisecond
	a, _ := mustJWKSAuthenticator(t, srv.url(), func(c *AuthConfig) { c.JWKS.UnknownKeyRefresh = interval })
	assertRefused(t, a, mustSignKID(t, jwt.SigningMethodEdDSA, "made-up", idpClaims("alice", nil), k.other), reasonUnknownKey)
	before := srv.fetches.Load()

	srv.setKeys(old, publicJWK(t, "new", k.rotated.Public(), nil))
	time.Sleep(2 * interval)
	assertVerified(t, a, mustSignKID(t, jwt.SigningMethodEdDSA, "new", idpClaims("alice", nil), k.rotated), "alice")
	if n := srv.fetches.Load(); n != before+1 {
		t.Errorf("fetches went from %d to %d, want one more", before, n)
	}
}

// The periodic refresh withdraws a key the provider no longer publishes.
func TestJWKSRefreshWithdrawsAKey(t *testing.T) {
	k := mustIDPKeys(t)
	keep := publicJWK(t, "keep", k.ed.Public(), nil)
	srv := newJWKSServer(t, keep, publicJWK(t, "leak", &k.p256.PublicKey, nil))
	a, _ := mustJWKSAuthenticator(t, srv.url(), func(c *AuthConfig) { c.JWKS.Refresh = 50 * time.Millisecond })
	leaked := mustSignKID(t, jwt.SigningMethodES256, "leak", idpClaims("alice", nil), k.p256)
	assertVerified(t, a, leaked, "alice")

	srv.setKeys(keep)
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := a.Verify(leaked)
		if errors.Is(err, errUnknownKey) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the withdrawn key still verifies after 10 s (%v)", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	assertVerified(t, a, mustSignKID(t, jwt.SigningMethodEdDSA, "keep", idpClaims("alice", nil), k.ed), "alice")
}

// A provider that does not answer at start does not stop the server: the
// start logs why, its tokens are refused as keys_unavailable, and the
// first token after it answers loads the keys.
func TestJWKSUnavailableAtStart(t *testing.T) {
	k := mustIDPKeys(t)
	t.Run("an error status", func(t *testing.T) {
		srv := newJWKSServer(t, publicJWK(t, "ed", k.ed.Public(), nil))
		srv.setStatus(http.StatusServiceUnavailable)
		a, logs := mustJWKSAuthenticator(t, srv.url(), nil)
		for _, want := range []string{`"msg":"JWKS fetch failed`, `"msg":"no JWKS keys yet`, `"level":"ERROR"`} {
			if !strings.Contains(logs.String(), want) {
				t.Errorf("the log lacks %s:\n%s", want, logs)
			}
		}
		srv.setStatus(0)
		assertVerified(t, a, mustSignKID(t, jwt.SigningMethodEdDSA, "ed", idpClaims("alice", nil), k.ed), "alice")
		if !strings.Contains(logs.String(), `"msg":"JWKS loaded"`) {
			t.Errorf("the late load was not logged:\n%s", logs)
		}
	})
	t.Run("nothing listening", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		url := "http://" + ln.Addr().String() + "/jwks"
		ln.Close()
		a, logs := mustJWKSAuthenticator(t, url, nil)
		assertRefused(t, a, mustSignKID(t, jwt.SigningMethodEdDSA, "ed", idpClaims("alice", nil), k.ed), reasonNoKeys)
		if !strings.Contains(logs.String(), "connection refused") {
			t.Errorf("the log does not say why:\n%s", logs)
		}
	})
}

// A fetch is bounded in time, in size and in where it may be redirected.
func TestJWKSFetchIsBounded(t *testing.T) {
	k := mustIDPKeys(t)
	token := mustSignKID(t, jwt.SigningMethodEdDSA, "ed", idpClaims("alice", nil), k.ed)
	keys := map[string]any{"keys": []any{publicJWK(t, "ed", k.ed.Public(), nil)}}
	serve := func(t *testing.T, h http.HandlerFunc) string {
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		return srv.URL + "/jwks"
	}
	padded := func(n int) []byte { // the key set, then n bytes of JSON whitespace
		b, _ := json.Marshal(keys)
		return append(b[:len(b)-1], append(bytes.Repeat([]byte(" "), n), '}')...)
	}

	t.Run("at most 1 MiB, streamed", func(t *testing.T) {
		url := serve(t, func(w http.ResponseWriter, _ *http.Request) {
			w.(http.Flusher).Flush() // no Content-Length: the body itself must be cut
			_, _ = w.Write(padded(maxJWKSBytes))
		})
		a, logs := mustJWKSAuthenticator(t, url, nil)
		assertRefused(t, a, token, reasonNoKeys)
		if !strings.Contains(logs.String(), "larger than 1048576 bytes") {
			t.Errorf("the log does not say the set was too large:\n%s", logs)
		}
	})
	t.Run("at most 1 MiB, announced", func(t *testing.T) {
		url := serve(t, func(w http.ResponseWriter, _ *http.Request) {
			body := padded(maxJWKSBytes)
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			_, _ = w.Write(body)
		})
		a, logs := mustJWKSAuthenticator(t, url, nil)
		assertRefused(t, a, token, reasonNoKeys)
		if !strings.Contains(logs.String(), "Content-Length") {
			t.Errorf("the log does not name the length:\n%s", logs)
		}
	})
	t.Run("just under 1 MiB", func(t *testing.T) {
		body := padded(0)
		body = padded(maxJWKSBytes - len(body))
		url := serve(t, func(w http.ResponseWriter, _ *http.Request) { w.(http.Flusher).Flush(); _, _ = w.Write(body) })
		a, _ := mustJWKSAuthenticator(t, url, nil)
		assertVerified(t, a, token, "alice")
	})
	t.Run("within the timeout", func(t *testing.T) {
		url := serve(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
		start := time.Now()
		a, logs := mustJWKSAuthenticator(t, url, func(c *AuthConfig) { c.JWKS.Timeout = 200 * time.Millisecond })
		if took := time.Since(start); took > 3*time.Second {
			t.Errorf("the start waited %s for a provider that never answers, with a 200ms timeout", took)
		}
		assertRefused(t, a, token, reasonNoKeys)
		if !strings.Contains(logs.String(), "JWKS fetch failed") {
			t.Errorf("the timeout was not logged:\n%s", logs)
		}
	})
	t.Run("no redirect to plain http", func(t *testing.T) {
		url := serve(t, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://keys.example.com/jwks", http.StatusFound)
		})
		a, logs := mustJWKSAuthenticator(t, url, nil)
		assertRefused(t, a, token, reasonNoKeys)
		if !strings.Contains(logs.String(), "must use https") {
			t.Errorf("the log does not say why the redirect was refused:\n%s", logs)
		}
	})
	t.Run("a redirect on loopback", func(t *testing.T) {
		target := serve(t, func(w http.ResponseWriter, _ *http.Request) { _ = json.NewEncoder(w).Encode(keys) })
		url := serve(t, func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, target, http.StatusFound) })
		a, _ := mustJWKSAuthenticator(t, url, nil)
		assertVerified(t, a, token, "alice")
	})
}

// With both a secret and a JWKS, each algorithm is pinned to its source:
// HS256 to the secret, whatever kid it names, and the asymmetric ones to
// the JWKS.
func TestJWKSWithASecretToo(t *testing.T) {
	k := mustIDPKeys(t)
	srv := newJWKSServer(t, publicJWK(t, "ed", k.ed.Public(), nil))
	a, _ := mustJWKSAuthenticator(t, srv.url(), func(c *AuthConfig) { c.Secret = authTestSecret })
	edPublic := []byte(k.ed.Public().(ed25519.PublicKey))

	assertVerified(t, a, mustMint(t, authTestSecret, "alice", time.Now(), time.Hour, idpIssuer, idpAudience), "alice")
	assertVerified(t, a, mustSignKID(t, jwt.SigningMethodHS256, "ed", idpClaims("alice", nil), authTestSecret), "alice")
	assertVerified(t, a, mustSignKID(t, jwt.SigningMethodEdDSA, "ed", idpClaims("bob", nil), k.ed), "bob")

	assertRefused(t, a, mustSignKID(t, jwt.SigningMethodHS256, "ed", idpClaims("alice", nil), edPublic), reasonBadSignature)
	assertRefused(t, a, mustMint(t, []byte("ffffffffffffffffffffffffffffffff"), "alice", time.Now(), time.Hour, idpIssuer, idpAudience), reasonBadSignature)
	assertRefused(t, a, mustMint(t, authTestSecret, "alice", time.Now(), time.Hour, "", ""), reasonWrongIssuer)
	assertRefused(t, a, rs256HeadedToken(t, "alice", time.Now().Add(time.Hour)), reasonUnknownKey)
	assertRefused(t, a, algNoneToken(t, "alice", time.Now().Add(time.Hour)), reasonWrongAlgorithm)
	if n := srv.fetches.Load(); n != 1 {
		t.Errorf("the key set was fetched %d times, want once: no token names an unknown kid", n)
	}
}

func TestNewAuthenticatorChecksTheJWKSConfiguration(t *testing.T) {
	k := mustIDPKeys(t)
	srv := newJWKSServer(t, publicJWK(t, "ed", k.ed.Public(), nil))
	for _, tc := range []struct {
		name   string
		change func(*AuthConfig)
		want   string // in the error; "" for none
	}{
		{"JWKS only", func(*AuthConfig) {}, ""},
		{"JWKS and a secret", func(c *AuthConfig) { c.Secret = authTestSecret }, ""},
		{"JWKS and a weak secret", func(c *AuthConfig) { c.Secret = authTestSecret[:31] }, "JWT_SECRET must be at least 32 bytes"},
		{"no issuer", func(c *AuthConfig) { c.Issuer = "" }, "JWT_JWKS_URL needs JWT_ISSUER and JWT_AUDIENCE"},
		{"no audience", func(c *AuthConfig) { c.Audience = "" }, "JWT_JWKS_URL needs JWT_ISSUER and JWT_AUDIENCE"},
		{"plain http to another host", func(c *AuthConfig) { c.JWKS.URL = "http://auth.example.com/api/auth/jwks" }, "must use https"},
		{"not a URL", func(c *AuthConfig) { c.JWKS.URL = "auth.example.com/jwks" }, "must be an https URL"},
		{"no refresh", func(c *AuthConfig) { c.JWKS.Refresh = 0 }, "must be positive"},
		{"no timeout", func(c *AuthConfig) { c.JWKS.Timeout = 0 }, "must be positive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := AuthConfig{Issuer: idpIssuer, Audience: idpAudience, JWKS: testJWKS(srv.url())}
			tc.change(&cfg)
			a, err := NewAuthenticator(cfg)
			if err == nil {
				a.Close()
			}
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err = %v, want one saying %q", err, tc.want)
			}
		})
	}
	if _, err := NewAuthenticator(AuthConfig{}); !errors.Is(err, ErrWeakSecret) {
		t.Errorf("neither a secret nor a JWKS: err = %v, want ErrWeakSecret", err)
	}
}

func TestCheckJWKSURL(t *testing.T) {
	for url, ok := range map[string]bool{
		"https://auth.example.com/api/auth/jwks":  true,
		"https://auth.example.com:8443/jwks.json": true,
		"http://localhost:3000/api/auth/jwks":     true,
		"http://app.localhost:3000/api/auth/jwks": true,
		"http://127.0.0.1:3000/api/auth/jwks":     true,
		"http://127.8.0.1/jwks":                   true,
		"http://[::1]:3000/jwks":                  true,
		"http://auth.example.com/jwks":            false,
		"http://10.0.0.5/jwks":                    false,
		"http://localhost.example.com/jwks":       false,
		"ftp://auth.example.com/jwks":             false,
		"https:///jwks":                           false,
		"/api/auth/jwks":                          false,
		"":                                        false,
	} {
		if err := CheckJWKSURL(url); (err == nil) != ok {
			t.Errorf("CheckJWKSURL(%q) = %v, want ok %v", url, err, ok)
		}
	}
}
