package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/mcptools"
	"github.com/taskchat/taskchat/internal/store"
	"github.com/taskchat/taskchat/internal/tasks"
)

// The floor role (-floor) is a measuring stick, not a product: a chat turn
// written by hand that does only the work a turn cannot avoid, on the same
// wire contract, schema and fake model, so that taskchat's figures can be
// read against it on the same machine in the same run. It checks the HS256
// token by hand; claims or creates the conversation, stores the message and
// reads the newest 50 messages (their text: it does not replay earlier
// turns' tool calls, which taskchat does) in one batch; streams the model's answer
// over the same HTTP client, with the same system prompt and tool
// declarations, encoded by hand; inserts the task and its audit row in one
// statement, as taskchat's tool does; calls the model again with the
// result; stores the reply, attaches the call and releases the claim in one
// statement; and answers JSON, or SSE events flushed one by one.
//
// What it leaves out is what taskchat adds for its guarantees and its
// users: MCP (the tools and their schemas), idempotency keys, exactly-once
// recording of calls before the reply, recovery of turns cut short, the
// daily budget, limits, logging, metrics, and every error path.

// runFloor is the floor role: the hand-written turn on a loopback port.
func runFloor(databaseURL, modelURL, certFile, cpuProfile string) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	rec, pool, err := openMeasured(ctx, databaseURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	hc, err := modelClient(certFile)
	if err != nil {
		return err
	}
	tools, err := toolDeclarations(ctx, pool)
	if err != nil {
		return err
	}
	f := &floor{pool: pool, hc: hc, url: modelURL + "/chat/completions", tools: tools}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/{user_id}/chat", f.chat)
	return serve(ctx, rec, mux, cpuProfile)
}

// toolDeclarations encodes, once, the same tool declarations taskchat
// sends the model.
func toolDeclarations(ctx context.Context, pool *pgxpool.Pool) ([]byte, error) {
	cs, err := mcptools.Connect(ctx, "floor", tasks.NewService(store.NewTasks(pool)))
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	defs, err := agent.ListTools(ctx, cs)
	if err != nil {
		return nil, err
	}
	type function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	}
	type tool struct {
		Type     string   `json:"type"`
		Function function `json:"function"`
	}
	var out []tool
	for _, d := range defs {
		out = append(out, tool{"function", function{d.Name, d.Description, d.Parameters}})
	}
	return json.Marshal(out)
}

type floor struct {
	pool  *pgxpool.Pool
	hc    *http.Client
	url   string
	tools []byte
}

// floorMessage is a stored message, as the model is sent it.
type floorMessage struct{ role, content string }

