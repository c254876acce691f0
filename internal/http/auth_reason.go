package http

import (
	"errors"
	"net/http"

	"github.com/golang-jwt/jwt/v5"
)

// The reasons Verify gives that are not the JWT library's.
var (
	errTokenEmpty     = errors.New("empty token")
	errTokenOversized = errors.New("oversized token")
	errBadSubject     = errors.New("sub claim")
)

// Why a request was answered 401, as its access-log line says it
// (auth_error): a fixed vocabulary, so that a log never holds a token or a
// piece of one, and an operator can tell a secret that differs between
// issuer and server (bad_signature) from a clock or lifetime problem
// (expired) or a configuration mismatch (wrong_issuer, wrong_audience).
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
// because the token names another algorithm than HS256 is told apart from
// one made with another secret by reading the token's unverified header.
func rejectionReason(err error, token string) string {
	for _, r := range rejectionReasons {
		if !errors.Is(err, r.cause) {
			continue
		}
		if r.reason == reasonBadSignature && !signedWithHS256(token) {
			return reasonWrongAlgorithm
		}
		return r.reason
	}
	return reasonInvalid
}

func signedWithHS256(token string) bool {
	t, _, err := jwt.NewParser().ParseUnverified(token, &jwt.RegisteredClaims{})
	return err == nil && t.Method == jwt.SigningMethodHS256
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
