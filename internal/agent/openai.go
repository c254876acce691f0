package agent

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	mathrand "math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// The defaults NewOpenAI gives an OpenAIConfig's zero fields, and the
// bounds on how long one retry may wait.
const (
	defaultOpenAIModel    = "gpt-4o-mini"
	defaultMaxRetries     = 3
	defaultRetryBaseDelay = 250 * time.Millisecond
	defaultIdleTimeout    = 60 * time.Second
	maxRetryDelay         = 10 * time.Second
	maxRetryAfter         = 60 * time.Second
	drainTimeout          = time.Second
)

// errStreamIdle is the cause the idle timer cancels an attempt with.
var errStreamIdle = errors.New("no stream data within the idle timeout")

// errNoDone is why a stream that stopped without "data: [DONE]" is
// malformed: the answer may have been cut anywhere.
var errNoDone = errors.New("stream ended before data: [DONE]")

// OpenAIConfig configures a model served over the chat-completions API.
// NewOpenAI replaces zero fields with defaults.
type OpenAIConfig struct {
	// APIKey is sent as a bearer token; it may be empty for local servers.
	APIKey string
	// BaseURL is the API root ("https://host/v1"); empty means OpenAI's.
	BaseURL string
	// Model names the model to call; the default is gpt-4o-mini.
	Model string
	// MaxRetries bounds the retries after a first failed attempt; the
	// default is 3 and a negative value disables retries.
	MaxRetries int
	// RetryBaseDelay is the first backoff ceiling, doubled each retry;
	// the default is 250ms.
	RetryBaseDelay time.Duration
	// IdleTimeout is the longest silence allowed between stream chunks
	// (and before the first) before the call fails with ErrModelTimeout;
	// the default is 60s.
	IdleTimeout time.Duration
}

// withDefaults returns the config with every zero field defaulted.
func (c OpenAIConfig) withDefaults() OpenAIConfig {
	if c.Model == "" {
		c.Model = defaultOpenAIModel
	}
	if c.MaxRetries == 0 {
		c.MaxRetries = defaultMaxRetries
	}
	if c.RetryBaseDelay <= 0 {
		c.RetryBaseDelay = defaultRetryBaseDelay
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = defaultIdleTimeout
	}
	return c
}

// NewHTTPClient returns the HTTP client the process should share for model
// calls. It has no overall timeout, which would cut long streams short;
// instead each phase before the first byte is bounded, and the stream
// itself by OpenAIConfig.IdleTimeout.
func NewHTTPClient() *http.Client {
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	return &http.Client{Transport: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           dialer.DialContext,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 60 * time.Second,
		ExpectContinueTimeout: time.Second,
		ForceAttemptHTTP2:     true,
		// Nearly every call goes to one host; keep enough connections
		// warm for the concurrent turns of a busy replica.
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: 128,
		// A request is written once and the connection then only reads a
		// long stream: a small write buffer keeps an open stream light.
		WriteBufferSize: 1 << 10,
		IdleConnTimeout: 90 * time.Second,
		// Pings find HTTP/2 connections that died without a FIN.
		HTTP2: &http.HTTP2Config{SendPingTimeout: 30 * time.Second, PingTimeout: 15 * time.Second},
	}}
}

// OpenAI is a Model served over the chat-completions API, by OpenAI or by
// any server that speaks its wire format. It is safe for concurrent use.
type OpenAI struct {
	cfg    OpenAIConfig
	hc     *http.Client
	client openai.ClientConfig
}

// NewOpenAI returns the model cfg describes, calling it through hc, which
// should be the process's one client from NewHTTPClient (nil makes a new one).
func NewOpenAI(cfg OpenAIConfig, hc *http.Client) *OpenAI {
	if hc == nil {
		hc = NewHTTPClient()
	}
	cfg = cfg.withDefaults()
	client := openai.DefaultConfig(cfg.APIKey)
	if cfg.BaseURL != "" {
		client.BaseURL = cfg.BaseURL
	}
	return &OpenAI{cfg: cfg, hc: hc, client: client}
}

// Name returns the name of the model the calls go to.
func (o *OpenAI) Name() string { return o.cfg.Model }

