package auth

import (
	"errors"
	"testing"
	"time"
)

// Only a Host that names this machine is answered: a page whose name is
// made to resolve to 127.0.0.1 (DNS rebinding) sends its own name.
func TestAddressedToLoopback(t *testing.T) {
	t.Parallel()
	for host, want := range map[string]bool{
		"localhost":             true,
		"localhost:8080":        true,
		"LOCALHOST":             true,
		"localhost.":            true,
		"app.localhost:8080":    true,
		"127.0.0.1:8080":        true,
		"127.0.0.2":             true,
		"[::1]:8080":            true,
		"::1":                   true,
		"attacker.example":      false,
		"attacker.example:80":   false,
		"localhost.example.com": false,
		"10.0.0.5:8080":         false,
		"":                      false,
	} {
		if got := AddressedToLoopback(host); got != want {
			t.Errorf("AddressedToLoopback(%q) = %v, want %v", host, got, want)
		}
	}
}

// The development login's tokens are the verifier's own: Verify accepts
// them, and their expiry is the exp claim's, in whole seconds.
func TestMintIsVerified(t *testing.T) {
	t.Parallel()
	v := mustVerifier(t, Config{Issuer: "https://id.taskchat.dev", Audience: "taskchat-api"})
	now := time.Date(2026, 1, 2, 15, 4, 5, 600_000_000, time.UTC)
	token, _, err := v.Mint("alice", time.Hour, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if user, err := v.Verify(token); err != nil || user != "alice" {
		t.Fatalf("Verify = %q, %v", user, err)
	}
	if _, expires, _ := v.Mint("alice", time.Hour, now); !expires.Equal(time.Date(2026, 1, 2, 16, 4, 5, 0, time.UTC)) {
		t.Errorf("expires = %s, want 16:04:05 UTC", expires)
	}
	jwksOnly := &Verifier{issuer: "x"} // as NewVerifier makes one with a JWKS and no secret
	if _, _, err := jwksOnly.Mint("alice", time.Hour, now); !errors.Is(err, ErrWeakSecret) {
		t.Errorf("Mint with no secret: %v, want ErrWeakSecret", err)
	}
}
