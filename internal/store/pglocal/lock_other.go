//go:build !unix

package pglocal

import "context"

// lockDir does not lock where there is no flock: two starts at once of one
// cluster are left to fail as they may.
func lockDir(context.Context, string) (func(), error) { return func() {}, nil }
