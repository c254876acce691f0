// Package auth says which user a request acts for: it verifies the bearer
// token of a request (Verifier.Authenticate) and returns the user its sub
// claim names, or an error saying why not (Reason). It trusts HS256 tokens
// signed with taskchat's own secret, the tokens of an identity provider
// whose keys a JWKS publishes, or both, each algorithm pinned to its one
// source of keys. It also signs tokens: MintToken for the token command and
// tests, Verifier.Mint for the development login.
//
// It knows HTTP only as far as a request's Authorization header and Host:
// internal/http mounts it (its middleware, the development login's route)
// and maps its errors to statuses, and cmd/server fills its Config, whose
// errors name the Go field (see internal/setting).
package auth
