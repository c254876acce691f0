package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client calls the API of one server for one user, with that user's token.
type Client struct {
	URL   string // the server's base URL, without a trailing slash
	Token string
	User  string // the token's subject: the {user_id} of every path
	HTTP  *http.Client
}

// Answer is a chat turn's answer: the JSON body of POST …/chat, and the
// data of its stream's done event.
type Answer struct {
	ConversationID int64      `json:"conversation_id"`
	Response       string     `json:"response"`
	ToolCalls      []ToolCall `json:"tool_calls"`
	Interrupted    bool       `json:"interrupted"`
	Stopped        bool       `json:"stopped"`
	Approvals      []Approval `json:"approvals"`
}

// ToolCall is one call a turn made, as an answer tells it.
type ToolCall struct {
	ID         string          `json:"id"`
	Tool       string          `json:"tool"`
	Arguments  json.RawMessage `json:"arguments"`
	Result     json.RawMessage `json:"result"`
	IsError    bool            `json:"is_error"`
	ApprovalID int64           `json:"approval_id"`
}

// Approval is a call that waits for its person.
type Approval struct {
	ID             int64  `json:"id"`
	ConversationID int64  `json:"conversation_id"`
	Tool           string `json:"tool"`
	Summary        string `json:"summary"`
	State          string `json:"state"`
}

// Event is one event of a turn's stream other than its last (done or
// error): start, delta, tool_call, tool_result or approval_required. Only
// the fields of its kind are set.
type Event struct {
	Name           string
	ConversationID int64           // start
	TurnID         int64           // start
	Text           string          // delta
	Tool           string          // tool_call, tool_result
	Arguments      json.RawMessage // tool_call
	Result         json.RawMessage // tool_result
	IsError        bool            // tool_result
	Approval       *Approval       // approval_required
}

