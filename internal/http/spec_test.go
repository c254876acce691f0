package http

// This file holds mustMatchSpec, the check every handler test makes of its
// responses, and the status, header, body and event-stream checks it is
// made of.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/taskchat/taskchat/internal/http/turnstream"
)

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
		if header.Get("X-Vercel-Ai-Ui-Message-Stream") != "" {
			return s.checkUIChunks(media, body)
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

// checkEvents checks a chat stream: well-formed events whose ids are
// <run>-<n>, of one run, n following on from one event to the next; start
// first, unless the stream resumes after an event (its first n is above 1);
// exactly one done or error last; and each event matching its schema — the
// one the discriminator maps its name to.
func (s *spec) checkEvents(media *specMediaType, body []byte) error {
	events, err := parseEvents(body)
	if err != nil {
		return err
	}
	if len(events) == 0 {
		return errors.New("the stream holds no event")
	}
	first, ok := turnstream.ParseEventID(events[0].ID)
	if !ok {
		return fmt.Errorf("event 1 (%s) has id %q, which is not <run>-<n>", events[0].Event, events[0].ID)
	}
	if events[0].Event != "start" && first.Seq <= 1 {
		return fmt.Errorf("the stream begins with %s, not with start", events[0].Event)
	}
	if events[0].Event == "start" && first.Seq != 1 {
		return fmt.Errorf("the start event has id %q: n counts from 1", events[0].ID)
	}
	for i, e := range events {
		if want := (turnstream.EventID{Run: first.Run, Seq: first.Seq + i}); e.ID != want.String() {
			return fmt.Errorf("event %d (%s) has id %q, want %s", i+1, e.Event, e.ID, want)
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

func clip(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "…"
}