// Stream sends req and streams the answer. Rate limits, server errors and
// broken connections are retried with backoff as long as nothing has
// reached the caller yet: once text or a tool call has arrived, a failure
// is returned as is, since the caller cannot take it back.
func (o *OpenAI) Stream(ctx context.Context, req Request, onText func(string)) (Response, error) {
	if onText == nil {
		onText = func(string) {}
	}
	chatReq := o.chatRequest(req)
	for retry := 0; ; retry++ {
		a := &attempt{hc: o.hc, onText: onText}
		resp, err := o.try(ctx, chatReq, a)
		if err == nil {
			return resp, nil
		}
		if a.delivered || retry >= o.cfg.MaxRetries || !retryable(err) {
			return Response{}, err
		}
		if err := o.backoff(ctx, retry, a.retryAfter, err); err != nil {
			return Response{}, err
		}
	}
}

// try makes one request and reads its stream to the end. An idle timer
// cancels the attempt when the server goes silent for IdleTimeout.
func (o *OpenAI) try(parent context.Context, req openai.ChatCompletionRequest, a *attempt) (Response, error) {
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	idle := time.AfterFunc(o.cfg.IdleTimeout, func() { cancel(errStreamIdle) })
	defer idle.Stop()

	cfg := o.client
	cfg.HTTPClient = a
	stream, err := openai.NewClientWithConfig(cfg).CreateChatCompletionStream(ctx, req)
	if err != nil {
		a.closeBody() // go-openai reads a refusal's body but never closes it
		return Response{}, failure(parent, ctx, err, ErrModelRequest)
	}
	defer stream.Close()
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			idle.Reset(drainTimeout) // bounds finish's wait for the body's end
			return a.finish()
		}
		if err != nil {
			return Response{}, failure(parent, ctx, err, ErrModelStream)
		}
		idle.Reset(o.cfg.IdleTimeout)
		a.add(chunk)
	}
}

// backoff sleeps before retry number retry+1: a full-jitter exponential
// delay, or the server's Retry-After if longer. It returns last instead
// when the sleep would outlast ctx's deadline.
func (o *OpenAI) backoff(ctx context.Context, retry int, retryAfter time.Duration, last error) error {
	ceiling := o.cfg.RetryBaseDelay
	for i := 0; i < retry && ceiling < maxRetryDelay; i++ {
		ceiling *= 2
	}
	delay := max(mathrand.N(min(ceiling, maxRetryDelay)), retryAfter)
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < delay {
		return last
	}
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return contextError(ctx.Err())
	case <-t.C:
		return nil
	}
}

// chatRequest converts req to go-openai's streaming request.
func (o *OpenAI) chatRequest(req Request) openai.ChatCompletionRequest {
	return openai.ChatCompletionRequest{
		Model:         o.cfg.Model,
		Messages:      chatMessages(req),
		Tools:         chatTools(req.Tools),
		Stream:        true,
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
	}
}

// chatMessages lists req's messages after its system prompt.
func chatMessages(req Request) []openai.ChatCompletionMessage {
	msgs := make([]openai.ChatCompletionMessage, 0, len(req.Messages)+1)
	if req.System != "" {
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: req.System})
	}
	for _, m := range req.Messages {
		msgs = append(msgs, openai.ChatCompletionMessage{
			Role:       string(m.Role),
			Content:    m.Content,
			ToolCalls:  chatToolCalls(m.ToolCalls),
			ToolCallID: m.ToolCallID,
		})
	}
	return msgs
}

// chatToolCalls converts the tool calls of an assistant message.
func chatToolCalls(calls []ToolCall) []openai.ToolCall {
	var out []openai.ToolCall
	for _, c := range calls {
		out = append(out, openai.ToolCall{
			ID:       c.ID,
			Type:     openai.ToolTypeFunction,
			Function: openai.FunctionCall{Name: c.Name, Arguments: c.Arguments},
		})
	}
	return out
}

// chatTools declares tools as functions whose parameters are their raw
// JSON Schema. A tool without one takes an empty object, because the API
// refuses "parameters": null.
func chatTools(tools []ToolDef) []openai.Tool {
	var out []openai.Tool
	for _, t := range tools {
		params := t.Parameters
		if len(params) == 0 {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		out = append(out, openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: t.Name, Description: t.Description, Parameters: params,
		}})
	}
	return out
}

// attempt is one request of a Stream call and what its stream delivered.
// It is also the HTTP doer go-openai sends through, to keep what go-openai
// drops: a refusal's Retry-After, and whether the stream ended with [DONE].
type attempt struct {
	hc         *http.Client
	onText     func(string)
	retryAfter time.Duration
	body       *sseBody
	delivered  bool // text or a tool call reached the caller
	text       strings.Builder
	calls      toolCallMerger
	usage      Usage
}

