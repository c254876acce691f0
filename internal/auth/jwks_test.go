package auth

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

	"github.com/golang-jwt/jwt/v5"

	"github.com/taskchat/taskchat/internal/auth/authtest"
	"github.com/taskchat/taskchat/internal/logtest"
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

// testJWKS is the JWKS configuration of these tests: no periodic refresh
// within a test unless it asks for one, so that fetch counts are exact.
func testJWKS(url string) JWKSConfig {
	return JWKSConfig{URL: url, Refresh: time.Hour, UnknownKeyRefresh: time.Minute, Timeout: 5 * time.Second}
}

// mustJWKSVerifier trusts the key set at url, with the provider's
// issuer and audience; change adjusts the configuration first.
func mustJWKSVerifier(tb testing.TB, url string, change func(*Config)) (*Verifier, *logtest.Buffer) {
	tb.Helper()
	logs := &logtest.Buffer{}
	cfg := Config{
		Issuer: idpIssuer, Audience: idpAudience, JWKS: testJWKS(url),
		Log: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if change != nil {
		change(&cfg)
	}
	v, err := NewVerifier(cfg)
	if err != nil {
		tb.Fatalf("NewVerifier: %v", err)
	}
	tb.Cleanup(v.Close)
	return v, logs
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

// assertRefused checks that v refuses token, for reason, whether it is
// verified alone or sent as a request's bearer token. (internal/http's
// tests check that every refusal is answered 401 with the invalid_token
// challenge.)
func assertRefused(tb testing.TB, v *Verifier, token, reason string) {
	tb.Helper()
	user, err := v.Verify(token)
	if !errors.Is(err, ErrInvalidToken) {
		tb.Fatalf("Verify = %q, %v; want ErrInvalidToken", user, err)
	}
	if got := Reason(err); got != reason {
		tb.Errorf("reason = %q, want %q (%v)", got, reason, err)
	}
	user, err = v.Authenticate(bearerRequest(token))
	if !errors.Is(err, ErrInvalidToken) || Reason(err) != reason {
		tb.Errorf("Authenticate = %q, %v (reason %q); want ErrInvalidToken, %q", user, err, Reason(err), reason)
	}
}

func assertVerified(tb testing.TB, v *Verifier, token, user string) {
	tb.Helper()
	if got, err := v.Verify(token); err != nil || got != user {
		tb.Fatalf("Verify = %q, %v; want %q (reason %s)", got, err, user, Reason(err))
	}
}

// bearerRequest is a request that sends token as its bearer token.
func bearerRequest(token string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/api/alice/whoami", nil)
	r.Header.Set("Authorization", "Bearer "+token)
	return r
}

// A provider's EdDSA, RS256 and ES256 tokens are verified with the key
// their kid names, from one fetch of the set.
func TestJWKSVerifiesEachAlgorithm(t *testing.T) {
	t.Parallel()
	k := mustIDPKeys(t)
	srv := newJWKSServer(t,
		publicJWK(t, "ed", k.ed.Public(), map[string]any{"alg": "EdDSA"}), // as Better Auth publishes it
		publicJWK(t, "rsa", &k.rsa.PublicKey, map[string]any{"use": "sig", "alg": "RS256"}),
		publicJWK(t, "p256", &k.p256.PublicKey, nil), // neither alg nor use: both are optional
	)
	v, logs := mustJWKSVerifier(t, srv.url(), nil)
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
			token := authtest.SignKID(t, tc.method, tc.kid, idpClaims(user, nil), tc.key)
			assertVerified(t, v, token, user)
			if got, err := v.Authenticate(bearerRequest(token)); err != nil || got != user {
				t.Fatalf("Authenticate = %q, %v; want %q", got, err, user)
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
	t.Parallel()
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
	v, _ := mustJWKSVerifier(t, srv.url(), nil)
	claims := idpClaims("alice", nil)
	edPublic := []byte(k.ed.Public().(ed25519.PublicKey))
	good := authtest.SignKID(t, jwt.SigningMethodEdDSA, "ed", claims, k.ed)

	cases := []struct {
		name, token, reason string
	}{
		{"alg none", authtest.AlgNone(t, "alice", time.Now().Add(time.Hour)), ReasonWrongAlgorithm},
		{"HS256 to a JWKS-only server", authtest.SignKID(t, jwt.SigningMethodHS256, "", claims, authtest.Secret), ReasonWrongAlgorithm},
		{"HS256 keyed with the provider's public key", authtest.SignKID(t, jwt.SigningMethodHS256, "ed", claims, edPublic), ReasonWrongAlgorithm},
		{"PS256, an algorithm not accepted", authtest.SignKID(t, jwt.SigningMethodPS256, "rsa", claims, k.rsa), ReasonWrongAlgorithm},
		{"RS256 naming the Ed25519 key", authtest.SignKID(t, jwt.SigningMethodRS256, "ed", claims, k.rsa), ReasonWrongKey},
		{"ES256 naming the RSA key", authtest.SignKID(t, jwt.SigningMethodES256, "rsa", claims, k.p256), ReasonWrongKey},
		{"EdDSA naming the P-256 key", authtest.SignKID(t, jwt.SigningMethodEdDSA, "p256", claims, k.ed), ReasonWrongKey},
		{"ES256 naming a P-384 key", authtest.SignKID(t, jwt.SigningMethodES256, "p384", claims, k.p256), ReasonWrongKey},
		{"a key whose use is enc", authtest.SignKID(t, jwt.SigningMethodRS256, "rsa-enc", claims, k.rsa), ReasonWrongKey},
		{"a key whose key_ops lack verify", authtest.SignKID(t, jwt.SigningMethodRS256, "rsa-encrypt-ops", claims, k.rsa), ReasonWrongKey},
		{"a key whose alg disagrees with the header", authtest.SignKID(t, jwt.SigningMethodRS256, "rsa-512", claims, k.rsa), ReasonWrongKey},
		{"an RSA key under 2048 bits", authtest.SignKID(t, jwt.SigningMethodRS256, "rsa-1024", claims, k.weakRSA), ReasonWrongKey},
		{"a tampered signature", authtest.WithFlippedSignature(good), ReasonBadSignature},
		{"a tampered payload", authtest.WithPayload(t, good, map[string]any{"sub": "bob", "iss": idpIssuer, "aud": idpAudience, "exp": time.Now().Add(time.Hour).Unix()}), ReasonBadSignature},
		{"signed by another key under a known kid", authtest.SignKID(t, jwt.SigningMethodEdDSA, "ed", claims, k.other), ReasonBadSignature},
		{"another issuer", authtest.SignKID(t, jwt.SigningMethodEdDSA, "ed", idpClaims("alice", jwt.MapClaims{"iss": "https://evil.example"}), k.ed), ReasonWrongIssuer},
		{"another audience", authtest.SignKID(t, jwt.SigningMethodEdDSA, "ed", idpClaims("alice", jwt.MapClaims{"aud": "https://billing.example.com"}), k.ed), ReasonWrongAudience},
		{"no issuer or audience", authtest.SignKID(t, jwt.SigningMethodEdDSA, "ed", jwt.MapClaims{"sub": "alice", "exp": time.Now().Add(time.Hour).Unix()}, k.ed), ReasonWrongIssuer},
		{"expired", authtest.SignKID(t, jwt.SigningMethodEdDSA, "ed", idpClaims("alice", jwt.MapClaims{"exp": time.Now().Add(-time.Hour).Unix()}), k.ed), ReasonExpired},
		{"no kid", authtest.SignKID(t, jwt.SigningMethodEdDSA, "", claims, k.ed), ReasonUnknownKey},
		{"a kid that is not a string", authtest.WithHeader(t, good, map[string]any{"alg": "EdDSA", "kid": 7}), ReasonUnknownKey},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { assertRefused(t, v, tc.token, tc.reason) })
	}
	assertVerified(t, v, good, "alice")
	if n := srv.fetches.Load(); n != 1 {
		t.Errorf("the key set was fetched %d times; no case names an unknown kid, so want once", n)
	}
}

// A provider that publishes a private key has leaked it: anyone who reads
// the set can sign with it, so the tokens naming it prove nothing. They
// are refused, and the load says why; the set's other keys keep working.
func TestJWKSRefusesAPublishedPrivateKey(t *testing.T) {
	t.Parallel()
	k := mustIDPKeys(t)
	leaked := publicJWK(t, "leaked", k.rotated.Public(), map[string]any{"alg": "EdDSA", "d": b64(k.rotated.Seed())})
	srv := newJWKSServer(t, publicJWK(t, "ed", k.ed.Public(), nil), leaked)
	v, logs := mustJWKSVerifier(t, srv.url(), nil)
	assertRefused(t, v, authtest.SignKID(t, jwt.SigningMethodEdDSA, "leaked", idpClaims("alice", nil), k.rotated), ReasonWrongKey)
	if !strings.Contains(logs.String(), `"msg":"the JWKS publishes a private key`) || !strings.Contains(logs.String(), `"kid":"leaked"`) {
		t.Errorf("the load did not say the set holds a private key:\n%s", logs)
	}
	if strings.Contains(logs.String(), b64(k.rotated.Seed())) {
		t.Errorf("the log holds the private key:\n%s", logs)
	}
	assertVerified(t, v, authtest.SignKID(t, jwt.SigningMethodEdDSA, "ed", idpClaims("alice", nil), k.ed), "alice")
}

// A flood of made-up kids costs the provider one fetch a minute, however
// many there are and however they arrive; the known keys keep working.
func TestJWKSFloodOfUnknownKidsFetchesOncePerMinute(t *testing.T) {
	t.Parallel()
	k := mustIDPKeys(t)
	srv := newJWKSServer(t, publicJWK(t, "ed", k.ed.Public(), nil))
	v, _ := mustJWKSVerifier(t, srv.url(), nil)
	forged := func(i int) string {
		return authtest.SignKID(t, jwt.SigningMethodEdDSA, fmt.Sprintf("random-%d-%d", i, time.Now().UnixNano()), idpClaims("alice", nil), k.other)
	}
	var wg sync.WaitGroup
	for i := range 100 {
		wg.Go(func() {
			token := forged(i)
			if _, err := v.Verify(token); !errors.Is(err, errUnknownKey) {
				t.Errorf("a made-up kid: %v, want an unknown key", err)
			}
		})
	}
	wg.Wait()
	for i := range 100 {
		assertRefused(t, v, forged(100+i), ReasonUnknownKey)
	}
	if n := srv.fetches.Load(); n != 2 {
		t.Fatalf("the key set was fetched %d times, want 2: at start, and once for the first unknown kid", n)
	}
	assertVerified(t, v, authtest.SignKID(t, jwt.SigningMethodEdDSA, "ed", idpClaims("alice", nil), k.ed), "alice")
	if n := srv.fetches.Load(); n != 2 {
		t.Errorf("a known kid fetched the set (%d fetches)", n)
	}
}

// The provider rotates a key in: the first token it signs fetches the set
// again and is accepted, and the ones after it need no fetch.
func TestJWKSRotationAddsAKey(t *testing.T) {
	t.Parallel()
	k := mustIDPKeys(t)
	old := publicJWK(t, "2026-01", k.ed.Public(), map[string]any{"alg": "EdDSA"})
	srv := newJWKSServer(t, old)
	v, logs := mustJWKSVerifier(t, srv.url(), nil)
	assertVerified(t, v, authtest.SignKID(t, jwt.SigningMethodEdDSA, "2026-01", idpClaims("alice", nil), k.ed), "alice")

	srv.setKeys(old, publicJWK(t, "2026-02", k.rotated.Public(), map[string]any{"alg": "EdDSA"}))
	rotated := authtest.SignKID(t, jwt.SigningMethodEdDSA, "2026-02", idpClaims("alice", nil), k.rotated)
	assertVerified(t, v, rotated, "alice")
	assertVerified(t, v, rotated, "alice")
	assertVerified(t, v, authtest.SignKID(t, jwt.SigningMethodEdDSA, "2026-01", idpClaims("bob", nil), k.ed), "bob")
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
	t.Parallel()
	k := mustIDPKeys(t)
	old := publicJWK(t, "old", k.ed.Public(), nil)
	srv := newJWKSServer(t, old)
	const interval = 100 * time.Millisecond
	v, _ := mustJWKSVerifier(t, srv.url(), func(c *Config) { c.JWKS.UnknownKeyRefresh = interval })
	assertRefused(t, v, authtest.SignKID(t, jwt.SigningMethodEdDSA, "made-up", idpClaims("alice", nil), k.other), ReasonUnknownKey)
	before := srv.fetches.Load()

	srv.setKeys(old, publicJWK(t, "new", k.rotated.Public(), nil))
	time.Sleep(2 * interval)
	assertVerified(t, v, authtest.SignKID(t, jwt.SigningMethodEdDSA, "new", idpClaims("alice", nil), k.rotated), "alice")
	if n := srv.fetches.Load(); n != before+1 {
		t.Errorf("fetches went from %d to %d, want one more", before, n)
	}
}

// The periodic refresh withdraws a key the provider no longer publishes.
func TestJWKSRefreshWithdrawsAKey(t *testing.T) {
	t.Parallel()
	k := mustIDPKeys(t)
	keep := publicJWK(t, "keep", k.ed.Public(), nil)
	srv := newJWKSServer(t, keep, publicJWK(t, "leak", &k.p256.PublicKey, nil))
	v, _ := mustJWKSVerifier(t, srv.url(), func(c *Config) { c.JWKS.Refresh = 50 * time.Millisecond })
	leaked := authtest.SignKID(t, jwt.SigningMethodES256, "leak", idpClaims("alice", nil), k.p256)
	assertVerified(t, v, leaked, "alice")

	srv.setKeys(keep)
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := v.Verify(leaked)
		if errors.Is(err, errUnknownKey) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the withdrawn key still verifies after 10 s (%v)", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	assertVerified(t, v, authtest.SignKID(t, jwt.SigningMethodEdDSA, "keep", idpClaims("alice", nil), k.ed), "alice")
}

// A provider that does not answer at start does not stop the server: the
// start logs why, its tokens are refused as keys_unavailable, and the
// first token after it answers loads the keys.
func TestJWKSUnavailableAtStart(t *testing.T) {
	t.Parallel()
	k := mustIDPKeys(t)
	t.Run("an error status", func(t *testing.T) {
		t.Parallel()
		srv := newJWKSServer(t, publicJWK(t, "ed", k.ed.Public(), nil))
		srv.setStatus(http.StatusServiceUnavailable)
		v, logs := mustJWKSVerifier(t, srv.url(), nil)
		for _, want := range []string{`"msg":"JWKS fetch failed`, `"msg":"no JWKS keys yet`, `"level":"ERROR"`} {
			if !strings.Contains(logs.String(), want) {
				t.Errorf("the log lacks %s:\n%s", want, logs)
			}
		}
		srv.setStatus(0)
		assertVerified(t, v, authtest.SignKID(t, jwt.SigningMethodEdDSA, "ed", idpClaims("alice", nil), k.ed), "alice")
		if !strings.Contains(logs.String(), `"msg":"JWKS loaded"`) {
			t.Errorf("the late load was not logged:\n%s", logs)
		}
	})
	t.Run("nothing listening", func(t *testing.T) {
		t.Parallel()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		url := "http://" + ln.Addr().String() + "/jwks"
		ln.Close()
		v, logs := mustJWKSVerifier(t, url, nil)
		assertRefused(t, v, authtest.SignKID(t, jwt.SigningMethodEdDSA, "ed", idpClaims("alice", nil), k.ed), ReasonNoKeys)
		if !strings.Contains(logs.String(), "connection refused") {
			t.Errorf("the log does not say why:\n%s", logs)
		}
	})
}

// A fetch is bounded in time, in size and in where it may be redirected.
func TestJWKSFetchIsBounded(t *testing.T) {
	t.Parallel()
	k := mustIDPKeys(t)
	token := authtest.SignKID(t, jwt.SigningMethodEdDSA, "ed", idpClaims("alice", nil), k.ed)
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
		t.Parallel()
		url := serve(t, func(w http.ResponseWriter, _ *http.Request) {
			w.(http.Flusher).Flush() // no Content-Length: the body itself must be cut
			_, _ = w.Write(padded(maxJWKSBytes))
		})
		v, logs := mustJWKSVerifier(t, url, nil)
		assertRefused(t, v, token, ReasonNoKeys)
		if !strings.Contains(logs.String(), "larger than 1048576 bytes") {
			t.Errorf("the log does not say the set was too large:\n%s", logs)
		}
	})
	t.Run("at most 1 MiB, announced", func(t *testing.T) {
		t.Parallel()
		url := serve(t, func(w http.ResponseWriter, _ *http.Request) {
			body := padded(maxJWKSBytes)
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			_, _ = w.Write(body)
		})
		v, logs := mustJWKSVerifier(t, url, nil)
		assertRefused(t, v, token, ReasonNoKeys)
		if !strings.Contains(logs.String(), "Content-Length") {
			t.Errorf("the log does not name the length:\n%s", logs)
		}
	})
	t.Run("just under 1 MiB", func(t *testing.T) {
		t.Parallel()
		body := padded(0)
		body = padded(maxJWKSBytes - len(body))
		url := serve(t, func(w http.ResponseWriter, _ *http.Request) { w.(http.Flusher).Flush(); _, _ = w.Write(body) })
		v, _ := mustJWKSVerifier(t, url, nil)
		assertVerified(t, v, token, "alice")
	})
	t.Run("within the timeout", func(t *testing.T) {
		t.Parallel()
		url := serve(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
		start := time.Now()
		v, logs := mustJWKSVerifier(t, url, func(c *Config) { c.JWKS.Timeout = 200 * time.Millisecond })
		if took := time.Since(start); took > 3*time.Second {
			t.Errorf("the start waited %s for a provider that never answers, with a 200ms timeout", took)
		}
		assertRefused(t, v, token, ReasonNoKeys)
		if !strings.Contains(logs.String(), "JWKS fetch failed") {
			t.Errorf("the timeout was not logged:\n%s", logs)
		}
	})
	t.Run("no redirect to plain http", func(t *testing.T) {
		t.Parallel()
		url := serve(t, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://keys.example.com/jwks", http.StatusFound)
		})
		v, logs := mustJWKSVerifier(t, url, nil)
		assertRefused(t, v, token, ReasonNoKeys)
		if !strings.Contains(logs.String(), "must use https") {
			t.Errorf("the log does not say why the redirect was refused:\n%s", logs)
		}
	})
	t.Run("a redirect on loopback", func(t *testing.T) {
		t.Parallel()
		target := serve(t, func(w http.ResponseWriter, _ *http.Request) { _ = json.NewEncoder(w).Encode(keys) })
		url := serve(t, func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, target, http.StatusFound) })
		v, _ := mustJWKSVerifier(t, url, nil)
		assertVerified(t, v, token, "alice")
	})
}

