// Package http is taskchat's HTTP API: JWT authentication, the chat turn as
// JSON and as Server-Sent Events, conversations, tasks, health checks, and
// the task tools over MCP for outside clients (/mcp).
// NewServer lists every route in one place; api/openapi.yaml is its
// contract and a test keeps the two in step.
package http

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
	"unicode/utf8"
)

// writeJSON marshals v first, then sets the headers, then writes: a value
// that cannot be encoded becomes a 500, never a half-written 200.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		writeProblem(w, apiErr(codeInternal, "Something went wrong on our side."))
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
			return apiErr(codeUnsupportedMediaType, "Send the body as application/json.")
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBytes))
	if err != nil {
		return decodeError(err, maxBytes)
	}
	if !utf8.Valid(body) {
		// encoding/json would silently turn bad bytes into U+FFFD.
		return apiErr(codeInvalidRequest, "The body must be UTF-8 encoded JSON.")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return decodeError(err, maxBytes)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return apiErr(codeInvalidRequest, "The body must hold exactly one JSON object.")
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
		return apiErrf(codePayloadTooLarge, "The body must be at most %d bytes.", maxBytes)
	case errors.Is(err, io.EOF):
		return apiErr(codeInvalidRequest, "The body is empty; send a JSON object.")
	case errors.As(err, &syntax), errors.Is(err, io.ErrUnexpectedEOF):
		return apiErr(codeInvalidRequest, "The body is not valid JSON.")
	case errors.As(err, &typ):
		ae := apiErrf(codeInvalidRequest, "Field %q must be of type %s.", typ.Field, jsonType(typ.Type.Kind().String()))
		ae.fields = []fieldIssue{{Field: typ.Field, Message: "must be of type " + jsonType(typ.Type.Kind().String())}}
		return ae
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		field := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		ae := apiErrf(codeInvalidRequest, "Unknown field %q.", field)
		ae.fields = []fieldIssue{{Field: field, Message: "is not a known field"}}
		return ae
	}
	return apiErr(codeInvalidRequest, "The body could not be read as JSON.")
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