// Do sends r through the shared client and wraps the response body.
func (a *attempt) Do(r *http.Request) (*http.Response, error) {
	resp, err := a.hc.Do(r)
	if err != nil {
		return nil, err
	}
	a.retryAfter = parseRetryAfter(resp.Header.Get("Retry-After"))
	a.body = &sseBody{ReadCloser: resp.Body}
	resp.Body = a.body
	return resp, nil
}

// closeBody closes the response body, if a response came.
func (a *attempt) closeBody() {
	if a.body != nil {
		_ = a.body.Close()
	}
}

// add folds one chunk into the answer, passing text on as it comes. The
// usage chunk has no choices; other chunks carry a null usage.
func (a *attempt) add(chunk openai.ChatCompletionStreamResponse) {
	if u := chunk.Usage; u != nil {
		a.usage = Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
	}
	for _, c := range chunk.Choices {
		if c.Index != 0 {
			continue
		}
		if c.Delta.Content != "" {
			a.delivered = true
			a.text.WriteString(c.Delta.Content)
			a.onText(c.Delta.Content)
		}
		for _, d := range c.Delta.ToolCalls {
			a.delivered = true
			a.calls.add(d)
		}
	}
}

// finish returns the answer once go-openai reports the end of the stream,
// which it does with io.EOF both after [DONE] and when the body just ends.
func (a *attempt) finish() (Response, error) {
	if a.body == nil || !a.body.done {
		return Response{}, &ModelError{Kind: ErrModelStream, Err: errNoDone}
	}
	a.body.drain()
	return Response{Text: a.text.String(), ToolCalls: a.calls.complete(), Usage: a.usage}, nil
}

// toolCallMerger assembles tool calls from their streamed fragments. A
// fragment belongs to the call with its id, else to the call with its
// index (OpenAI sends the id only once), else, when it carries neither, to
// the latest call (servers that omit the index).
type toolCallMerger struct {
	calls []ToolCall
	slots map[string]int // "index:N" and "id:X" to position in calls
}

// add appends one fragment: the id and name are set once, the arguments
// are concatenated.
func (m *toolCallMerger) add(d openai.ToolCall) {
	c := &m.calls[m.slot(d)]
	if c.ID == "" {
		c.ID = d.ID
	}
	if c.Name == "" {
		c.Name = d.Function.Name
	}
	c.Arguments += d.Function.Arguments
}

// slot finds or makes the position of d's call. A known index with a
// different id is a new call: some servers give parallel calls one index.
func (m *toolCallMerger) slot(d openai.ToolCall) int {
	var keys []string
	if d.ID != "" {
		keys = append(keys, "id:"+d.ID)
	}
	if d.Index != nil {
		keys = append(keys, "index:"+strconv.Itoa(*d.Index))
	}
	i, ok := m.find(keys, d.ID)
	if !ok {
		m.calls = append(m.calls, ToolCall{})
		i = len(m.calls) - 1
	}
	if m.slots == nil {
		m.slots = make(map[string]int)
	}
	for _, k := range keys {
		m.slots[k] = i
	}
	return i
}

// find looks keys up in order, the id before the index.
func (m *toolCallMerger) find(keys []string, id string) (int, bool) {
	if len(keys) == 0 {
		return len(m.calls) - 1, len(m.calls) > 0
	}
	for _, k := range keys {
		i, ok := m.slots[k]
		if ok && (id == "" || m.calls[i].ID == "" || m.calls[i].ID == id) {
			return i, true
		}
	}
	return 0, false
}

// complete returns the calls, giving an id to any the server left without.
func (m *toolCallMerger) complete() []ToolCall {
	for i := range m.calls {
		if m.calls[i].ID == "" {
			m.calls[i].ID = "call_" + rand.Text()
		}
	}
	return m.calls
}

// maxDoneLine is longer than any line sseBody needs to recognise.
const maxDoneLine = 64

// sseBody watches a stream's bytes for the "data: [DONE]" line, because
// go-openai reports both that line and a body that merely ends as io.EOF.
type sseBody struct {
	io.ReadCloser
	line []byte // the current line, while it is short
	long bool   // the current line outgrew maxDoneLine
	done bool
}

// Read reads from the body and scans what it read.
func (b *sseBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.scan(p[:n])
	if errors.Is(err, io.EOF) {
		b.endLine()
	}
	return n, err
}

// scan follows the lines in p.
func (b *sseBody) scan(p []byte) {
	for {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			b.keep(p)
			return
		}
		b.keep(p[:i])
		b.endLine()
		p = p[i+1:]
	}
}

