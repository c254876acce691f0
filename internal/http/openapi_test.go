package http

// api/openapi.yaml is the API's contract. These tests keep it true: the
// routes it documents are the routes NewServer serves, the document is
// well formed, and mustMatchSpec lets every handler test check a response
// against it. OpenAPI 3.1 schemas are JSON Schema 2020-12, so they are
// validated with github.com/google/jsonschema-go, which the MCP tools use
// already; the YAML is read with go.yaml.in/yaml/v3, already in go.sum.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"log/slog"
	"maps"
	"mime"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/google/jsonschema-go/jsonschema"
	"go.yaml.in/yaml/v3"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/store/storetest"
)

// specFile is the contract, relative to this package's directory.
const specFile = "../../api/openapi.yaml"

// mustMatchSpec fails tb unless the response — its status, headers and
// body — is one api/openapi.yaml allows for method on route, the OpenAPI
// path template (such as "/api/{user_id}/chat"). JSON bodies are validated
// against their schema, event streams event by event.
func mustMatchSpec(tb testing.TB, method, route string, status int, header http.Header, body []byte) {
	tb.Helper()
	if err := specMismatch(method, route, status, header, body); err != nil {
		tb.Fatalf("api/openapi.yaml: %s %s answered %d, which the contract does not allow: %v\nbody: %s",
			method, route, status, err, clip(body, 2000))
	}
}

// specMismatch says how a response breaks the contract, or returns nil.
func specMismatch(method, route string, status int, header http.Header, body []byte) error {
	s, err := loadSpec()
	if err != nil {
		return err
	}
	resp, err := s.response(method, route, status)
	if err != nil {
		return err
	}
	if err := s.checkHeaders(resp, header); err != nil {
		return err
	}
	return s.checkBody(resp, header, body)
}

func TestOpenAPIRoutesMatch(t *testing.T) {
	s := mustSpec(t)
	auth, err := NewAuthenticator(AuthConfig{Secret: bytes.Repeat([]byte("k"), minSecretBytes)})
	if err != nil {
		t.Fatal(err)
	}
	// No route runs here, so the dependencies the handlers would use can be nil.
	routes, ok := NewServer(slog.New(slog.DiscardHandler), auth, nil, nil, nil, ChatConfig{}).(chi.Routes)
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
	t.Run("problem codes are the code's", func(t *testing.T) {
		var documented []string
		enum, _ := s.decode(s.doc.Components.Schemas["ProblemCode"]).(map[string]any)["enum"].([]any)
		for _, c := range enum {
			documented = append(documented, fmt.Sprint(c))
		}
		slices.Sort(documented)
		if served := problemCodes(t); !slices.Equal(documented, served) {
			t.Errorf("ProblemCode enum = %v, but the package's code constants are %v", documented, served)
		}
	})
}

