// Package setting names what is wrong with a package's configuration by
// the Go field it is about (Secret, JWKS.URL, Limits.MaxModelCalls), never
// by where the value came from: a package does not know that cmd/server
// reads its fields from the environment, and a test or another command
// fills them some other way. Whoever filled the field says where it came
// from (cmd/server names the environment variable).
package setting

import (
	"errors"
	"fmt"
	"strings"
)

// Error is one field of a configuration that breaks a rule. Its text is
// the field, then what is wrong with it: "Secret must be at least 32 bytes
// (got 5)".
type Error struct {
	Field string // the Go field, dotted when nested: "JWKS.URL"
	Err   error  // what is wrong, as a phrase that follows the field's name
}

// Invalid returns an *Error for field, its phrase made from format as
// fmt.Errorf makes it, so that %w keeps a sentinel for errors.Is.
func Invalid(field, format string, args ...any) error {
	return &Error{Field: field, Err: fmt.Errorf(format, args...)}
}

func (e *Error) Error() string { return e.Field + " " + e.Err.Error() }

// Unwrap returns the phrase's error, so that errors.Is finds a sentinel in it.
func (e *Error) Unwrap() error { return e.Err }

// Within names each problem of err, a nested configuration's (joined or
// alone), as the field it is in: Within("Limits", err) turns MaxTokens into
// Limits.MaxTokens. Errors that name no field are kept as they are.
func Within(parent string, err error) error {
	return Map(err, func(field string) string { return parent + "." + field })
}

// Map renames the field of each *Error in err, alone or joined by
// errors.Join, with rename; the other errors are kept as they are, and so
// is an *Error wrapped in text of its own (fmt.Errorf("x: %w", e)), whose
// text Map could not keep. A rename that returns "" keeps the field's name.
func Map(err error, rename func(field string) string) error {
	switch e := err.(type) {
	case nil:
		return nil
	case *Error:
		if name := rename(e.Field); name != "" {
			return &Error{Field: name, Err: e.Err}
		}
		return e
	case interface{ Unwrap() []error }:
		if !isJoin(err, e.Unwrap()) {
			return err
		}
		var errs []error
		for _, inner := range e.Unwrap() {
			errs = append(errs, Map(inner, rename))
		}
		return errors.Join(errs...)
	}
	return err
}

// isJoin reports whether err is what errors.Join makes of inner: their
// texts, one a line, and nothing else.
func isJoin(err error, inner []error) bool {
	texts := make([]string, len(inner))
	for i, e := range inner {
		texts[i] = e.Error()
	}
	return err.Error() == strings.Join(texts, "\n")
}
