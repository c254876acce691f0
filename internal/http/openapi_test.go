package http

// api/openapi.yaml is the API's contract. These tests keep it true: the
// routes it documents are the routes NewServer serves, the document is
// well formed, and mustMatchSpec (spec_test.go) lets every handler test
// check a response against it.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/taskchat/taskchat/internal/auth"
	"github.com/taskchat/taskchat/internal/chat"
	"github.com/taskchat/taskchat/internal/store/storetest"
)

// idleEngine is the engine of a server whose routes run no turn: a zero
// one, since addRoutes asks the engine for its approvals store when it
// lists the routes (a nil engine panics there).
var idleEngine = new(chat.Engine)

func TestOpenAPIRoutesMatch(t *testing.T) {
	t.Parallel()
	s := mustSpec(t)
	verifier, err := auth.NewVerifier(auth.Config{Secret: bytes.Repeat([]byte("k"), auth.MinSecretBytes)})
	if err != nil {
		t.Fatal(err)
	}
	// No route runs here, so the dependencies the handlers would use can be
	// nil, or idle. The development login is on, so that its route is
	// served too.
	cfg := withLimits(testAPIConfig, storetest.Pool(t))
	cfg.DevLogin = DevLogin{Enabled: true, TTL: time.Hour}
	routes, ok := NewServer(slog.New(slog.DiscardHandler), verifier, nil, nil, nil, idleEngine, nil, nil, cfg).(chi.Routes)
	if !ok {
		t.Fatal("NewServer no longer returns a chi router; list its routes another way")
	}
	served := map[string]bool{}
	err = chi.Walk(routes, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		served[method+" "+route] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for path, item := range s.doc.Paths {
		for method := range item.operations() {
			documented[method+" "+path] = true
		}
	}
	for _, r := range slices.Sorted(maps.Keys(served)) {
		if !documented[r] {
			t.Errorf("%s is served but not documented in api/openapi.yaml", r)
		}
	}
	for _, r := range slices.Sorted(maps.Keys(documented)) {
		if !served[r] {
			t.Errorf("%s is documented in api/openapi.yaml but not served", r)
		}
	}
}

func TestOpenAPIDocumentIsValid(t *testing.T) {
	t.Parallel()
	s := mustSpec(t) // decoding it rejects unknown members: a misspelt keyword fails here

	t.Run("version and info", func(t *testing.T) {
		if !strings.HasPrefix(s.doc.OpenAPI, "3.1.") || s.doc.Info.Title == "" || s.doc.Info.Version == "" {
			t.Errorf("openapi %q, info.title %q, info.version %q: want 3.1.x and both set", s.doc.OpenAPI, s.doc.Info.Title, s.doc.Info.Version)
		}
	})
	t.Run("every $ref resolves", func(t *testing.T) {
		walkJSON(s.raw, "#", func(where string, v map[string]any) {
			if ref, ok := v["$ref"].(string); ok && pointer(s.raw, ref) == nil {
				t.Errorf("%s: $ref %q points at nothing", where, ref)
			}
		})
	})
	t.Run("every schema compiles", func(t *testing.T) {
		for where, m := range s.mediaTypes() {
			if m.Schema == nil {
				t.Errorf("%s has no schema", where)
			}
		}
		for where, schema := range s.schemas() {
			if _, err := s.compile(schema); err != nil {
				t.Errorf("%s: %v", where, err)
			}
			walkSchema(s.decode(schema), where, func(where string, sch map[string]any) {
				for k := range sch {
					if !schemaKeywords[k] && !strings.HasPrefix(k, "x-") {
						t.Errorf("%s: %q is not a JSON Schema 2020-12 or OpenAPI keyword", where, k)
					}
				}
			})
		}
	})
	t.Run("operations", func(t *testing.T) { checkOperations(t, s) })
	t.Run("examples match their schemas", func(t *testing.T) { checkExamples(t, s) })
	t.Run("problem codes are the table's", func(t *testing.T) { checkProblemCodes(t, s) })
}

// checkOperations checks what a reader and a client generator rely on:
// path parameters declared, operation ids unique, responses described,
// and the /api routes guarded by the bearer token.
func checkOperations(t *testing.T, s *spec) {
	ids := map[string]string{}
	for path, item := range s.doc.Paths {
		inPath := map[string]bool{}
		for _, m := range regexp.MustCompile(`\{([^}]+)\}`).FindAllStringSubmatch(path, -1) {
			inPath[m[1]] = true
		}
		for method, op := range item.operations() {
			where := method + " " + path
			if prev, dup := ids[op.OperationID]; dup || op.OperationID == "" {
				t.Errorf("%s: operationId %q is empty or also used by %s", where, op.OperationID, prev)
			}
			ids[op.OperationID] = where
			declared := map[string]bool{}
			for _, p := range append(slices.Clone(item.Parameters), op.Parameters...) {
				if p, err := deref(p, p.Ref, "parameters", s.doc.Components.Parameters); err == nil && p.In == "path" {
					declared[p.Name] = p.Required
				}
			}
			if !maps.Equal(declared, inPath) {
				t.Errorf("%s: path parameters declared (and required) %v, want %v", where, declared, inPath)
			}
			checkResponses(t, s, where, op)
			checkSecurity(t, s, where, path, op)
		}
	}
}

func checkResponses(t *testing.T, s *spec, where string, op *specOperation) {
	if len(op.Responses) == 0 {
		t.Errorf("%s documents no responses", where)
	}
	for code, r := range op.Responses {
		r, err := deref(r, r.Ref, "responses", s.doc.Components.Responses)
		switch {
		case !regexp.MustCompile(`^([1-5][0-9][0-9]|[1-5]XX|default)$`).MatchString(code):
			t.Errorf("%s: %q is not a status code", where, code)
		case err != nil:
			t.Errorf("%s %s: %v", where, code, err)
		case r.Description == "":
			t.Errorf("%s %s has no description", where, code)
		case r.Headers["X-Request-Id"] == nil:
			t.Errorf("%s %s does not document X-Request-Id, which every response carries", where, code)
		}
	}
}

func checkSecurity(t *testing.T, s *spec, where, path string, op *specOperation) {
	security := s.doc.Security
	if op.Security != nil {
		security = *op.Security
	}
	for _, req := range security {
		for name := range req {
			if _, ok := s.doc.Components.SecuritySchemes[name]; !ok {
				t.Errorf("%s: security scheme %q is not defined", where, name)
			}
		}
	}
	guarded := false
	if len(security) == 1 {
		_, guarded = security[0]["bearerAuth"]
	}
	api := strings.HasPrefix(path, "/api/")
	if want := api || path == "/mcp"; want != guarded {
		t.Errorf("%s: guarded by bearerAuth = %v, want %v", where, guarded, want)
	}
	if guarded && (op.Responses["401"] == nil || api && op.Responses["403"] == nil) {
		t.Errorf("%s: a guarded operation must document 401, and one with a {user_id} 403", where)
	}
}

// checkExamples validates every example against its schema; a stream's
// example is checked as a stream.
func checkExamples(t *testing.T, s *spec) {
	check := func(where string, schema json.RawMessage, v any) {
		if err := s.validate(schema, v); err != nil {
			t.Errorf("%s: the example does not match the schema: %v", where, err)
		}
	}
	for where, p := range s.parameters() {
		if p.Example != nil {
			check(where, p.Schema, p.Example)
		}
	}
	for where, m := range s.mediaTypes() {
		if strings.HasSuffix(where, "text/event-stream") {
			ex, ok := m.Example.(string)
			check := s.checkEvents
			if strings.HasPrefix(ex, "data: ") { // an AI SDK UI message stream
				check = s.checkUIChunks
			}
			if !ok {
				t.Errorf("%s: want an example stream", where)
			} else if err := check(m, []byte(ex)); err != nil {
				t.Errorf("%s: the example stream: %v", where, err)
			}
			continue
		}
		if m.Example != nil {
			check(where, m.Schema, m.Example)
		}
		for name, ex := range m.Examples {
			check(where+" example "+name, m.Schema, ex.Value)
		}
	}
}

// parameters returns every parameter defined in place, by where it is.
func (s *spec) parameters() map[string]*specParameter {
	all := map[string]*specParameter{}
	for name, p := range s.doc.Components.Parameters {
		all["components.parameters."+name] = p
	}
	for path, item := range s.doc.Paths {
		for _, p := range item.Parameters {
			all[path+" parameter "+p.Name] = p
		}
		for method, op := range item.operations() {
			for _, p := range op.Parameters {
				all[method+" "+path+" parameter "+p.Name] = p
			}
		}
	}
	maps.DeleteFunc(all, func(_ string, p *specParameter) bool { return p.Ref != "" })
	return all
}

// responses returns every response defined in place, by where it is.
func (s *spec) responses() map[string]*specResponse {
	all := map[string]*specResponse{}
	for name, r := range s.doc.Components.Responses {
		all["components.responses."+name] = r
	}
	for path, item := range s.doc.Paths {
		for method, op := range item.operations() {
			for code, r := range op.Responses {
				all[method+" "+path+" "+code] = r
			}
		}
	}
	maps.DeleteFunc(all, func(_ string, r *specResponse) bool { return r.Ref != "" })
	return all
}

// mediaTypes returns every media type of a request or response, by where
// it is; the key ends with the media type's name.
func (s *spec) mediaTypes() map[string]*specMediaType {
	all := map[string]*specMediaType{}
	for where, r := range s.responses() {
		for mt, m := range r.Content {
			all[where+" "+mt] = m
		}
	}
	for path, item := range s.doc.Paths {
		for method, op := range item.operations() {
			if op.RequestBody != nil {
				for mt, m := range op.RequestBody.Content {
					all[method+" "+path+" request "+mt] = m
				}
			}
		}
	}
	return all
}

// schemas returns every schema of the document, by where it is.
func (s *spec) schemas() map[string]json.RawMessage {
	all := map[string]json.RawMessage{}
	add := func(where string, schema json.RawMessage) {
		if schema != nil {
			all[where] = schema
		}
	}
	for name, schema := range s.doc.Components.Schemas {
		add("components.schemas."+name, schema)
	}
	for where, p := range s.parameters() {
		add(where, p.Schema)
	}
	for name, h := range s.doc.Components.Headers {
		add("components.headers."+name, h.Schema)
	}
	for where, r := range s.responses() {
		for name, h := range r.Headers {
			add(where+" header "+name, h.Schema)
		}
	}
	for where, m := range s.mediaTypes() {
		add(where, m.Schema)
		add(where+" x-event-schema", m.EventSchema)
	}
	return all
}

// schemaKeywords are the keywords a schema of the document may use: JSON
// Schema 2020-12's and the few OpenAPI 3.1 adds.
var schemaKeywords = func() map[string]bool {
	m := map[string]bool{}
	for k := range strings.FieldsSeq(`$schema $id $ref $anchor $dynamicRef $dynamicAnchor $vocabulary $comment $defs
		allOf anyOf oneOf not if then else dependentSchemas prefixItems items contains properties patternProperties
		additionalProperties propertyNames unevaluatedItems unevaluatedProperties type enum const multipleOf maximum
		exclusiveMaximum minimum exclusiveMinimum maxLength minLength pattern maxItems minItems uniqueItems maxContains
		minContains maxProperties minProperties required dependentRequired format contentEncoding contentMediaType
		contentSchema title description default deprecated readOnly writeOnly examples
		discriminator xml externalDocs example`) {
		m[k] = true
	}
	return m
}()

// walkSchema calls f with a schema and each of its subschemas.
func walkSchema(v any, where string, f func(where string, schema map[string]any)) {
	sch, ok := v.(map[string]any)
	if !ok {
		return
	}
	f(where, sch)
	for k, sub := range sch {
		switch k {
		case "not", "if", "then", "else", "items", "contains", "additionalProperties", "propertyNames",
			"unevaluatedItems", "unevaluatedProperties", "contentSchema":
			walkSchema(sub, where+"/"+k, f)
		case "allOf", "anyOf", "oneOf", "prefixItems":
			subs, _ := sub.([]any)
			for i, e := range subs {
				walkSchema(e, fmt.Sprintf("%s/%s/%d", where, k, i), f)
			}
		case "properties", "patternProperties", "$defs", "dependentSchemas":
			subs, _ := sub.(map[string]any)
			for name, e := range subs {
				walkSchema(e, where+"/"+k+"/"+name, f)
			}
		}
	}
}

// walkJSON calls f with every object of a JSON value.
func walkJSON(v any, where string, f func(where string, obj map[string]any)) {
	switch v := v.(type) {
	case map[string]any:
		f(where, v)
		for k, e := range v {
			walkJSON(e, where+"/"+k, f)
		}
	case []any:
		for i, e := range v {
			walkJSON(e, fmt.Sprintf("%s/%d", where, i), f)
		}
	}
}

// checkProblemCodes checks codeStatus, the table every problem's status
// comes from, against the document: the ProblemCode enum lists exactly
// the table's codes, and the table in the API description gives each
// code the status the server answers with.
func checkProblemCodes(t *testing.T, s *spec) {
	var documented []string
	enum, _ := s.decode(s.doc.Components.Schemas["ProblemCode"]).(map[string]any)["enum"].([]any)
	for _, c := range enum {
		documented = append(documented, fmt.Sprint(c))
	}
	slices.Sort(documented)
	if served := slices.Sorted(maps.Keys(codeStatus)); !slices.Equal(documented, served) {
		t.Errorf("ProblemCode enum = %v, but codeStatus holds %v", documented, served)
	}
	described := map[string]int{}
	for _, m := range regexp.MustCompile("(?m)^\\| ([1-5][0-9][0-9]) \\| `([a-z_]+)` \\|").FindAllStringSubmatch(s.doc.Info.Description, -1) {
		described[m[2]], _ = strconv.Atoi(m[1])
	}
	if !maps.Equal(described, codeStatus) {
		t.Errorf("the API description's table pairs codes with %v, but codeStatus pairs them with %v", described, codeStatus)
	}
}