// TestSpecCatchesWrongResponses shows that mustMatchSpec lets good answers
// through and catches each kind of mistake.
func TestSpecCatchesWrongResponses(t *testing.T) {
	const (
		chat     = "/api/{user_id}/chat"
		toolCall = `{"id":"c1","tool":"add_task","arguments":{"title":"x"},"result":{"task_id":1,"status":"created","title":"x"},"is_error":false}`
		turn     = `{"conversation_id":1,"response":"Done.","tool_calls":[` + toolCall + `]}`
		problem  = `{"type":"https://taskchat.dev/problems/invalid-request","title":"Bad Request","status":400,"code":"invalid_request","detail":"message is required","errors":[{"field":"message","message":"is required"}]}`
	)
	event := func(id int, name, data string) string {
		return fmt.Sprintf("id: %d\nevent: %s\ndata: %s\n\n", id, name, data)
	}
	stream := event(1, "start", `{"conversation_id":1}`) + ": ping\n\n" +
		event(2, "tool_call", `{"id":"c1","tool":"add_task","arguments":{"title":"x"}}`) +
		event(3, "tool_result", `{"id":"c1","tool":"add_task","result":{"task_id":1},"is_error":false}`) +
		event(4, "delta", `{"text":"Done."}`) + event(5, "done", turn)
	headers := func(kv ...string) http.Header {
		h := http.Header{"X-Request-Id": {"abc123"}}
		for i := 0; i < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	asJSON := headers("Content-Type", "application/json", "Cache-Control", "no-store")
	asProblem := headers("Content-Type", "application/problem+json", "Cache-Control", "no-store")
	asStream := headers("Content-Type", "text/event-stream", "Cache-Control", "no-cache", "X-Accel-Buffering", "no")
	cases := []struct {
		name, method, route string
		status              int
		header              http.Header
		body                string
		wantErr             string // "" when the response is right
	}{
		{"a JSON turn", "POST", chat, 200, asJSON, turn, ""},
		{"a turn whose arguments were not JSON", "POST", chat, 200, asJSON,
			`{"conversation_id":1,"response":"","tool_calls":[{"id":"c","tool":"add_task","arguments":"{\"title\":","result":{"error":"bad"},"is_error":true}]}`, ""},
		{"a replayed turn", "POST", chat, 200, headers("Content-Type", "application/json", "Cache-Control", "no-store", "Idempotent-Replayed", "true"), turn, ""},
		{"a streamed turn", "POST", chat, 200, asStream, stream, ""},
		{"a streamed turn that failed", "POST", chat, 200, asStream,
			event(1, "start", `{"conversation_id":1}`) + event(2, "error", `{"code":"llm_unavailable","message":"Try again."}`), ""},
		{"a problem", "POST", chat, 400, asProblem, problem, ""},
		{"a deletion", "DELETE", "/api/{user_id}/conversations/{conversation_id}", 204, headers(), "", ""},

		{"a turn without response", "POST", chat, 200, asJSON, `{"conversation_id":1,"tool_calls":[]}`, `missing properties: ["response"]`},
		{"a turn with a string id", "POST", chat, 200, asJSON, `{"conversation_id":"1","response":"","tool_calls":[]}`, `want "integer"`},
		{"a tool call without is_error", "POST", chat, 200, asJSON, strings.Replace(turn, `,"is_error":false`, "", 1), `missing properties: ["is_error"]`},
		{"an undocumented member", "POST", chat, 200, asJSON, strings.Replace(turn, `{"conversation_id":1,`, `{"conversation_id":1,"user_id":"u",`, 1), `unexpected additional properties ["user_id"]`},
		{"a body that is not JSON", "GET", "/healthz", 200, asJSON, `ok`, "not JSON"},
		{"a problem without code", "POST", chat, 400, asProblem, strings.Replace(problem, `"code":"invalid_request",`, "", 1), `missing properties: ["code"]`},
		{"a problem with another status's code", "POST", chat, 400, asProblem, strings.Replace(problem, `"invalid_request"`, `"not_found"`, 1), `const`},
		{"a problem with an unknown code", "POST", chat, 400, asProblem, strings.Replace(problem, `"invalid_request"`, `"oops"`, 1), `enum`},
		{"an undocumented status", "GET", "/healthz", 418, asProblem, problem, "status 418 is not documented"},
		{"an undocumented route", "GET", "/api/{user_id}/nope", 200, asJSON, `{}`, "not documented"},
		{"an undocumented method", "PUT", "/healthz", 200, asJSON, `{"status":"ok"}`, "PUT is not documented"},
		{"an undocumented Content-Type", "POST", chat, 200, headers("Content-Type", "text/plain", "Cache-Control", "no-store"), "Done.", `"text/plain" is not one of`},
		{"a problem sent as plain JSON", "POST", chat, 400, asJSON, problem, `"application/json" is not one of`},
		{"a 401 without WWW-Authenticate", "GET", "/api/{user_id}/tasks", 401, asProblem,
			`{"type":"https://taskchat.dev/problems/unauthorized","title":"Unauthorized","status":401,"code":"unauthorized","detail":"No token."}`, "WWW-Authenticate is required"},
		{"a 429 without Retry-After", "POST", chat, 429, asProblem,
			`{"type":"https://taskchat.dev/problems/rate-limited","title":"Too Many Requests","status":429,"code":"rate_limited","detail":"Slow down."}`, "Retry-After is required"},
		{"a response without X-Request-Id", "DELETE", "/api/{user_id}/conversations/{conversation_id}", 204, http.Header{}, "", "X-Request-Id is required"},
		{"a JSON answer that may be cached", "GET", "/healthz", 200, headers("Content-Type", "application/json"), `{"status":"ok"}`, "Cache-Control is required"},
		{"a body on 204", "DELETE", "/api/{user_id}/conversations/{conversation_id}", 204, headers(), `{}`, "documents no body"},
		{"a stream that proxies may buffer", "POST", chat, 200, headers("Content-Type", "text/event-stream", "Cache-Control", "no-cache"), stream, "X-Accel-Buffering"},
		{"a stream event whose data is not JSON", "POST", chat, 200, asStream, event(1, "start", `{"conversation_id":1}`) + event(2, "delta", `hello`) + event(3, "done", turn), "data is not JSON"},
		{"a stream event without id", "POST", chat, 200, asStream, "event: start\ndata: {\"conversation_id\":1}\n\n" + event(2, "done", turn), "no id"},
		{"a stream event out of order", "POST", chat, 200, asStream, event(1, "start", `{"conversation_id":1}`) + event(3, "done", turn), `id "3", want 2`},
		{"a delta without text", "POST", chat, 200, asStream, event(1, "start", `{"conversation_id":1}`) + event(2, "delta", `{}`) + event(3, "done", turn), `missing properties: ["text"]`},
		{"an unknown event", "POST", chat, 200, asStream, event(1, "start", `{"conversation_id":1}`) + event(2, "progress", `{}`) + event(3, "done", turn), `"progress" is not a documented event`},
		{"a stream that does not begin with start", "POST", chat, 200, asStream, event(1, "delta", `{"text":"x"}`) + event(2, "done", turn), "begins with delta"},
		{"a stream without done", "POST", chat, 200, asStream, event(1, "start", `{"conversation_id":1}`) + event(2, "delta", `{"text":"x"}`), "does not end with done or error"},
		{"a stream that goes on after done", "POST", chat, 200, asStream, stream + event(6, "delta", `{"text":"x"}`), "after the final done"},
		{"a stream cut mid-event", "POST", chat, 200, asStream, strings.TrimSuffix(stream, "\n"), "blank line"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := specMismatch(c.method, c.route, c.status, c.header, []byte(c.body))
			switch {
			case c.wantErr == "" && err != nil:
				t.Fatalf("a right response was refused: %v", err)
			case c.wantErr != "" && err == nil:
				t.Fatalf("a wrong response passed; want an error about %q", c.wantErr)
			case c.wantErr != "" && !strings.Contains(err.Error(), c.wantErr):
				t.Fatalf("error = %v\nwant it to mention %q", err, c.wantErr)
			}
		})
	}
}