func (f *floor) chat(w http.ResponseWriter, r *http.Request) {
	user := r.PathValue("user_id")
	if sub, err := verifyHS256(r.Header.Get("Authorization"), []byte(secret)); err != nil || sub != user {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	var in struct {
		Message        string `json:"message"`
		ConversationID int64  `json:"conversation_id"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&in); err != nil || in.Message == "" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	ctx := r.Context()
	conv, turnID, token, history, err := f.start(ctx, user, in.ConversationID, in.Message)
	if err != nil {
		http.Error(w, err.Error(), http.StatusConflict)
		return
	}
	out := newFloorOutput(w, r.Header.Get("Accept") == "text/event-stream")
	system := agent.DefaultPrompt().Render(user, "fake-model", time.Now())
	msgs := append(history, floorMessage{"user", in.Message})
	reply, call, err := f.model(ctx, system, msgs, nil, out)
	calls := []any{}
	if err == nil && call != nil {
		out.event("tool_call", call)
		var result []byte
		if result, err = f.addTask(ctx, user, conv, turnID, token, call); err == nil {
			out.event("tool_result", json.RawMessage(result))
			reply, _, err = f.model(ctx, system, msgs, &toolRound{call: call, result: result}, out)
			calls = append(calls, call)
		}
	}
	if err == nil {
		err = f.finish(ctx, user, conv, turnID, token, reply)
	}
	if err != nil { // the floor has no error paths worth the name: it only has to fail loudly
		out.fail(err)
		return
	}
	out.done(map[string]any{"conversation_id": conv, "response": reply, "tool_calls": calls})
}

// start claims or creates the conversation, stores the message and reads
// the history, in one batch.
func (f *floor) start(ctx context.Context, user string, conv int64, message string) (int64, int64, string, []floorMessage, error) {
	token := newToken()
	b := &pgx.Batch{}
	var turnID int64
	var history []floorMessage
	if conv == 0 {
		b.Queue(`
			WITH c AS (
				INSERT INTO conversations (user_id, title, claim_token, claimed_until)
				VALUES ($1, left($2, 200), $3, now() + interval '3 minutes') RETURNING id, number, user_id
			), m AS (
				INSERT INTO messages (conversation_id, user_id, role, content)
				SELECT id, user_id, 'user', $2 FROM c RETURNING id
			)
			SELECT c.number, m.id FROM c, m`, user, message, token).
			QueryRow(func(row pgx.Row) error { return row.Scan(&conv, &turnID) })
	} else {
		b.Queue(`
			UPDATE conversations SET claim_token = $3, claimed_until = now() + interval '3 minutes', updated_at = now()
			WHERE number = $1 AND user_id = $2 AND (claimed_until IS NULL OR claimed_until < now())`, conv, user, token)
		b.Queue(`
			INSERT INTO messages (conversation_id, user_id, role, content)
			SELECT id, user_id, 'user', $4 FROM conversations WHERE number = $1 AND user_id = $2 AND claim_token = $3
			RETURNING id`, conv, user, token, message).QueryRow(func(row pgx.Row) error { return row.Scan(&turnID) })
		b.Queue(`
			SELECT role, content FROM (
				SELECT id, role, content FROM messages WHERE conversation_id = (SELECT id FROM conversations WHERE user_id = $2 AND number = $1) AND user_id = $2
				ORDER BY id DESC LIMIT 50 OFFSET 1
			) newest ORDER BY id`, conv, user).Query(func(rows pgx.Rows) error {
			for rows.Next() {
				var m floorMessage
				if err := rows.Scan(&m.role, &m.content); err != nil {
					return err
				}
				history = append(history, m)
			}
			return rows.Err()
		})
	}
	err := f.pool.SendBatch(ctx, b).Close()
	return conv, turnID, token, history, err
}

// addTask inserts the task with its number and its audit row, in one
// statement, as taskchat's add_task does, and returns the result the model
// is given.
func (f *floor) addTask(ctx context.Context, user string, conv, turnID int64, token string, call *floorCall) ([]byte, error) {
	var args struct {
		Title string `json:"title"`
	}
	if err := json.Unmarshal([]byte(call.Function.Arguments), &args); err != nil {
		return nil, err
	}
	var number int64
	err := f.pool.QueryRow(ctx, `
		WITH held AS (
			SELECT id FROM conversations WHERE number = $3 AND user_id = $1 AND claim_token = $4 AND claimed_until > now() FOR SHARE
		), n AS (
			INSERT INTO task_counters (user_id, last_number) SELECT $1, 1 WHERE EXISTS (SELECT 1 FROM held)
			ON CONFLICT (user_id) DO UPDATE SET last_number = task_counters.last_number + 1 RETURNING last_number
		), t AS (
			INSERT INTO tasks (user_id, number, title) SELECT $1, n.last_number, $2 FROM n RETURNING number, title
		), a AS (
			INSERT INTO tool_calls (conversation_id, turn_id, user_id, call_id, tool, arguments, result, is_error, round, seq, duration_ms)
			SELECT (SELECT id FROM held), $5, $1, $6, 'add_task', $7::jsonb, jsonb_build_object('task_id', t.number, 'status', 'created', 'title', t.title), false, 0, 0, 1
			FROM t
		)
		SELECT number FROM t`, user, args.Title, conv, token, turnID, call.ID, call.Function.Arguments).Scan(&number)
	if err != nil {
		return nil, err
	}
	return json.Marshal(map[string]any{"task_id": number, "status": "created", "title": args.Title})
}

// finish stores the reply, attaches the turn's call to it and releases
// the claim, in one statement.
func (f *floor) finish(ctx context.Context, user string, conv, turnID int64, token, reply string) error {
	var id int64
	return f.pool.QueryRow(ctx, `
		WITH m AS (
			INSERT INTO messages (conversation_id, user_id, role, content)
			SELECT id, user_id, 'assistant', $4 FROM conversations WHERE number = $1 AND user_id = $2 RETURNING id
		), t AS (
			UPDATE tool_calls SET message_id = m.id FROM m WHERE turn_id = $5 AND user_id = $2
		), c AS (
			UPDATE conversations SET claim_token = NULL, claimed_until = NULL, updated_at = now()
			WHERE number = $1 AND user_id = $2 AND claim_token = $3
		)
		SELECT id FROM m`, conv, user, token, reply, turnID).Scan(&id)
}

// floorCall is a tool call as the wire carries it.
type floorCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// toolRound is the model's tool call and its result, for the second call.
type toolRound struct {
	call   *floorCall
	result []byte
}

// model streams one chat completion: text deltas go to out as they come;
// it returns the text and the first tool call.
func (f *floor) model(ctx context.Context, system string, msgs []floorMessage, round *toolRound, out *floorOutput) (string, *floorCall, error) {
	start := time.Now()
	defer func() {
		if s, ok := ctx.Value(turnKey{}).(*turnStats); ok {
			s.model.Add(int64(time.Since(start)))
		}
	}()
	req, err := http.NewRequestWithContext(ctx, "POST", f.url, bytes.NewReader(f.body(system, msgs, round)))
	if err != nil {
		return "", nil, err
	}
	req.Header.Set("Authorization", "Bearer sk-load")
	req.Header.Set("Content-Type", "application/json")
	resp, err := f.hc.Do(req)
	if err != nil {
		return "", nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", nil, fmt.Errorf("model: %s", resp.Status)
	}
	var text strings.Builder
	var call *floorCall
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: "))
		if !ok {
			continue
		}
		if string(data) == "[DONE]" {
			return text.String(), call, nil
		}
		var chunk struct {
			Choices []struct {
				Delta struct {
					Content   string      `json:"content"`
					ToolCalls []floorCall `json:"tool_calls"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal(data, &chunk); err != nil {
			return "", nil, err
		}
		for _, c := range chunk.Choices {
			if c.Delta.Content != "" {
				text.WriteString(c.Delta.Content)
				out.event("delta", map[string]string{"text": c.Delta.Content})
			}
			for _, tc := range c.Delta.ToolCalls {
				if call == nil {
					call = &floorCall{ID: tc.ID, Type: "function"}
					call.Function.Name = tc.Function.Name
				}
				call.Function.Arguments += tc.Function.Arguments
			}
		}
	}
	if err := sc.Err(); err != nil {
		return "", nil, err
	}
	return "", nil, errors.New("model stream ended before [DONE]")
}

// body encodes the request by hand.
func (f *floor) body(system string, msgs []floorMessage, round *toolRound) []byte {
	b := []byte(`{"model":"fake-model","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"system","content":`)
	b = appendJSON(b, system)
	b = append(b, '}')
	for _, m := range msgs {
		b = append(b, `,{"role":`...)
		b = appendJSON(b, m.role)
		b = append(b, `,"content":`...)
		b = appendJSON(b, m.content)
		b = append(b, '}')
	}
	if round != nil {
		b = append(b, `,{"role":"assistant","tool_calls":[`...)
		b = appendJSON(b, round.call)
		b = append(b, `]},{"role":"tool","tool_call_id":`...)
		b = appendJSON(b, round.call.ID)
		b = append(b, `,"content":`...)
		b = appendJSON(b, string(round.result))
		b = append(b, '}')
	}
	b = append(b, `],"tools":`...)
	b = append(b, f.tools...)
	return append(b, '}')
}

func appendJSON(b []byte, v any) []byte {
	j, _ := json.Marshal(v)
	return append(b, j...)
}

// floorOutput answers JSON at the end, or SSE events as they come.
type floorOutput struct {
	w      http.ResponseWriter
	stream bool
	id     int
}

func newFloorOutput(w http.ResponseWriter, stream bool) *floorOutput {
	if stream {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		_ = http.NewResponseController(w).Flush()
	}
	return &floorOutput{w: w, stream: stream}
}

func (o *floorOutput) event(name string, v any) {
	if !o.stream {
		return
	}
	o.id++
	data, _ := json.Marshal(v)
	fmt.Fprintf(o.w, "id: %d\nevent: %s\ndata: %s\n\n", o.id, name, data)
	_ = http.NewResponseController(o.w).Flush()
}

func (o *floorOutput) fail(err error) {
	if o.stream {
		o.event("error", map[string]string{"error": err.Error()})
		return
	}
	http.Error(o.w, err.Error(), http.StatusInternalServerError)
}

func (o *floorOutput) done(v any) {
	if o.stream {
		o.event("done", v)
		return
	}
	data, _ := json.Marshal(v)
	o.w.Header().Set("Content-Type", "application/json")
	_, _ = o.w.Write(data)
}

// verifyHS256 checks a bearer token's HS256 signature and expiry by hand
// and returns its subject.
func verifyHS256(authorization string, key []byte) (string, error) {
	token, ok := strings.CutPrefix(authorization, "Bearer ")
	parts := strings.Split(token, ".")
	if !ok || len(parts) != 3 {
		return "", errors.New("malformed token")
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(parts[0] + "." + parts[1]))
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || !hmac.Equal(sig, mac.Sum(nil)) {
		return "", errors.New("bad signature")
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return "", err
	}
	var claims struct {
		Sub string `json:"sub"`
		Exp int64  `json:"exp"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil || claims.Exp < time.Now().Unix() {
		return "", errors.New("expired or unreadable claims")
	}
	return claims.Sub, nil
}

// newToken is a claim token, a random UUID.
func newToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	h := fmt.Sprintf("%x", b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