// With both a secret and a JWKS, each algorithm is pinned to its source:
// HS256 to the secret, whatever kid it names, and the asymmetric ones to
// the JWKS.
func TestJWKSWithASecretToo(t *testing.T) {
	t.Parallel()
	k := mustIDPKeys(t)
	srv := newJWKSServer(t, publicJWK(t, "ed", k.ed.Public(), nil))
	v, _ := mustJWKSVerifier(t, srv.url(), func(c *Config) { c.Secret = authtest.Secret })
	edPublic := []byte(k.ed.Public().(ed25519.PublicKey))

	assertVerified(t, v, mustMint(t, authtest.Secret, "alice", time.Now(), time.Hour, idpIssuer, idpAudience), "alice")
	assertVerified(t, v, authtest.SignKID(t, jwt.SigningMethodHS256, "ed", idpClaims("alice", nil), authtest.Secret), "alice")
	assertVerified(t, v, authtest.SignKID(t, jwt.SigningMethodEdDSA, "ed", idpClaims("bob", nil), k.ed), "bob")

	assertRefused(t, v, authtest.SignKID(t, jwt.SigningMethodHS256, "ed", idpClaims("alice", nil), edPublic), ReasonBadSignature)
	assertRefused(t, v, mustMint(t, []byte("ffffffffffffffffffffffffffffffff"), "alice", time.Now(), time.Hour, idpIssuer, idpAudience), ReasonBadSignature)
	assertRefused(t, v, mustMint(t, authtest.Secret, "alice", time.Now(), time.Hour, "", ""), ReasonWrongIssuer)
	assertRefused(t, v, authtest.RS256Headed(t, authtest.Secret, "alice", time.Now().Add(time.Hour)), ReasonUnknownKey)
	assertRefused(t, v, authtest.AlgNone(t, "alice", time.Now().Add(time.Hour)), ReasonWrongAlgorithm)
	if n := srv.fetches.Load(); n != 1 {
		t.Errorf("the key set was fetched %d times, want once: no token names an unknown kid", n)
	}
}