// TestSpecMatchesTheServer checks the answers the handler tests do not
// check against the contract: streams, replays, auth and query errors,
// rate limits, and an unready database.
func TestSpecMatchesTheServer(t *testing.T) {
	const chat, tasksRoute = "/api/{user_id}/chat", "/api/{user_id}/tasks"
	stream := http.Header{"Accept": {"text/event-stream"}}
	s := mustServer(t, agent.NewOffline())
	user := storetest.UserID(t)
	tok := mustToken(t, user)
	check := func(t *testing.T, route string, c call, status int) reply {
		t.Helper()
		r := s.do(t, c)
		if r.status != status {
			t.Fatalf("%s %s = %d %s, want %d", c.method, c.path, r.status, r.body, status)
		}
		mustMatchSpec(t, c.method, route, r.status, r.header, r.body)
		return r
	}
	send := func(msg string, h http.Header) call {
		return call{method: "POST", path: "/api/" + user + "/chat", token: tok, body: chatBody(0, msg), header: h}
	}

	t.Run("a streamed turn and its replay", func(t *testing.T) {
		keyed := http.Header{"Accept": {"text/event-stream"}, "Idempotency-Key": {"spec-1"}}
		check(t, chat, send("Add a task to buy milk", keyed), 200)
		if r := check(t, chat, send("Add a task to buy milk", keyed), 200); r.header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("the replay is not marked: %v", r.header)
		}
		check(t, chat, send("Show me all my tasks", stream), 200)
	})
	t.Run("idempotency key reused", func(t *testing.T) {
		check(t, chat, send("Add a task to walk", http.Header{"Idempotency-Key": {"spec-2"}}), 200)
		check(t, chat, send("Add a task to run", http.Header{"Idempotency-Key": {"spec-2"}}), 422)
		check(t, chat, send("Add a task to run", http.Header{"Idempotency-Key": {"bad\tkey"}}), 400)
	})
	t.Run("auth", func(t *testing.T) {
		check(t, tasksRoute, call{method: "GET", path: "/api/" + user + "/tasks"}, 401)
		check(t, tasksRoute, call{method: "GET", path: "/api/" + user + "/tasks", token: "not.a.token"}, 401)
		check(t, tasksRoute, call{method: "GET", path: "/api/someone-else/tasks", token: tok}, 403)
	})
	t.Run("query errors", func(t *testing.T) {
		convs := "/api/{user_id}/conversations"
		check(t, convs, call{method: "GET", path: "/api/" + user + "/conversations?limit=0", token: tok}, 400)
		check(t, convs, call{method: "GET", path: "/api/" + user + "/conversations?cursor=nope", token: tok}, 400)
		check(t, convs, call{method: "GET", path: "/api/" + user + "/conversations?limit=1", token: tok}, 200)
		check(t, tasksRoute, call{method: "GET", path: "/api/" + user + "/tasks?status=done", token: tok}, 400)
		check(t, "/api/{user_id}/conversations/{conversation_id}/messages",
			call{method: "GET", path: "/api/" + user + "/conversations/abc/messages", token: tok}, 404)
	})
	t.Run("a model failure mid-stream", func(t *testing.T) {
		broken := mustServer(t, specFailingModel{})
		r := broken.do(t, send("Add a task to fail", stream))
		mustMatchSpec(t, "POST", chat, r.status, r.header, r.body)
		if r.status != 200 || !bytes.Contains(r.body, []byte("event: error")) {
			t.Fatalf("got %d, want a stream ending in an error event:\n%s", r.status, r.body)
		}
		if r := broken.do(t, send("Add a task to fail", nil)); r.status != 502 {
			t.Fatalf("JSON turn = %d %s, want 502", r.status, r.body)
		} else {
			mustMatchSpec(t, "POST", chat, r.status, r.header, r.body)
		}
	})
	t.Run("rate limited", func(t *testing.T) {
		limited := mustServer(t, agent.NewOffline(), func(c *ChatConfig) { c.TurnsPerMinute, c.TurnBurst = 1, 1 })
		for _, want := range []int{200, 429} {
			if r := limited.do(t, send("Show me all my tasks", nil)); r.status != want {
				t.Fatalf("status %d, want %d: %s", r.status, want, r.body)
			} else {
				mustMatchSpec(t, "POST", chat, r.status, r.header, r.body)
			}
		}
	})
	t.Run("database down", func(t *testing.T) {
		auth, _ := NewAuthenticator(AuthConfig{Secret: bytes.Repeat([]byte("k"), minSecretBytes)})
		h := NewServer(slog.New(slog.DiscardHandler), auth, specDeadDB{}, nil, nil, ChatConfig{})
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/readyz", nil))
		mustMatchSpec(t, "GET", "/readyz", w.Code, w.Header(), w.Body.Bytes())
		if w.Code != 503 {
			t.Fatalf("readyz = %d", w.Code)
		}
	})
}

