package http

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/taskchat/taskchat/internal/tasks"
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
// other media types, unknown fields (names match exactly), trailing data,
// text that is not UTF-8 and oversize bodies.
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
	if err := exactMembers(json.NewDecoder(bytes.NewReader(body)), reflect.TypeOf(dst)); err != nil {
		return decodeError(err, maxBytes)
	}
	if !tasks.JSONBAccepts(body) {
		// encoding/json would silently turn an escaped lone surrogate
		// ("\ud800") into U+FFFD too. The body is valid UTF-8 and JSON by
		// now; JSONBAccepts finds the surrogate, as StorableJSON does in a
		// model's tool arguments, and the numbers it refuses (1e999999)
		// are out of range of every member taskchat reads.
		return apiErr(codeInvalidRequest, `The body escapes a lone UTF-16 surrogate (such as "\ud800"), which is not valid UTF-8, or holds a number out of range.`)
	}
	return nil
}

// query parses the request's query string. r.URL.Query() drops the pairs
// it cannot parse (one after a ';', one with a bad '%' escape) without a
// word, and a filter or cursor dropped so answers as if it was not sent.
func query(r *http.Request) (url.Values, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, apiErrf(codeInvalidRequest,
			"The query string could not be read (%v): separate parameters with '&', and percent-encode a '%%' or ';' in a value.", err)
	}
	return q, nil
}

// decodeError explains a JSON decoding failure in the client's terms.
func decodeError(err error, maxBytes int64) error {
	var tooBig *http.MaxBytesError
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var ae *apiError
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &tooBig):
		return apiErrf(codePayloadTooLarge, "The body must be at most %d bytes.", maxBytes)
	case errors.Is(err, io.EOF):
		return apiErr(codeInvalidRequest, "The body is empty; send a JSON object.")
	case errors.As(err, &syntax), errors.Is(err, io.ErrUnexpectedEOF):
		return apiErr(codeInvalidRequest, "The body is not valid JSON.")
	case errors.As(err, &typ) && typ.Field == "":
		// The body itself is of the wrong type: there is no field to name.
		return apiErr(codeInvalidRequest, "The body must be a JSON object.")
	case errors.As(err, &typ):
		ae := apiErrf(codeInvalidRequest, "Field %q must be of type %s.", typ.Field, jsonType(typ.Type.Kind().String()))
		ae.fields = []fieldIssue{{Field: typ.Field, Message: "must be of type " + jsonType(typ.Type.Kind().String())}}
		return ae
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return unknownField(strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`))
	}
	return apiErr(codeInvalidRequest, "The body could not be read as JSON.")
}

// exactMembers refuses a member of the next value of dec, which decoded
// into a value of type t, whose name is not exactly a field's json name:
// encoding/json fills a field from a member whose name differs only by case
// ({"MESSAGE": ...}), and the contract's names are exact. It walks only
// what may hold an object that becomes a struct; every other value is
// skipped without being kept, so a 1 MiB body costs a few linear scans
// more, not an allocation per value.
func exactMembers(dec *json.Decoder, t reflect.Type) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if !walked(t) {
		return dec.Decode(&skipped{})
	}
	// The value decoded, so it is an object for a struct, an array for a
	// slice or an array, or null.
	if open, err := dec.Token(); err != nil || open == nil {
		return err
	}
	var fields map[string]reflect.Type
	if t.Kind() == reflect.Struct {
		fields = jsonFields(t)
	}
	for dec.More() {
		var elem reflect.Type
		if fields == nil {
			elem = t.Elem()
		} else {
			name, err := dec.Token()
			if err != nil {
				return err
			}
			var ok bool
			if elem, ok = fields[name.(string)]; !ok {
				return unknownField(name.(string))
			}
		}
		if err := exactMembers(dec, elem); err != nil {
			return err
		}
	}
	_, err := dec.Token() // the closing '}' or ']'
	return err
}

// skipped is a value that is scanned and not kept.
type skipped struct{}

func (skipped) UnmarshalJSON([]byte) error { return nil }

// walked reports whether a value of type t may hold an object that becomes
// a struct, whose member names exactMembers must check. A type that
// decodes itself (json.RawMessage, time.Time) is not walked.
func walked(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(reflect.TypeFor[json.Unmarshaler]()) {
		return false
	}
	switch t.Kind() {
	case reflect.Struct:
		return true
	case reflect.Slice, reflect.Array:
		return walked(t.Elem())
	}
	return false
}

// jsonFields maps the json names of struct t's fields, those of embedded
// structs included, to their types, as encoding/json names them.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	fields := map[string]reflect.Type{}
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-":
		case f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct:
			maps.Copy(fields, jsonFields(f.Type))
		case !f.IsExported():
		case name == "":
			fields[f.Name] = f.Type
		default:
			fields[name] = f.Type
		}
	}
	return fields
}

func unknownField(field string) *apiError {
	ae := apiErrf(codeInvalidRequest, "Unknown field %q.", field)
	ae.fields = []fieldIssue{{Field: field, Message: "is not a known field"}}
	return ae
}

func jsonType(kind string) string {
	switch {
	case strings.HasPrefix(kind, "int"), strings.HasPrefix(kind, "uint"):
		return "integer"
	case strings.HasPrefix(kind, "float"):
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