func TestNewVerifierChecksTheJWKSConfiguration(t *testing.T) {
	t.Parallel()
	k := mustIDPKeys(t)
	srv := newJWKSServer(t, publicJWK(t, "ed", k.ed.Public(), nil))
	for _, tc := range []struct {
		name   string
		change func(*Config)
		want   string // in the error; "" for none
	}{
		{"JWKS only", func(*Config) {}, ""},
		{"JWKS and a secret", func(c *Config) { c.Secret = authtest.Secret }, ""},
		{"JWKS and a weak secret", func(c *Config) { c.Secret = authtest.Secret[:31] }, "Secret must be at least 32 bytes"},
		{"no issuer", func(c *Config) { c.Issuer = "" }, "Issuer is required with a JWKS"},
		{"no audience", func(c *Config) { c.Audience = "" }, "Audience is required with a JWKS"},
		{"plain http to another host", func(c *Config) { c.JWKS.URL = "http://auth.example.com/api/auth/jwks" }, "must use https"},
		{"not a URL", func(c *Config) { c.JWKS.URL = "auth.example.com/jwks" }, "must be an https URL"},
		{"no refresh", func(c *Config) { c.JWKS.Refresh = 0 }, "must be positive"},
		{"no timeout", func(c *Config) { c.JWKS.Timeout = 0 }, "must be positive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := Config{Issuer: idpIssuer, Audience: idpAudience, JWKS: testJWKS(srv.url())}
			tc.change(&cfg)
			v, err := NewVerifier(cfg)
			if err == nil {
				v.Close()
			}
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err = %v, want one saying %q", err, tc.want)
			}
		})
	}
	if _, err := NewVerifier(Config{}); !errors.Is(err, ErrWeakSecret) {
		t.Errorf("neither a secret nor a JWKS: err = %v, want ErrWeakSecret", err)
	}
}

func TestCheckJWKSURL(t *testing.T) {
	t.Parallel()
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