// specFailingModel fails every call, as an unreachable model does.
type specFailingModel struct{}

func (specFailingModel) Name() string { return "failing" }
func (specFailingModel) Stream(context.Context, agent.Request, func(string)) (agent.Response, error) {
	return agent.Response{}, &agent.ModelError{Kind: agent.ErrModelServer, Err: errors.New("connection refused")}
}

// specDeadDB is a database that does not answer.
type specDeadDB struct{}

func (specDeadDB) Ping(context.Context) error { return errors.New("connection refused") }

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
	Servers  []struct{ URL, Description string }  `json:"servers"`
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

func (s *spec) response(method, route string, status int) (*specResponse, error) {
	item := s.doc.Paths[route]
	if item == nil {
		return nil, fmt.Errorf("the route %s is not documented", route)
	}
	op := item.operations()[method]
	if op == nil {
		return nil, fmt.Errorf("%s is not documented for %s", method, route)
	}
	r := op.Responses[strconv.Itoa(status)]
	if r == nil {
		r = op.Responses["default"]
	}
	if r == nil {
		return nil, fmt.Errorf("status %d is not documented (documented: %s)", status, strings.Join(slices.Sorted(maps.Keys(op.Responses)), ", "))
	}
	return deref(r, r.Ref, "responses", s.doc.Components.Responses)
}

