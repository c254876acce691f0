package auth

import (
	"net"
	"strings"
	"time"
)

// Mint signs a token for userID with the verifier's own secret, issuer and
// audience, so that Verify accepts it: the development login's token. It
// returns the token's expiry as the exp claim holds it, in whole seconds.
// Without a secret (a JWKS alone) it fails with ErrWeakSecret.
func (v *Verifier) Mint(userID string, ttl time.Duration, now time.Time) (token string, expires time.Time, err error) {
	token, err = MintToken(v.secret, userID, ttl, v.issuer, v.audience, now)
	return token, now.Add(ttl).Truncate(time.Second).UTC(), err
}

// AddressedToLoopback reports whether host, a request's Host, names this
// machine: localhost, a name under .localhost, or a loopback address. A
// loopback listener is what keeps the development login to its machine,
// and DNS rebinding gets around it: a web page whose own name comes to
// resolve to 127.0.0.1 sends requests there as from its own origin, the
// browser lets it read the answers, and a token from the development login
// opens any user's API to it. Such a request carries the page's name as
// its Host.
func AddressedToLoopback(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return isLoopbackHost(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
}

// isLoopbackHost reports whether host, a bare host name or IP address,
// names this machine.
func isLoopbackHost(host string) bool {
	host = strings.ToLower(host)
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
