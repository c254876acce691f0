package http

import (
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/taskchat/taskchat/internal/tasks"
)

// DevLogin is the development login: when Enabled, POST /auth/dev/token
// signs a token for whichever user the caller names, valid for TTL. It
// lets a person on their own machine sign in with a name instead of a
// token minted in another shell. Anyone who can reach the route can act
// as any user, so it is off unless asked for, and the route is not even
// registered then (404).
type DevLogin struct {
	Enabled bool
	TTL     time.Duration
}

// maxDevTokenBody bounds the request: a user id is at most 255 bytes.
const maxDevTokenBody = 4 << 10

type devTokenRequest struct {
	UserID string `json:"user_id"`
}

type devTokenResponse struct {
	Token     string    `json:"token"`
	ExpiresAt time.Time `json:"expires_at"`
}

// handleDevTokenCreate mints a token for the user in the body, signed as
// the token subcommand signs them, so the API accepts it like any other.
// It answers only requests addressed to this machine by a loopback name
// (see addressedToLoopback).
func handleDevTokenCreate(auth *Authenticator, ttl time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !addressedToLoopback(r.Host) {
			writeProblem(w, apiErrf(codeMisdirected,
				"The development login answers only requests addressed to localhost or a loopback address, not %q.", r.Host))
			return
		}
		var body devTokenRequest
		if err := decodeJSON(w, r, maxDevTokenBody, &body); err != nil {
			writeProblem(w, toAPIError(err))
			return
		}
		if err := checkUserID(body.UserID); err != nil {
			writeProblem(w, toAPIError(tasks.Invalid("user_id", err.Error())))
			return
		}
		now := time.Now()
		token, expires, err := auth.mint(body.UserID, ttl, now)
		if err != nil {
			// Only a broken configuration gets here: the id was checked above.
			writeProblem(w, apiErr(codeInternal, "Something went wrong on our side."))
			return
		}
		writeJSON(w, http.StatusOK, devTokenResponse{Token: token, ExpiresAt: expires})
	})
}

// addressedToLoopback reports whether host, a request's Host, names this
// machine: localhost, a name under .localhost, or a loopback address. A
// loopback listener is what keeps the development login to its machine,
// and DNS rebinding gets around it: a web page whose own name comes to
// resolve to 127.0.0.1 sends requests there as from its own origin, the
// browser lets it read the answers, and a token from this route opens any
// user's API to it. Such a request carries the page's name as its Host.
func addressedToLoopback(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// mint signs a token for userID with the authenticator's own secret,
// issuer and audience, so Verify accepts it. It returns the token's expiry
// as the exp claim holds it, in whole seconds.
func (a *Authenticator) mint(userID string, ttl time.Duration, now time.Time) (string, time.Time, error) {
	token, err := MintToken(a.secret, userID, ttl, a.issuer, a.audience, now)
	return token, now.Add(ttl).Truncate(time.Second).UTC(), err
}