// checkHeaders checks that every required header is there and that every
// documented header present matches its schema.
func (s *spec) checkHeaders(resp *specResponse, header http.Header) error {
	for _, name := range slices.Sorted(maps.Keys(resp.Headers)) {
		h, err := deref(resp.Headers[name], resp.Headers[name].Ref, "headers", s.doc.Components.Headers)
		if err != nil {
			return err
		}
		values := header.Values(name)
		if len(values) == 0 && h.Required {
			return fmt.Errorf("header %s is required but missing", name)
		}
		for _, v := range values {
			var inst any = v
			if t, _ := s.decode(h.Schema).(map[string]any)["type"].(string); t == "integer" {
				if n, err := strconv.ParseInt(v, 10, 64); err == nil {
					inst = n
				}
			}
			if err := s.validate(h.Schema, inst); err != nil {
				return fmt.Errorf("header %s: %w", name, err)
			}
		}
	}
	return nil
}

func (s *spec) checkBody(resp *specResponse, header http.Header, body []byte) error {
	if len(resp.Content) == 0 {
		if len(body) != 0 {
			return fmt.Errorf("the response documents no body, but it has %d bytes", len(body))
		}
		return nil
	}
	ct := header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	media := resp.Content[mt]
	if err != nil || media == nil {
		return fmt.Errorf("Content-Type %q is not one of the documented %s", ct, strings.Join(slices.Sorted(maps.Keys(resp.Content)), ", "))
	}
	switch {
	case mt == "text/event-stream":
		if cc, xab := header.Get("Cache-Control"), header.Get("X-Accel-Buffering"); cc != "no-cache" || xab != "no" {
			return fmt.Errorf("a stream needs Cache-Control: no-cache and X-Accel-Buffering: no, got %q and %q", cc, xab)
		}
		return s.checkEvents(media, body)
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		v, err := decodeOne(body)
		if err != nil {
			return err
		}
		if err := s.validate(media.Schema, v); err != nil {
			return fmt.Errorf("the %s body does not match its schema: %w", mt, err)
		}
	}
	return nil
}

func decodeOne(body []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("the body is not JSON: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("the body holds more than one JSON value")
	}
	return v, nil
}

// streamEvent is one Server-Sent Event, shaped as x-event-schema describes it.
type streamEvent struct {
	ID    string `json:"id"`
	Event string `json:"event"`
	Data  any    `json:"data"`
}

// checkEvents checks a chat stream: well-formed events with ids from 1,
// start first, exactly one done or error last, and each event matching
// its schema — the one the discriminator maps its name to.
func (s *spec) checkEvents(media *specMediaType, body []byte) error {
	events, err := parseEvents(body)
	if err != nil {
		return err
	}
	if len(events) == 0 {
		return errors.New("the stream holds no event")
	}
	if events[0].Event != "start" {
		return fmt.Errorf("the stream begins with %s, not with start", events[0].Event)
	}
	for i, e := range events {
		if e.ID != strconv.Itoa(i+1) {
			return fmt.Errorf("event %d (%s) has id %q, want %d", i+1, e.Event, e.ID, i+1)
		}
		if final := e.Event == "done" || e.Event == "error"; final && i < len(events)-1 {
			return fmt.Errorf("the stream goes on after the final %s event: %s", e.Event, streamEventNames(events))
		}
		if media.EventSchema == nil {
			continue
		}
		schema, err := s.eventSchema(media.EventSchema, e.Event)
		if err != nil {
			return fmt.Errorf("event %d: %w", i+1, err)
		}
		b, _ := json.Marshal(e)
		if err := s.validate(schema, s.decode(b)); err != nil {
			return fmt.Errorf("event %d (%s) does not match its schema: %w", i+1, e.Event, err)
		}
	}
	if last := events[len(events)-1].Event; last != "done" && last != "error" {
		return fmt.Errorf("the stream does not end with done or error: %s", streamEventNames(events))
	}
	return nil
}

