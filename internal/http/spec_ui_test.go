package http

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/taskchat/taskchat/internal/http/turnstream"
)

// checkUIChunks checks an AI SDK UI message stream: one data line per
// event, a JSON chunk each but the last, which is [DONE]; the last chunk of
// each of the turn's events after an id line, <run>-<n>, of one run, n
// following on; start first, unless the stream resumes after an event (its
// first n is above 1); exactly one finish or error, right before [DONE];
// and each chunk matching the schema its type maps to.
func (s *spec) checkUIChunks(media *specMediaType, body []byte) error {
	text := string(body)
	if !strings.HasSuffix(text, "data: [DONE]\n\n") {
		return errors.New("the stream does not end with data: [DONE]")
	}
	var types []string
	var first, last *turnstream.EventID
	for block := range strings.SplitSeq(strings.TrimSuffix(text, "data: [DONE]\n\n"), "\n\n") {
		if block == "" || strings.HasPrefix(block, ":") {
			continue // a comment, such as ": ping"
		}
		if line, rest, found := strings.Cut(block, "\n"); found && strings.HasPrefix(line, "id: ") {
			id, ok := turnstream.ParseEventID(strings.TrimPrefix(line, "id: "))
			switch {
			case !ok:
				return fmt.Errorf("event %d has an id that is not <run>-<n>: %q", len(types)+1, block)
			case last != nil && id != last.Next():
				return fmt.Errorf("event %d has id %s, want %s", len(types)+1, id, last.Next())
			case first == nil:
				first = &id
			}
			last = &id
			block = rest // the last chunk of a turn's event carries its id
		}
		data, ok := strings.CutPrefix(block, "data: ")
		var chunk map[string]any
		if !ok || strings.Contains(data, "\n") || json.Unmarshal([]byte(data), &chunk) != nil {
			return fmt.Errorf("event %d is not one data line of a JSON object: %q", len(types)+1, block)
		}
		typ, _ := chunk["type"].(string)
		types = append(types, typ)
		schema, err := s.eventSchema(media.EventSchema, typ)
		if err != nil {
			return fmt.Errorf("chunk %d: %w", len(types), err)
		}
		if err := s.validate(schema, s.decode([]byte(data))); err != nil {
			return fmt.Errorf("chunk %d (%s) does not match its schema: %w", len(types), typ, err)
		}
	}
	if resumed := first != nil && first.Seq > 1; len(types) == 0 || types[0] != "start" && !resumed {
		return fmt.Errorf("the stream does not begin with start: %v", types)
	}
	for i, t := range types {
		if last := t == "finish" || t == "error"; last != (i == len(types)-1) {
			return fmt.Errorf("want exactly one finish or error, last: %v", types)
		}
	}
	return nil
}

// TestSpecCatchesWrongUIStreams shows that mustMatchSpec checks an AI SDK
// UI message stream chunk by chunk.
func TestSpecCatchesWrongUIStreams(t *testing.T) {
	t.Parallel()
	data := func(chunks ...string) string {
		var b strings.Builder
		for _, c := range chunks {
			b.WriteString("data: " + c + "\n\n")
		}
		return b.String()
	}
	const (
		start  = `{"type":"start","messageId":"reply-7","messageMetadata":{"conversation_id":42}}`
		step   = `{"type":"start-step"}`
		input  = `{"type":"tool-input-available","toolCallId":"c1","toolName":"add_task","input":{"title":"x"},"dynamic":true}`
		output = `{"type":"tool-output-available","toolCallId":"c1","output":{"task_id":1},"dynamic":true}`
		finish = `{"type":"finish","finishReason":"stop"}`
		done   = "[DONE]"
	)
	good := data(start, step, input, output, `{"type":"finish-step"}`, finish, done)
	header := http.Header{"X-Request-Id": {"abc"}, "Content-Type": {"text/event-stream"}, "Cache-Control": {"no-cache"},
		"X-Accel-Buffering": {"no"}, "X-Vercel-Ai-Ui-Message-Stream": {"v1"}}
	cases := []struct {
		name, body string
		header     http.Header
		wantErr    string
	}{
		{"a right stream", good, header, ""},
		{"a right stream with pings", strings.Replace(good, "data: "+step, ": ping\n\ndata: "+step, 1), header, ""},
		{"a right stream with ids", data(start) + "id: 5-1\n" + data(step) + "id: 5-2\n" + data(input) + "id: 5-3\n" + data(output) +
			data(`{"type":"finish-step"}`) + "id: 5-4\n" + data(finish, done), header, ""},
		{"a stream resumed after an event", "id: 5-3\n" + data(output) + data(`{"type":"finish-step"}`) + "id: 5-4\n" + data(finish, done), header, ""},
		{"ids out of order", data(start) + "id: 5-1\n" + data(step) + "id: 5-3\n" + data(finish, done), header, "has id 5-3, want 5-2"},
		{"an id that is not <run>-<n>", data(start) + "id: 1\n" + data(step, finish, done), header, "not <run>-<n>"},
		{"a failed turn", data(start, step, `{"type":"error","errorText":"The model failed."}`, done), header, ""},
		{"a tool part that is not dynamic", strings.Replace(good, `,"dynamic":true}`, `}`, 1), header, `missing properties: ["dynamic"]`},
		{"an undocumented chunk", data(start, `{"type":"abort"}`, finish, done), header, `"abort" is not a documented event`},
		{"no [DONE]", data(start, step, finish), header, "[DONE]"},
		{"no start", data(step, finish, done), header, "does not begin with start"},
		{"chunks after finish", data(start, finish, step, done), header, "exactly one finish or error"},
		{"no finish", data(start, step, done), header, "exactly one finish or error"},
		{"a chunk that is not JSON", data(start, "{", finish, done), header, "not one data line of a JSON object"},
		{"without the protocol header", good, http.Header{"X-Request-Id": {"abc"}, "Content-Type": {"text/event-stream"},
			"Cache-Control": {"no-cache"}, "X-Accel-Buffering": {"no"}}, "X-Vercel-Ai-Ui-Message-Stream is required"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			err := specMismatch("POST", uiRoute, 200, c.header, []byte(c.body))
			switch {
			case c.wantErr == "" && err != nil:
				t.Fatalf("a right stream was refused: %v", err)
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Fatalf("error = %v\nwant it to mention %q", err, c.wantErr)
			}
		})
	}
}
