package tasks

import (
	"errors"
	"fmt"
)

// The error kinds of taskchat. Callers test for them with errors.Is; the
// HTTP layer maps each to one status code, the MCP tools to one sentence.
var (
	// ErrNotFound means the thing does not exist for this user. Another
	// user's data is reported the same way, so its existence never leaks.
	ErrNotFound = errors.New("not found")
	// ErrInvalid means the input breaks a rule; see FieldError for which.
	ErrInvalid = errors.New("invalid input")
	// ErrConflict means the request collides with work in progress, such as
	// a turn already running in the same conversation.
	ErrConflict = errors.New("conflict")
	// ErrUnavailable means a dependency (the database) cannot be reached.
	ErrUnavailable = errors.New("unavailable")
)

// FieldError says which field broke which rule. It matches ErrInvalid.
type FieldError struct {
	Field   string
	Message string
}

// Invalid returns a FieldError for field.
func Invalid(field, message string) error {
	return &FieldError{Field: field, Message: message}
}

func (e *FieldError) Error() string { return e.Field + " " + e.Message }

// Is reports that every FieldError is an ErrInvalid.
func (e *FieldError) Is(target error) bool { return target == ErrInvalid }

// NotFoundError names what was not found. It matches ErrNotFound.
type NotFoundError struct {
	Kind string // "task", "conversation"
	ID   int64
}

// NotFound returns a NotFoundError for the thing of kind with id.
func NotFound(kind string, id int64) error {
	return &NotFoundError{Kind: kind, ID: id}
}

func (e *NotFoundError) Error() string { return fmt.Sprintf("%s %d not found", e.Kind, e.ID) }

// Is reports that every NotFoundError is an ErrNotFound.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }
