package http

// This file loads the contract as mustMatchSpec and the document tests read
// it: api/openapi.yaml decoded into the OpenAPI 3.1 members it uses, its
// schemas compiled on demand. OpenAPI 3.1 schemas are JSON Schema 2020-12,
// so they are validated with github.com/google/jsonschema-go, which the MCP
// tools use already; the YAML is read with go.yaml.in/yaml/v3, already in
// go.sum.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"go.yaml.in/yaml/v3"
)

// specFile is the contract, relative to this package's directory.
const specFile = "../../api/openapi.yaml"

// specDoc is the part of OpenAPI 3.1 that api/openapi.yaml uses. It is
// decoded with unknown members refused: when the document needs a valid
// OpenAPI member that is missing here, add it.
type specDoc struct {
	OpenAPI           string `json:"openapi"`
	JSONSchemaDialect string `json:"jsonSchemaDialect"`
	Info              struct {
		Title, Version, Summary, Description, TermsOfService string
		Contact                                              struct{ Name, URL, Email string }
		License                                              struct{ Name, Identifier, URL string }
	} `json:"info"`
	Servers []struct {
		URL, Description string
		Variables        map[string]struct {
			Default, Description string
			Enum                 []string
		}
	} `json:"servers"`
	Security []map[string][]string                `json:"security"`
	Tags     []struct{ Name, Description string } `json:"tags"`
	Paths    map[string]*specPathItem             `json:"paths"`

	Components struct {
		SecuritySchemes map[string]struct{ Type, Scheme, BearerFormat, Description string } `json:"securitySchemes"`
		Parameters      map[string]*specParameter                                           `json:"parameters"`
		Headers         map[string]*specHeader                                              `json:"headers"`
		Responses       map[string]*specResponse                                            `json:"responses"`
		Schemas         map[string]json.RawMessage                                          `json:"schemas"`
	} `json:"components"`
}

type specPathItem struct {
	Summary     string           `json:"summary"`
	Description string           `json:"description"`
	Parameters  []*specParameter `json:"parameters"`
	Get         *specOperation   `json:"get"`
	Put         *specOperation   `json:"put"`
	Post        *specOperation   `json:"post"`
	Delete      *specOperation   `json:"delete"`
	Patch       *specOperation   `json:"patch"`
}

func (p *specPathItem) operations() map[string]*specOperation {
	ops := map[string]*specOperation{}
	for method, op := range map[string]*specOperation{"GET": p.Get, "PUT": p.Put, "POST": p.Post, "DELETE": p.Delete, "PATCH": p.Patch} {
		if op != nil {
			ops[method] = op
		}
	}
	return ops
}

type specOperation struct {
	OperationID string                   `json:"operationId"`
	Tags        []string                 `json:"tags"`
	Summary     string                   `json:"summary"`
	Description string                   `json:"description"`
	Security    *[]map[string][]string   `json:"security"` // nil: the document's
	Parameters  []*specParameter         `json:"parameters"`
	RequestBody *specRequestBody         `json:"requestBody"`
	Responses   map[string]*specResponse `json:"responses"`
}

type specParameter struct {
	Ref         string                  `json:"$ref"`
	Name        string                  `json:"name"`
	In          string                  `json:"in"`
	Required    bool                    `json:"required"`
	Description string                  `json:"description"`
	Deprecated  bool                    `json:"deprecated"`
	Schema      json.RawMessage         `json:"schema"`
	Example     any                     `json:"example"`
	Examples    map[string]*specExample `json:"examples"`
}

type specRequestBody struct {
	Description string                    `json:"description"`
	Required    bool                      `json:"required"`
	Content     map[string]*specMediaType `json:"content"`
}

type specResponse struct {
	Ref         string                    `json:"$ref"`
	Description string                    `json:"description"`
	Headers     map[string]*specHeader    `json:"headers"`
	Content     map[string]*specMediaType `json:"content"`
}

type specHeader struct {
	Ref         string          `json:"$ref"`
	Description string          `json:"description"`
	Required    bool            `json:"required"`
	Schema      json.RawMessage `json:"schema"`
}

