// Package authtest makes the tokens that tests of taskchat's
// authentication send: signed with any algorithm and key, unsigned, or
// tampered with after signing, as an attacker or a misconfigured issuer
// would make them. Its tokens are made with golang-jwt and by hand, never
// with internal/auth, so that a test does not check the verifier against
// itself, and internal/auth's own tests can use it. Bearer sends a token
// on every request of an HTTP client, as an MCP client given one does.
package authtest

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Secret is exactly the shortest HS256 secret internal/auth accepts.
var Secret = []byte("0123456789abcdef0123456789abcdef")

// Sign signs claims with any method and key, for tokens MintToken rightly
// refuses to make.
func Sign(tb testing.TB, method jwt.SigningMethod, claims jwt.Claims, key any) string {
	tb.Helper()
	return SignKID(tb, method, "", claims, key)
}

// SignKID signs claims with method and key, naming kid in the header when
// it is not empty, as an identity provider does.
func SignKID(tb testing.TB, method jwt.SigningMethod, kid string, claims jwt.Claims, key any) string {
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

// segment is one base64url JSON segment of a hand-made token.
func segment(tb testing.TB, v any) string {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatalf("marshal segment: %v", err)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// AlgNone is an unsigned token for user, as an attacker would write it.
func AlgNone(tb testing.TB, user string, exp time.Time) string {
	tb.Helper()
	header := segment(tb, map[string]string{"alg": "none", "typ": "JWT"})
	return header + "." + segment(tb, map[string]any{"sub": user, "exp": exp.Unix()}) + "."
}

// RS256Headed claims RS256 but is an HMAC-SHA256 over secret: the classic
// algorithm-confusion forgery.
func RS256Headed(tb testing.TB, secret []byte, user string, exp time.Time) string {
	tb.Helper()
	signing := segment(tb, map[string]string{"alg": "RS256", "typ": "JWT"}) + "." +
		segment(tb, map[string]any{"sub": user, "exp": exp.Unix()})
	sig, err := jwt.SigningMethodHS256.Sign(signing, secret)
	if err != nil {
		tb.Fatalf("sign: %v", err)
	}
	return signing + "." + base64.RawURLEncoding.EncodeToString(sig)
}

// WithPayload swaps token's payload for claims and keeps its signature.
func WithPayload(tb testing.TB, token string, claims map[string]any) string {
	tb.Helper()
	parts := strings.Split(token, ".")
	parts[1] = segment(tb, claims)
	return strings.Join(parts, ".")
}

// WithHeader swaps token's header for header and keeps the rest.
func WithHeader(tb testing.TB, token string, header map[string]any) string {
	tb.Helper()
	parts := strings.Split(token, ".")
	parts[0] = segment(tb, header)
	return strings.Join(parts, ".")
}

// WithFlippedSignature changes the first signature character, which is
// significant in every bit (the last one has padding bits).
func WithFlippedSignature(token string) string {
	i := strings.LastIndexByte(token, '.') + 1
	c := byte('A')
	if token[i] == 'A' {
		c = 'B'
	}
	return token[:i] + string(c) + token[i+1:]
}

// Bearer is an http.RoundTripper that sends the token it holds on every
// request, as "Authorization: Bearer <token>", over http.DefaultTransport.
type Bearer string

// RoundTrip sends a copy of r that carries the token.
func (b Bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}
