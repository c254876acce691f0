package http

import (
	"net/http"
	"time"

	"github.com/taskchat/taskchat/internal/auth"
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
// (see auth.AddressedToLoopback).
func handleDevTokenCreate(v *auth.Verifier, ttl time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !auth.AddressedToLoopback(r.Host) {
			writeProblem(w, apiErrf(codeMisdirected,
				"The development login answers only requests addressed to localhost or a loopback address, not %q.", r.Host))
			return
		}
		var body devTokenRequest
		if err := decodeJSON(w, r, maxDevTokenBody, &body); err != nil {
			writeProblem(w, toAPIError(err))
			return
		}
		if err := auth.CheckUserID(body.UserID); err != nil {
			writeProblem(w, toAPIError(tasks.Invalid("user_id", err.Error())))
			return
		}
		token, expires, err := v.Mint(body.UserID, ttl, time.Now())
		if err != nil {
			// Only a broken configuration gets here: the id was checked above.
			writeProblem(w, apiErr(codeInternal, "Something went wrong on our side."))
			return
		}
		writeJSON(w, http.StatusOK, devTokenResponse{Token: token, ExpiresAt: expires})
	})
}
