package http

import (
	"errors"
	"net/http"
	"slices"

	"github.com/golang-jwt/jwt/v5"
)

// The reasons Verify gives that are not the JWT library's.
var (
	errTokenEmpty     = errors.New("empty token")
	errTokenOversized = errors.New("oversized token")
	errBadSubject     = errors.New("sub claim")
	// The JWKS's reasons, told apart so that an operator knows whether
	// to look at the provider (keys_unavailable) or at the token.
	errUnknownKey      = errors.New("no JWKS key has the token's kid")
	errKeysUnavailable = errors.New("the JWKS has no keys: it has not loaded")
	errWrongKey        = errors.New("the JWKS key the token's kid names is not one for its algorithm")
)

// Why a request was answered 401, as its access-log line says it
// (auth_error): a fixed vocabulary, so that a log never holds a token or a
// piece of one, and an operator can tell a secret that differs between
// issuer and server (bad_signature) from a clock or lifetime problem
// (expired) or a configuration mismatch (wrong_issuer, wrong_audience), and
// a provider whose keys have not loaded (keys_unavailable) from a token
// naming a key the provider does not publish (unknown_key) or one that is
// not for its algorithm (wrong_key).
const (
	reasonMissing        = "missing"
	reasonEmpty          = "empty"
	reasonOversized      = "oversized"
	reasonMalformed      = "malformed"
	reasonWrongAlgorithm = "wrong_algorithm"
	reasonBadSignature   = "bad_signature"
	reasonExpired        = "expired"
	reasonNotYetValid    = "not_yet_valid"
	reasonMissingExp     = "missing_exp"
	reasonWrongIssuer    = "wrong_issuer"
	reasonWrongAudience  = "wrong_audience"
	reasonBadSubject     = "bad_subject"
	reasonUnknownKey     = "unknown_key"
	reasonNoKeys         = "keys_unavailable"
	reasonWrongKey       = "wrong_key"
	reasonInvalid        = "invalid"
)

// rejectionReasons pairs each cause Verify may report with its reason, the
// first match winning: a forged token is reported as such before any of
// its claims.
var rejectionReasons = []struct {
	cause  error
	reason string
}{
	{errTokenEmpty, reasonEmpty},
	{errTokenOversized, reasonOversized},
	{jwt.ErrTokenMalformed, reasonMalformed},
	{errKeysUnavailable, reasonNoKeys},
	{errUnknownKey, reasonUnknownKey},
	{errWrongKey, reasonWrongKey},
	{jwt.ErrTokenUnverifiable, reasonWrongAlgorithm},
	{jwt.ErrTokenSignatureInvalid, reasonBadSignature},
	{jwt.ErrTokenExpired, reasonExpired},
	{jwt.ErrTokenNotValidYet, reasonNotYetValid},
	{jwt.ErrTokenUsedBeforeIssued, reasonNotYetValid},
	{jwt.ErrTokenRequiredClaimMissing, reasonMissingExp},
	{jwt.ErrTokenInvalidIssuer, reasonWrongIssuer},
	{jwt.ErrTokenInvalidAudience, reasonWrongAudience},
	{errBadSubject, reasonBadSubject},
}

// rejectionReason names why Verify refused token. A signature refused
// because the token names an algorithm a refuses is told apart from one
// made with another key by reading the token's unverified header.
func (a *Authenticator) rejectionReason(err error, token string) string {
	for _, r := range rejectionReasons {
		if !errors.Is(err, r.cause) {
			continue
		}
		switch {
		case r.reason == reasonBadSignature && !a.acceptsAlgorithm(token):
			return reasonWrongAlgorithm
		case r.reason == reasonMissingExp:
			return a.missingClaim(token)
		}
		return r.reason
	}
	return reasonInvalid
}

// missingClaim names the required claim token lacks: golang-jwt reports a
// missing exp, iss and aud alike, and only exp is the token's lifetime.
func (a *Authenticator) missingClaim(token string) string {
	var c jwt.RegisteredClaims
	if _, _, err := jwt.NewParser().ParseUnverified(token, &c); err == nil && c.ExpiresAt != nil {
		switch {
		case a.issuer != "" && c.Issuer == "":
			return reasonWrongIssuer
		case a.audience != "" && len(c.Audience) == 0:
			return reasonWrongAudience
		}
	}
	return reasonMissingExp
}

// acceptsAlgorithm reports whether token's header names an algorithm a
// accepts.
func (a *Authenticator) acceptsAlgorithm(token string) bool {
	t, _, err := jwt.NewParser().ParseUnverified(token, &jwt.RegisteredClaims{})
	return err == nil && slices.Contains(a.methods, t.Method.Alg())
}

// rejectRequest answers 401 for reason and records the reason for the
// access log.
func rejectRequest(w http.ResponseWriter, r *http.Request, reason string) {
	infoFrom(r.Context()).authError = reason
	if reason == reasonMissing {
		writeUnauthorized(w, false, "The bearer token is missing.")
		return
	}
	writeUnauthorized(w, true, "The bearer token is invalid or expired.")
}