// keep adds p to the current line unless the line is too long to matter.
func (b *sseBody) keep(p []byte) {
	if b.long || len(b.line)+len(p) > maxDoneLine {
		b.long = true
		return
	}
	b.line = append(b.line, p...)
}

// endLine notes a [DONE] line and starts the next one.
func (b *sseBody) endLine() {
	data, ok := bytes.CutPrefix(bytes.TrimSpace(b.line), []byte("data:"))
	if !b.long && ok && string(bytes.TrimSpace(data)) == "[DONE]" {
		b.done = true
	}
	b.line, b.long = b.line[:0], false
}

// drain reads the little that follows [DONE] (the end of a chunked body
// may come in a later packet) so that an HTTP/1.1 connection goes back to
// the pool instead of being closed.
func (b *sseBody) drain() {
	_, _ = io.CopyN(io.Discard, b.ReadCloser, 4<<10)
}

// parseRetryAfter reads a Retry-After header in seconds or as a date. It
// returns zero for none, or for a wait too long to be worth honouring.
func parseRetryAfter(v string) time.Duration {
	var d time.Duration
	if secs, err := strconv.Atoi(v); err == nil {
		d = time.Duration(secs) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = time.Until(t)
	}
	if d <= 0 || d > maxRetryAfter {
		return 0
	}
	return d
}

// failure explains why an attempt failed: the caller's context first, then
// the idle timer, then what the server or the connection said.
func failure(parent, ctx context.Context, err, fallback error) error {
	switch {
	case parent.Err() != nil:
		return contextError(parent.Err())
	case errors.Is(context.Cause(ctx), errStreamIdle):
		return &ModelError{Kind: ErrModelTimeout, Err: errStreamIdle}
	default:
		return classify(err, fallback)
	}
}

// contextError reports the caller's context: a deadline is a timeout, a
// cancellation is the caller's own doing and no model failure.
func contextError(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return &ModelError{Kind: ErrModelTimeout, Err: err}
	}
	return fmt.Errorf("openai: %w", err)
}

// classify gives err its kind. Errors go-openai raises itself take
// fallback: a request it would not send, or a stream it could not read.
func classify(err, fallback error) *ModelError {
	var reqErr *openai.RequestError
	var apiErr *openai.APIError
	var urlErr *url.Error
	switch {
	case errors.As(err, &reqErr):
		return &ModelError{Kind: statusKind(reqErr.HTTPStatusCode, false), Status: reqErr.HTTPStatusCode, Err: err}
	case errors.As(err, &apiErr) && apiErr.HTTPStatusCode == 0:
		return &ModelError{Kind: eventKind(apiErr), Err: err} // an error event inside the stream
	case errors.As(err, &apiErr):
		return &ModelError{Kind: statusKind(apiErr.HTTPStatusCode, isQuota(apiErr)), Status: apiErr.HTTPStatusCode, Err: err}
	case isTimeout(err):
		return &ModelError{Kind: ErrModelTimeout, Err: err}
	case errors.As(err, &urlErr):
		return &ModelError{Kind: ErrModelServer, Err: err} // the server could not be reached
	default:
		return &ModelError{Kind: fallback, Err: err}
	}
}

// statusKind maps an HTTP status to a kind of model failure.
func statusKind(status int, quota bool) error {
	switch {
	case quota || status == http.StatusPaymentRequired:
		return ErrModelQuota
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return ErrModelAuth
	case status == http.StatusTooManyRequests:
		return ErrModelRateLimited
	case status == http.StatusRequestTimeout:
		return ErrModelTimeout
	case status >= 500:
		return ErrModelServer
	default:
		return ErrModelRequest
	}
}

// eventKind maps an error event sent in place of a chunk.
func eventKind(e *openai.APIError) error {
	if isQuota(e) {
		return ErrModelQuota
	}
	return ErrModelServer
}

// isQuota reports an exhausted quota, which waiting will not fix.
func isQuota(e *openai.APIError) bool {
	return e.Type == "insufficient_quota" || e.Code == "insufficient_quota"
}

// isTimeout reports a deadline or a network timeout.
func isTimeout(err error) bool {
	var netErr net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout())
}

// retryable reports failures that a later attempt may not meet.
func retryable(err error) bool {
	var me *ModelError
	if !errors.As(err, &me) {
		return false
	}
	switch me.Kind {
	case ErrModelRateLimited, ErrModelServer, ErrModelTimeout, ErrModelStream:
		return true
	}
	return false
}
