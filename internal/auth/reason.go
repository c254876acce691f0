package auth

import (
	"errors"
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

// Why a request's token was refused, as its access-log line says it
// (auth_error): a fixed vocabulary, so that a log never holds a token or a
// piece of one, and an operator can tell a secret that differs between
// issuer and server (bad_signature) from a clock or lifetime problem
// (expired) or a configuration mismatch (wrong_issuer, wrong_audience), and
// a provider whose keys have not loaded (keys_unavailable) from a token
// naming a key the provider does not publish (unknown_key) or one that is
// not for its algorithm (wrong_key).
const (
	ReasonMissing        = "missing"
	ReasonEmpty          = "empty"
	ReasonOversized      = "oversized"
	ReasonMalformed      = "malformed"
	ReasonWrongAlgorithm = "wrong_algorithm"
	ReasonBadSignature   = "bad_signature"
	ReasonExpired        = "expired"
	ReasonNotYetValid    = "not_yet_valid"
	ReasonMissingExp     = "missing_exp"
	ReasonWrongIssuer    = "wrong_issuer"
	ReasonWrongAudience  = "wrong_audience"
	ReasonBadSubject     = "bad_subject"
	ReasonUnknownKey     = "unknown_key"
	ReasonNoKeys         = "keys_unavailable"
	ReasonWrongKey       = "wrong_key"
	ReasonInvalid        = "invalid"
)

// rejection is a refused token's error: the cause, and the reason it is
// logged as.
type rejection struct {
	reason string
	err    error
}

func (r *rejection) Error() string { return r.err.Error() }
func (r *rejection) Unwrap() error { return r.err }

// Reason names why err, an error of Authenticate or Verify, refused a
// request's token: one of the Reason constants, or "" when err is no
// refusal of theirs.
func Reason(err error) string {
	var r *rejection
	if errors.As(err, &r) {
		return r.reason
	}
	return ""
}

// rejectionReasons pairs each cause Verify may report with its reason, the
// first match winning: a forged token is reported as such before any of
// its claims.
var rejectionReasons = []struct {
	cause  error
	reason string
}{
	{errTokenEmpty, ReasonEmpty},
	{errTokenOversized, ReasonOversized},
	{jwt.ErrTokenMalformed, ReasonMalformed},
	{errKeysUnavailable, ReasonNoKeys},
	{errUnknownKey, ReasonUnknownKey},
	{errWrongKey, ReasonWrongKey},
	{jwt.ErrTokenUnverifiable, ReasonWrongAlgorithm},
	{jwt.ErrTokenSignatureInvalid, ReasonBadSignature},
	{jwt.ErrTokenExpired, ReasonExpired},
	{jwt.ErrTokenNotValidYet, ReasonNotYetValid},
	{jwt.ErrTokenUsedBeforeIssued, ReasonNotYetValid},
	{jwt.ErrTokenRequiredClaimMissing, ReasonMissingExp},
	{jwt.ErrTokenInvalidIssuer, ReasonWrongIssuer},
	{jwt.ErrTokenInvalidAudience, ReasonWrongAudience},
	{errBadSubject, ReasonBadSubject},
}

// rejectionReason names why token was refused with err. A signature
// refused because the token names an algorithm v refuses is told apart
// from one made with another key by reading the token's unverified header.
func (v *Verifier) rejectionReason(err error, token string) string {
	for _, r := range rejectionReasons {
		if !errors.Is(err, r.cause) {
			continue
		}
		switch {
		case r.reason == ReasonBadSignature && !v.acceptsAlgorithm(token):
			return ReasonWrongAlgorithm
		case r.reason == ReasonMissingExp:
			return v.missingClaim(token)
		}
		return r.reason
	}
	return ReasonInvalid
}

// missingClaim names the required claim token lacks: golang-jwt reports a
// missing exp, iss and aud alike, and only exp is the token's lifetime.
func (v *Verifier) missingClaim(token string) string {
	var c jwt.RegisteredClaims
	if _, _, err := jwt.NewParser().ParseUnverified(token, &c); err == nil && c.ExpiresAt != nil {
		switch {
		case v.issuer != "" && c.Issuer == "":
			return ReasonWrongIssuer
		case v.audience != "" && len(c.Audience) == 0:
			return ReasonWrongAudience
		}
	}
	return ReasonMissingExp
}

// acceptsAlgorithm reports whether token's header names an algorithm v
// accepts.
func (v *Verifier) acceptsAlgorithm(token string) bool {
	t, _, err := jwt.NewParser().ParseUnverified(token, &jwt.RegisteredClaims{})
	return err == nil && slices.Contains(v.methods, t.Method.Alg())
}
