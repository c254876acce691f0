// Package openai is the agent's model served over the chat-completions
// API, by OpenAI or by any server that speaks its wire format. It streams
// the answer as it comes, assembles tool calls from their fragments,
// retries what a later attempt may get past, and reports every failure as
// one of package agent's model error kinds, so the loop can tell a bad key
// from an outage without knowing which model it runs.
package openai

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"time"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/taskchat/taskchat/internal/agent"
)

// The defaults New gives a Config's zero fields, and the bounds on how
// long one retry may wait.
const (
	defaultModel          = "gpt-4o-mini"
	defaultMaxRetries     = 3
	defaultRetryBaseDelay = 250 * time.Millisecond
	defaultIdleTimeout    = 60 * time.Second
	maxRetryDelay         = 10 * time.Second
	maxRetryAfter         = 60 * time.Second
	drainTimeout          = time.Second
)

// errStreamIdle is the cause the idle timer cancels an attempt with.
var errStreamIdle = errors.New("no stream data within the idle timeout")

// Config configures a model served over the chat-completions API.
// New replaces zero fields with defaults.
type Config struct {
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
	// (and before the first) before the call fails with
	// agent.ErrModelTimeout; the default is 60s.
	IdleTimeout time.Duration
}

// withDefaults returns the config with every zero field defaulted.
func (c Config) withDefaults() Config {
	if c.Model == "" {
		c.Model = defaultModel
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
// itself by Config.IdleTimeout.
func NewHTTPClient() *http.Client {
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	return &http.Client{Transport: &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dialer.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return bodyConn{c}, nil
		},
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 60 * time.Second,
		ExpectContinueTimeout: time.Second,
		ForceAttemptHTTP2:     true,
		// Nearly every call goes to one host; keep enough connections
		// warm for the concurrent turns of a busy replica.
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: 128,
		// A request is written once and the connection then only reads a
		// long stream of small chunks through go-openai's own buffered
		// reader: small transport buffers keep an open stream light.
		WriteBufferSize: 1 << 10,
		ReadBufferSize:  1 << 10,
		IdleConnTimeout: 90 * time.Second,
		// Pings find HTTP/2 connections that died without a FIN.
		HTTP2: &http.HTTP2Config{SendPingTimeout: 30 * time.Second, PingTimeout: 15 * time.Second},
	}}
}

// Model is an agent.Model served over the chat-completions API, by OpenAI
// or by any server that speaks its wire format. It is safe for concurrent
// use.
type Model struct {
	cfg    Config
	hc     *http.Client
	client goopenai.ClientConfig
	enc    *encoder
}

// New returns the model cfg describes, calling it through hc, which should
// be the process's one client from NewHTTPClient (nil makes a new one).
func New(cfg Config, hc *http.Client) *Model {
	if hc == nil {
		hc = NewHTTPClient()
	}
	cfg = cfg.withDefaults()
	client := goopenai.DefaultConfig(cfg.APIKey)
	if cfg.BaseURL != "" {
		client.BaseURL = cfg.BaseURL
	}
	return &Model{cfg: cfg, hc: hc, client: client, enc: newEncoder(cfg.Model)}
}

// Name returns the name of the model the calls go to.
func (m *Model) Name() string { return m.cfg.Model }

// Stream sends req and streams the answer. Rate limits, server errors and
// broken connections are retried with backoff as long as nothing has
// reached the caller yet: once text or a tool call has arrived, a failure
// is returned as is, since the caller cannot take it back.
func (m *Model) Stream(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
	if onText == nil {
		onText = func(string) {}
	}
	for retry := 0; ; retry++ {
		a := &attempt{hc: m.hc, onText: onText}
		resp, err := m.try(ctx, req, a)
		if err == nil {
			return resp, nil
		}
		if a.delivered || retry >= m.cfg.MaxRetries || !retryable(err) {
			return agent.Response{Usage: a.spent(req)}, err
		}
		if err := m.backoff(ctx, retry, a.retryAfter, err); err != nil {
			return agent.Response{}, err
		}
	}
}

// try makes one request and reads its stream to the end. An idle timer
// cancels the attempt when the server goes silent for IdleTimeout. The
// body is encoded anew for each attempt rather than kept for a retry, so a
// long stream holds no copy of its request.
func (m *Model) try(parent context.Context, req agent.Request, a *attempt) (agent.Response, error) {
	body, err := m.enc.body(req)
	if err != nil {
		return agent.Response{}, &agent.ModelError{Kind: agent.ErrModelRequest, Err: err}
	}
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	idle := time.AfterFunc(m.cfg.IdleTimeout, func() { cancel(errStreamIdle) })
	defer idle.Stop()

	cfg := m.client
	cfg.HTTPClient = bodyDoer{body: body, next: a}
	stream, err := goopenai.NewClientWithConfig(cfg).CreateChatCompletionStream(ctx, goopenai.ChatCompletionRequest{Model: m.cfg.Model})
	if err != nil {
		a.closeBody() // go-openai reads a refusal's body but never closes it
		return agent.Response{}, failure(parent, ctx, err, agent.ErrModelRequest)
	}
	defer stream.Close()
	a.streaming = true
	for {
		// go-openai finds each chunk's data and the stream's errors; the
		// chunk is decoded here, into the little of it the answer is made of.
		raw, err := stream.RecvRaw()
		if errors.Is(err, io.EOF) {
			idle.Reset(drainTimeout) // bounds finish's wait for the body's end
			return a.finish()
		}
		var chunk streamChunk
		if err == nil {
			err = decodeChunk(raw, &chunk)
		}
		if err != nil {
			return agent.Response{}, failure(parent, ctx, err, agent.ErrModelStream)
		}
		idle.Reset(m.cfg.IdleTimeout)
		a.add(chunk)
	}
}

// chatTools declares tools as functions whose parameters are their raw
// JSON Schema. A tool without one takes an empty object, because the API
// refuses "parameters": null.
func chatTools(tools []agent.ToolDef) []goopenai.Tool {
	var out []goopenai.Tool
	for _, t := range tools {
		params := t.Parameters
		if len(params) == 0 {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		out = append(out, goopenai.Tool{Type: goopenai.ToolTypeFunction, Function: &goopenai.FunctionDefinition{
			Name: t.Name, Description: t.Description, Parameters: params,
		}})
	}
	return out
}