type specMediaType struct {
	Schema   json.RawMessage         `json:"schema"`
	Example  any                     `json:"example"`
	Examples map[string]*specExample `json:"examples"`
	// EventSchema describes each event of a text/event-stream as the object
	// {"id", "event", "data"}, like OpenAPI 3.2's itemSchema.
	EventSchema json.RawMessage `json:"x-event-schema"`
}

type specExample struct {
	Summary     string `json:"summary"`
	Description string `json:"description"`
	Value       any    `json:"value"`
}

// spec is api/openapi.yaml loaded: typed for walking, raw for following
// $refs, and its component schemas ready to compile.
type spec struct {
	doc      specDoc
	raw      map[string]any
	defs     map[string]any // components.schemas, their $refs pointing into $defs
	compiled sync.Map       // schema text → *jsonschema.Resolved
}

var loadSpec = sync.OnceValues(func() (*spec, error) { return readSpec(specFile) })

func mustSpec(tb testing.TB) *spec {
	tb.Helper()
	s, err := loadSpec()
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

func readSpec(path string) (*spec, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var y any
	if err := yaml.Unmarshal(src, &y); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	j, err := json.Marshal(y)
	if err != nil {
		return nil, fmt.Errorf("%s is not JSON-compatible (quote status codes and other non-string keys): %w", path, err)
	}
	s := &spec{}
	if err := json.Unmarshal(j, &s.raw); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s.doc); err != nil {
		return nil, fmt.Errorf("%s is not an OpenAPI document of the expected shape: %w", path, err)
	}
	s.defs = map[string]any{}
	for name, schema := range s.doc.Components.Schemas {
		s.defs[name] = toDefs(s.decode(schema))
	}
	return s, nil
}

func (s *spec) decode(raw json.RawMessage) any {
	var v any
	_ = json.Unmarshal(raw, &v) // it came from json.Marshal
	return v
}

// compile readies a schema of the document for validation, with the
// component schemas as its $defs.
func (s *spec) compile(schema json.RawMessage) (*jsonschema.Resolved, error) {
	if r, ok := s.compiled.Load(string(schema)); ok {
		return r.(*jsonschema.Resolved), nil
	}
	root, ok := toDefs(s.decode(schema)).(map[string]any)
	if !ok {
		return nil, fmt.Errorf("schema %s is not an object", schema)
	}
	root["$defs"] = s.defs
	b, _ := json.Marshal(root)
	var js jsonschema.Schema
	if err := json.Unmarshal(b, &js); err != nil {
		return nil, err
	}
	r, err := js.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
	if err != nil {
		return nil, err
	}
	s.compiled.Store(string(schema), r)
	return r, nil
}

// validate checks a JSON value against schema, naming schemas in errors
// by their place in the document.
func (s *spec) validate(schema json.RawMessage, v any) error {
	r, err := s.compile(schema)
	if err != nil {
		return err
	}
	if err := r.Validate(v); err != nil {
		return errors.New(strings.ReplaceAll(err.Error(), "/$defs/", "#/components/schemas/"))
	}
	return nil
}

// toDefs copies a schema, pointing #/components/schemas/ references into
// the $defs of the compiled root.
func toDefs(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			if ref, ok := e.(string); ok && k == "$ref" {
				m[k] = strings.Replace(ref, "#/components/schemas/", "#/$defs/", 1)
			} else {
				m[k] = toDefs(e)
			}
		}
		return m
	case []any:
		a := make([]any, len(v))
		for i, e := range v {
			a[i] = toDefs(e)
		}
		return a
	}
	return v
}

// deref follows a $ref into components.<kind>.
func deref[T any](v *T, ref, kind string, in map[string]*T) (*T, error) {
	if ref == "" {
		return v, nil
	}
	name, ok := strings.CutPrefix(ref, "#/components/"+kind+"/")
	if !ok || in[name] == nil {
		return nil, fmt.Errorf("$ref %q names none of components.%s", ref, kind)
	}
	return in[name], nil
}

// pointer returns what a local reference ("#/a/b") points at, or nil.
func pointer(doc any, ref string) any {
	rest, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return nil
	}
	v := doc
	for tok := range strings.SplitSeq(rest, "/") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")]
	}
	return v
}
