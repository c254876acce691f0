// Package http is taskchat's HTTP API: JWT authentication, the chat turn as
// JSON and as Server-Sent Events, conversations, tasks and health checks.
// NewServer lists every route in one place; api/openapi.yaml is its
// contract and a test keeps the two in step.
package http

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/tasks"
)

// The error codes of the API, the "code" member of every problem body.
const (
	codeInvalidRequest       = "invalid_request"
	codeUnauthorized         = "unauthorized"
	codeForbidden            = "forbidden"
	codeNotFound             = "not_found"
	codeMethodNotAllowed     = "method_not_allowed"
	codeConversationBusy     = "conversation_busy"
	codeRequestInProgress    = "request_in_progress"
	codePayloadTooLarge      = "payload_too_large"
	codeUnsupportedMediaType = "unsupported_media_type"
	codeIdempotencyMismatch  = "idempotency_key_reused"
	codeRateLimited          = "rate_limited"
	codeInternal             = "internal"
	codeLLMUnavailable       = "llm_unavailable"
	codeUnavailable          = "unavailable"
)

// problem is an RFC 9457 problem details body with taskchat's code member.
type problem struct {
	Type   string       `json:"type"`
	Title  string       `json:"title"`
	Status int          `json:"status"`
	Code   string       `json:"code"`
	Detail string       `json:"detail,omitempty"`
	Errors []fieldIssue `json:"errors,omitempty"`
}

// fieldIssue names one field that broke a rule.
type fieldIssue struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// apiError is an error that already knows its status, code and message.
type apiError struct {
	status int
	code   string
	detail string
	fields []fieldIssue
}

func (e *apiError) Error() string { return e.code + ": " + e.detail }

func errorf(status int, code, format string, args ...any) *apiError {
	return &apiError{status: status, code: code, detail: fmt.Sprintf(format, args...)}
}

// llmUnavailableMessage is what a person reads when the model failed.
const llmUnavailableMessage = "The assistant is not available right now. Your message was saved; please try again in a moment."

// toAPIError is the one table from error kind to status and code.
// Anything it does not recognise is an internal error.
func toAPIError(err error) *apiError {
	var ae *apiError
	var fe *tasks.FieldError
	var nf *tasks.NotFoundError
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &fe):
		return &apiError{status: http.StatusBadRequest, code: codeInvalidRequest, detail: fe.Error(),
			fields: []fieldIssue{{Field: fe.Field, Message: fe.Message}}}
	case errors.Is(err, tasks.ErrInvalid):
		return errorf(http.StatusBadRequest, codeInvalidRequest, "The request is invalid.")
	case errors.As(err, &nf):
		return errorf(http.StatusNotFound, codeNotFound, "%s %d was not found.", capitalize(nf.Kind), nf.ID)
	case errors.Is(err, tasks.ErrNotFound):
		return errorf(http.StatusNotFound, codeNotFound, "Not found.")
	case errors.Is(err, tasks.ErrConversationBusy):
		return errorf(http.StatusConflict, codeConversationBusy, "This conversation is still answering a previous message; wait for it to finish, then send again.")
	case errors.Is(err, tasks.ErrRequestInProgress):
		return errorf(http.StatusConflict, codeRequestInProgress, "A request with this Idempotency-Key is still in progress; retry after it finishes.")
	case errors.Is(err, tasks.ErrKeyMismatch):
		return errorf(http.StatusUnprocessableEntity, codeIdempotencyMismatch, "This Idempotency-Key was already used with a different request body.")
	case errors.Is(err, tasks.ErrUnavailable):
		return errorf(http.StatusServiceUnavailable, codeUnavailable, "The service is temporarily unavailable; please try again shortly.")
	case errors.Is(err, context.Canceled):
		// The client left (nobody reads this) or the server is shutting down.
		return errorf(http.StatusServiceUnavailable, codeUnavailable, "The request was interrupted because the service is restarting; please try again.")
	case isModelFailure(err):
		return errorf(http.StatusBadGateway, codeLLMUnavailable, llmUnavailableMessage)
	}
	return errorf(http.StatusInternalServerError, codeInternal, "Something went wrong on our side.")
}

