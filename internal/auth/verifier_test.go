package auth

import (
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/taskchat/taskchat/internal/auth/authtest"
)

func mustVerifier(tb testing.TB, cfg Config) *Verifier {
	tb.Helper()
	if cfg.Secret == nil {
		cfg.Secret = authtest.Secret
	}
	v, err := NewVerifier(cfg)
	if err != nil {
		tb.Fatalf("NewVerifier: %v", err)
	}
	return v
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

func TestNewVerifierRefusesWeakSecret(t *testing.T) {
	t.Parallel()
	_, err := NewVerifier(Config{Secret: authtest.Secret[:31]})
	if !errors.Is(err, ErrWeakSecret) {
		t.Fatalf("31-byte secret: err = %v, want ErrWeakSecret", err)
	}
	// The field, not an environment variable: cmd/server says where the
	// secret came from.
	if msg := err.Error(); !strings.Contains(msg, "Secret") || !strings.Contains(msg, "32") {
		t.Errorf("error %q should name Secret and the 32-byte minimum", msg)
	}
	if _, err := NewVerifier(Config{Secret: authtest.Secret}); err != nil {
		t.Errorf("32-byte secret: %v", err)
	}
	if _, err := NewVerifier(Config{Secret: authtest.Secret, Leeway: -time.Second}); err == nil {
		t.Error("a negative leeway was accepted")
	}
}

func TestVerifierKeepsItsOwnSecret(t *testing.T) {
	t.Parallel()
	secret := append([]byte(nil), authtest.Secret...)
	v := mustVerifier(t, Config{Secret: secret})
	secret[0] ^= 0xff
	token := mustMint(t, authtest.Secret, "alice", time.Now(), time.Minute, "", "")
	if _, err := v.Verify(token); err != nil {
		t.Fatalf("changing the caller's slice changed the verifier: %v", err)
	}
}

func TestMintTokenRoundTrip(t *testing.T) {
	t.Parallel()
	t.Run("plain", func(t *testing.T) {
		t.Parallel()
		v := mustVerifier(t, Config{})
		token := mustMint(t, authtest.Secret, "user-ü@example.com", time.Now(), time.Minute, "", "")
		if got, err := v.Verify(token); err != nil || got != "user-ü@example.com" {
			t.Fatalf("Verify = %q, %v", got, err)
		}
	})
	t.Run("claims", func(t *testing.T) {
		t.Parallel()
		now := time.Unix(1_700_000_000, 0)
		token := mustMint(t, authtest.Secret, "alice", now, time.Hour, "iss-1", "aud-1")
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
		t.Parallel()
		now := time.Now()
		for name, mint := range map[string]func() (string, error){
			"weak secret":   func() (string, error) { return MintToken(authtest.Secret[:31], "alice", time.Hour, "", "", now) },
			"empty user":    func() (string, error) { return MintToken(authtest.Secret, "", time.Hour, "", "", now) },
			"control chars": func() (string, error) { return MintToken(authtest.Secret, "a\nb", time.Hour, "", "", now) },
			"zero ttl":      func() (string, error) { return MintToken(authtest.Secret, "alice", 0, "", "", now) },
		} {
			if _, err := mint(); err == nil {
				t.Errorf("%s: MintToken succeeded", name)
			}
		}
	})
}

func TestVerifyErrorsNeverEchoToken(t *testing.T) {
	t.Parallel()
	v := mustVerifier(t, Config{})
	now := time.Now()
	for _, token := range []string{
		"eyJhbGciOiJIUzI1NiJ9.secret-looking-payload.sig",
		authtest.AlgNone(t, "alice", now.Add(time.Hour)),
		mustMint(t, authtest.Secret, "alice", now.Add(-2*time.Hour), time.Hour, "", ""),
		authtest.WithFlippedSignature(mustMint(t, authtest.Secret, "alice", now, time.Hour, "", "")),
	} {
		_, err := v.Verify(token)
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

// Authenticate reads the one Bearer credential of a request: none at all
// is ErrNoToken, anything else that is not a valid token is
// ErrInvalidToken, each with the reason the access log gives.
func TestAuthenticate(t *testing.T) {
	t.Parallel()
	v := mustVerifier(t, Config{})
	alice := mustMint(t, authtest.Secret, "alice", time.Now(), time.Hour, "", "")
	for _, tc := range []struct {
		name          string
		authorization []string
		user          string // "" for a refusal
		err           error
		reason        string
	}{
		{"no header", nil, "", ErrNoToken, ReasonMissing},
		{"another scheme", []string{"Basic YWxpY2U6c2VjcmV0"}, "", ErrNoToken, ReasonMissing},
		{"bearer without token", []string{"Bearer"}, "", ErrInvalidToken, ReasonEmpty},
		{"bearer with blank token", []string{"Bearer    "}, "", ErrInvalidToken, ReasonEmpty},
		{"two headers", []string{"Bearer " + alice, "Bearer " + alice}, "", ErrInvalidToken, ReasonEmpty},
		{"oversized", []string{"Bearer " + strings.Repeat("A", MaxTokenBytes+1)}, "", ErrInvalidToken, ReasonOversized},
		{"not a JWT", []string{"Bearer not-a-jwt"}, "", ErrInvalidToken, ReasonMalformed},
		{"a valid token", []string{"Bearer " + alice}, "alice", nil, ""},
		{"a lower-case scheme and spaces", []string{"  bearer   " + alice + " "}, "alice", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := httptest.NewRequest("GET", "/", nil)
			for _, h := range tc.authorization {
				r.Header.Add("Authorization", h)
			}
			user, err := v.Authenticate(r)
			if user != tc.user || !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) || Reason(err) != tc.reason {
				t.Fatalf("Authenticate = %q, %v (reason %q); want %q, %v (reason %q)", user, err, Reason(err), tc.user, tc.err, tc.reason)
			}
		})
	}
	if got := Reason(errors.New("not a refusal")); got != "" {
		t.Errorf("Reason of another error = %q, want none", got)
	}
}