// eventSchema picks the schema of one event by the discriminator of the
// event schema, when it has one, for a clearer error than oneOf gives.
func (s *spec) eventSchema(schema json.RawMessage, event string) (json.RawMessage, error) {
	root, _ := s.decode(schema).(map[string]any)
	if ref, ok := root["$ref"].(string); ok {
		root, _ = pointer(s.raw, ref).(map[string]any)
	}
	disc, ok := root["discriminator"].(map[string]any)
	if !ok {
		return schema, nil
	}
	mapping, _ := disc["mapping"].(map[string]any)
	ref, ok := mapping[event].(string)
	if !ok {
		return nil, fmt.Errorf("%q is not a documented event (documented: %s)", event, strings.Join(slices.Sorted(maps.Keys(mapping)), ", "))
	}
	return json.Marshal(map[string]string{"$ref": ref})
}

// parseEvents reads a whole event stream as the contract writes it: each
// event an id, an event and a one-line JSON data field, events and
// comments ended by a blank line.
func parseEvents(body []byte) ([]streamEvent, error) {
	text := string(body)
	if !strings.HasSuffix(text, "\n\n") {
		return nil, errors.New("the stream does not end with a blank line: its last event is cut off")
	}
	var events []streamEvent
	for block := range strings.SplitSeq(strings.TrimSuffix(text, "\n\n"), "\n\n") {
		fields := map[string]string{}
		for line := range strings.SplitSeq(block, "\n") {
			if line == "" || strings.HasPrefix(line, ":") {
				continue // a comment, such as ": ping"
			}
			name, value, _ := strings.Cut(line, ":")
			if _, dup := fields[name]; dup || (name != "id" && name != "event" && name != "data") {
				return nil, fmt.Errorf("unexpected line %q in event %d", line, len(events)+1)
			}
			fields[name] = strings.TrimPrefix(value, " ")
		}
		if len(fields) == 0 {
			continue
		}
		e := streamEvent{ID: fields["id"], Event: fields["event"]}
		if _, ok := fields["id"]; !ok || e.Event == "" {
			return nil, fmt.Errorf("event %d has no id or no event name: %q", len(events)+1, block)
		}
		if err := json.Unmarshal([]byte(fields["data"]), &e.Data); err != nil {
			return nil, fmt.Errorf("event %d (%s): its data is not JSON: %q", len(events)+1, e.Event, fields["data"])
		}
		events = append(events, e)
	}
	return events, nil
}

func streamEventNames(events []streamEvent) string {
	names := make([]string, len(events))
	for i, e := range events {
		names[i] = e.Event
	}
	return "[" + strings.Join(names, " ") + "]"
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
	if api := strings.HasPrefix(path, "/api/"); api != guarded {
		t.Errorf("%s: guarded by bearerAuth = %v, want %v", where, guarded, api)
	}
	if guarded && (op.Responses["401"] == nil || op.Responses["403"] == nil) {
		t.Errorf("%s: a guarded operation must document 401 and 403", where)
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
			if ex, ok := m.Example.(string); !ok {
				t.Errorf("%s: want an example stream", where)
			} else if err := s.checkEvents(m, []byte(ex)); err != nil {
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

// problemCodes returns the values of the package's code constants, the
// codes a problem body can carry.
func problemCodes(tb testing.TB) []string {
	tb.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		tb.Fatal(err)
	}
	var codes []string
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			tb.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			for i, id := range vs.Names {
				if lit, ok := valueAt(vs, i).(*ast.BasicLit); ok && lit.Kind == token.STRING && strings.HasPrefix(id.Name, "code") {
					v, _ := strconv.Unquote(lit.Value)
					codes = append(codes, v)
				}
			}
			return true
		})
	}
	slices.Sort(codes)
	return codes
}

func valueAt(vs *ast.ValueSpec, i int) ast.Expr {
	if i < len(vs.Values) {
		return vs.Values[i]
	}
	return nil
}

func clip(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "…"
}