// isModelFailure reports whether err is one of the agent's model errors.
func isModelFailure(err error) bool {
	var me *agent.ModelError
	return errors.As(err, &me)
}

// writeError answers err as problem JSON. Internal errors are logged with
// their cause, which the client never sees.
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	ae := toAPIError(err)
	if ae.status >= 500 && r.Context().Err() == nil {
		// (A client that left hears nothing; the access log has the request.)
		log.ErrorContext(r.Context(), "request failed", "status", ae.status, "code", ae.code, "err", err)
	}
	writeProblem(w, ae)
}

// writeProblem writes ae as an application/problem+json body.
func writeProblem(w http.ResponseWriter, ae *apiError) {
	p := problem{
		Type:   "https://taskchat.dev/problems/" + strings.ReplaceAll(ae.code, "_", "-"),
		Title:  http.StatusText(ae.status),
		Status: ae.status,
		Code:   ae.code,
		Detail: ae.detail,
		Errors: ae.fields,
	}
	body, _ := json.Marshal(p)
	h := w.Header()
	h.Set("Content-Type", "application/problem+json")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(ae.status)
	_, _ = w.Write(append(body, '\n'))
}

// writeJSON marshals v first, then sets the headers, then writes: a value
// that cannot be encoded becomes a 500, never a half-written 200.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		writeProblem(w, errorf(http.StatusInternalServerError, codeInternal, "Something went wrong on our side."))
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

// decodeJSON reads a JSON object of at most maxBytes into dst, refusing
// other media types, unknown fields, trailing data and oversize bodies.
func decodeJSON(w http.ResponseWriter, r *http.Request, maxBytes int64, dst any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			return errorf(http.StatusUnsupportedMediaType, codeUnsupportedMediaType, "Send the body as application/json.")
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBytes))
	if err != nil {
		return decodeError(err, maxBytes)
	}
	if !utf8.Valid(body) {
		// encoding/json would silently turn bad bytes into U+FFFD.
		return errorf(http.StatusBadRequest, codeInvalidRequest, "The body must be UTF-8 encoded JSON.")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return decodeError(err, maxBytes)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errorf(http.StatusBadRequest, codeInvalidRequest, "The body must hold exactly one JSON object.")
	}
	return nil
}

// decodeError explains a JSON decoding failure in the client's terms.
func decodeError(err error, maxBytes int64) error {
	var tooBig *http.MaxBytesError
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &tooBig):
		return errorf(http.StatusRequestEntityTooLarge, codePayloadTooLarge, "The body must be at most %d bytes.", maxBytes)
	case errors.Is(err, io.EOF):
		return errorf(http.StatusBadRequest, codeInvalidRequest, "The body is empty; send a JSON object.")
	case errors.As(err, &syntax), errors.Is(err, io.ErrUnexpectedEOF):
		return errorf(http.StatusBadRequest, codeInvalidRequest, "The body is not valid JSON.")
	case errors.As(err, &typ):
		ae := errorf(http.StatusBadRequest, codeInvalidRequest, "Field %q must be of type %s.", typ.Field, jsonType(typ.Type.Kind().String()))
		ae.fields = []fieldIssue{{Field: typ.Field, Message: "must be of type " + jsonType(typ.Type.Kind().String())}}
		return ae
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		field := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		ae := errorf(http.StatusBadRequest, codeInvalidRequest, "Unknown field %q.", field)
		ae.fields = []fieldIssue{{Field: field, Message: "is not a known field"}}
		return ae
	}
	return errorf(http.StatusBadRequest, codeInvalidRequest, "The body could not be read as JSON.")
}

func jsonType(kind string) string {
	switch {
	case strings.HasPrefix(kind, "int"), strings.HasPrefix(kind, "uint"), strings.HasPrefix(kind, "float"):
		return "number"
	case kind == "struct", kind == "map":
		return "object"
	case kind == "slice":
		return "array"
	case kind == "bool":
		return "boolean"
	}
	return kind
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// detach returns a context that keeps ctx's values but not its cancellation,
// for the writes that must happen after a client went away.
func detach(ctx context.Context) context.Context { return context.WithoutCancel(ctx) }