// Conversation is one of the user's conversations.
type Conversation struct {
	ID        int64     `json:"id"`
	Title     string    `json:"title"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Task is one of the user's tasks.
type Task struct {
	ID        int64   `json:"id"`
	Title     string  `json:"title"`
	Completed bool    `json:"completed"`
	Due       *string `json:"due"`
	Overdue   bool    `json:"overdue"`
	Priority  *string `json:"priority"`
}

// Settings are the user's settings.
type Settings struct {
	TimeZone  string  `json:"time_zone"`
	UpdatedAt *string `json:"updated_at"` // nil until the user set them
}

// Problem is an error the server answered (RFC 9457 problem details with
// taskchat's code), or the error event that ended a turn's stream.
type Problem struct {
	Status int    // 0 for an error event
	Code   string `json:"code"`
	Title  string `json:"title"`
	Detail string `json:"detail"`
	// Message is an error event's sentence.
	Message string `json:"message"`
}

func (p *Problem) Error() string {
	text := p.Detail
	if text == "" {
		text = p.Message
	}
	if text == "" {
		text = p.Title
	}
	if text == "" {
		text = http.StatusText(p.Status)
	}
	if p.Code == "" {
		return Line(text)
	}
	return Line(text) + " (" + Line(p.Code) + ")"
}

// Unreachable is the error of a server that did not answer at all.
type Unreachable struct {
	URL string
	Err error
}

func (e *Unreachable) Error() string {
	return fmt.Sprintf("the server at %s does not answer: %v", e.URL, e.Err)
}

func (e *Unreachable) Unwrap() error { return e.Err }

// maxEvent bounds one event of a stream, and a JSON answer: a done event
// carries the whole reply and its calls, which the server bounds well
// below this.
const maxEvent = 32 << 20

// Chat runs one turn, streamed: each event but the last goes to on as it
// comes, and the done event's answer is returned. A turn whose stream ends
// with an error event returns it as a *Problem. conversation 0 starts a
// new conversation.
func (c *Client) Chat(ctx context.Context, conversation int64, message string, on func(Event)) (*Answer, error) {
	resp, err := c.do(ctx, http.MethodPost, "/chat", chatBody(conversation, message), "text/event-stream")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return readStream(resp.Body, on)
}

// ChatJSON runs one turn and returns its answer as the server wrote it.
func (c *Client) ChatJSON(ctx context.Context, conversation int64, message string) ([]byte, error) {
	resp, err := c.do(ctx, http.MethodPost, "/chat", chatBody(conversation, message), "application/json")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return readAll(resp.Body)
}

func chatBody(conversation int64, message string) any {
	body := map[string]any{"message": message}
	if conversation != 0 {
		body["conversation_id"] = conversation
	}
	return body
}

// Stop stops the conversation's running turn, if one runs.
func (c *Client) Stop(ctx context.Context, conversation int64) error {
	resp, err := c.do(ctx, http.MethodPost, "/conversations/"+strconv.FormatInt(conversation, 10)+"/stop", nil, "application/json")
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// Decide approves or declines an approval. While other approvals of its
// turn wait, it returns no answer; once none does, the turn continues,
// streamed to on as Chat streams it, and its answer is returned.
func (c *Client) Decide(ctx context.Context, approval int64, approved bool, on func(Event)) (*Answer, error) {
	resp, err := c.do(ctx, http.MethodPost, "/approvals/"+strconv.FormatInt(approval, 10), map[string]bool{"approved": approved}, "text/event-stream")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusAccepted {
		return nil, nil // others of its turn still wait
	}
	return readStream(resp.Body, on)
}

// Conversations returns the user's most recently active conversations,
// newest first, and whether there are more.
func (c *Client) Conversations(ctx context.Context, limit int) ([]Conversation, bool, error) {
	var page struct {
		Conversations []Conversation `json:"conversations"`
		NextCursor    *string        `json:"next_cursor"`
	}
	err := c.get(ctx, "/conversations?limit="+strconv.Itoa(limit), &page)
	return page.Conversations, page.NextCursor != nil, err
}

// Waiting returns the calls that wait for the user's approval in
// conversation, oldest first, as they were asked.
func (c *Client) Waiting(ctx context.Context, conversation int64) ([]Approval, error) {
	var page struct {
		Approvals []Approval `json:"approvals"`
	}
	if err := c.get(ctx, "/approvals?limit=100", &page); err != nil {
		return nil, err
	}
	var out []Approval
	for i := len(page.Approvals) - 1; i >= 0; i-- { // the page is newest first
		if a := page.Approvals[i]; a.ConversationID == conversation && a.State == "pending" {
			out = append(out, a)
		}
	}
	return out, nil
}

// Tasks returns the first limit of the user's tasks, in number order, and
// whether there are more.
func (c *Client) Tasks(ctx context.Context, limit int) ([]Task, bool, error) {
	var page struct {
		Tasks      []Task  `json:"tasks"`
		NextCursor *string `json:"next_cursor"`
	}
	err := c.get(ctx, "/tasks?limit="+strconv.Itoa(limit), &page)
	return page.Tasks, page.NextCursor != nil, err
}

// Settings returns the user's settings.
func (c *Client) Settings(ctx context.Context) (Settings, error) {
	var s Settings
	err := c.get(ctx, "/settings", &s)
	return s, err
}

// SetTimeZone sets the user's time zone, an IANA name.
func (c *Client) SetTimeZone(ctx context.Context, zone string) error {
	resp, err := c.do(ctx, http.MethodPut, "/settings", map[string]string{"time_zone": zone}, "application/json")
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

func (c *Client) get(ctx context.Context, path string, into any) error {
	resp, err := c.do(ctx, http.MethodGet, path, nil, "application/json")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := readAll(resp.Body)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, into); err != nil {
		return fmt.Errorf("the server's answer to GET %s does not parse: %w", path, err)
	}
	return nil
}

// do sends a request to the user's path under /api, and returns the
// response when its status is 2xx; any other answer is returned as a
// *Problem, a server that does not answer as *Unreachable.
func (c *Client) do(ctx context.Context, method, path string, body any, accept string) (*http.Response, error) {
	return send(ctx, c.HTTP, method, c.URL+"/api/"+url.PathEscape(c.User)+path, c.Token, body, accept)
}

func send(ctx context.Context, hc *http.Client, method, target, token string, body any, accept string) (*http.Response, error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, r)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", accept)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		u, _ := url.Parse(target)
		return nil, &Unreachable{URL: u.Scheme + "://" + u.Host, Err: errors.Unwrap(err)}
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	p := &Problem{Status: resp.StatusCode}
	if b, err := readAll(resp.Body); err == nil && isJSON(resp.Header.Get("Content-Type")) {
		_ = json.Unmarshal(b, p)
		p.Status = resp.StatusCode
	}
	return nil, p
}

func isJSON(contentType string) bool {
	t, _, _ := mime.ParseMediaType(contentType)
	return t == "application/json" || strings.HasSuffix(t, "+json")
}

func readAll(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxEvent+1))
	if err == nil && len(b) > maxEvent {
		err = fmt.Errorf("the server's answer is larger than %d MiB", maxEvent>>20)
	}
	return b, err
}

// readStream reads a turn's Server-Sent Events: each to on, until done
// (its answer returned) or error (returned as a *Problem). A stream that
// ends before either was cut short.
func readStream(body io.Reader, on func(Event)) (*Answer, error) {
	br := bufio.NewReaderSize(body, 64<<10)
	var name string
	var data []byte
	for {
		line, err := readLine(br)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil, errors.New("the server ended the reply before it was done; the turn may still be running")
			}
			return nil, err
		}
		switch {
		case line == "":
			if name == "" && data == nil {
				continue
			}
			answer, err := dispatch(name, data, on)
			if answer != nil || err != nil {
				return answer, err
			}
			name, data = "", nil
		case strings.HasPrefix(line, ":"): // a ping
		case strings.HasPrefix(line, "event:"):
			name = strings.TrimPrefix(strings.TrimPrefix(line, "event:"), " ")
		case strings.HasPrefix(line, "data:"):
			if data != nil {
				data = append(data, '\n')
			}
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " ")...)
		}
	}
}

// readLine reads one line of a stream, without its end, bounded by maxEvent.
func readLine(br *bufio.Reader) (string, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxEvent {
			return "", fmt.Errorf("an event of the server's stream is larger than %d MiB", maxEvent>>20)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil && (err != io.EOF || len(line) == 0) {
			return "", err
		}
		return strings.TrimSuffix(strings.TrimSuffix(string(line), "\n"), "\r"), nil
	}
}

// dispatch hands an event to on, or returns the answer or problem that
// ends the stream.
func dispatch(name string, data []byte, on func(Event)) (*Answer, error) {
	switch name {
	case "done":
		var a Answer
		if err := json.Unmarshal(data, &a); err != nil {
			return nil, fmt.Errorf("the server's done event does not parse: %w", err)
		}
		return &a, nil
	case "error":
		p := &Problem{}
		if err := json.Unmarshal(data, p); err != nil {
			return nil, fmt.Errorf("the server's error event does not parse: %w", err)
		}
		return nil, p
	}
	var d struct {
		ConversationID int64           `json:"conversation_id"`
		TurnID         int64           `json:"turn_id"`
		Text           string          `json:"text"`
		Tool           string          `json:"tool"`
		Arguments      json.RawMessage `json:"arguments"`
		Result         json.RawMessage `json:"result"`
		IsError        bool            `json:"is_error"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("the server's %s event does not parse: %w", Line(name), err)
	}
	e := Event{Name: name, ConversationID: d.ConversationID, TurnID: d.TurnID, Text: d.Text,
		Tool: d.Tool, Arguments: d.Arguments, Result: d.Result, IsError: d.IsError}
	if name == "approval_required" {
		e.Approval = &Approval{}
		_ = json.Unmarshal(data, e.Approval)
	}
	if on != nil {
		on(e)
	}
	return nil, nil
}
