package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/taskchat/taskchat/internal/tasks"
)

// RecordCall records a call of an outside MCP client that changed no task,
// with the result its client was told; see tasks.Store. It has no turn and
// no conversation, so it is one row of its own.
func (s *Tasks) RecordCall(ctx context.Context, userID string, rec tasks.CallRecord, result json.RawMessage, isError bool) error {
	if rec.Source != tasks.SourceMCP {
		return fmt.Errorf("record a %q call: %w", rec.Source, tasks.ErrInvalid)
	}
	_, err := s.pool.Exec(ctx, stmt.RecordMCPCall, userID, auditName(rec.CallID, "call"), auditName(rec.Tool, "unnamed"), jsonOr(rec.Arguments, "{}"),
		storedResult(rec.Tool, result, isError), isError, time.Since(rec.Started).Milliseconds())
	return translate(err)
}

// scanToolCall reads a tasks.ToolCall from the columns call_id, tool,
// arguments, result, is_error, round, seq, duration_ms, created_at,
// approval_id and approval_live, after extra. A placeholder whose call no
// longer waits (approval_waits) reads as the call it was: one that did not
// run.
func scanToolCall(row pgx.Row, c *tasks.ToolCall, extra ...any) error {
	var (
		ms       int32
		approval *int64
		live     *bool
	)
	dest := append(extra, &c.CallID, &c.Tool, &c.Arguments, &c.Result, &c.IsError, &c.Round, &c.Seq, &ms, &c.CreatedAt, &approval, &live)
	if err := row.Scan(dest...); err != nil {
		return err
	}
	c.Duration = time.Duration(ms) * time.Millisecond
	if approval != nil {
		c.Awaiting = *approval
		if live == nil || !*live {
			c.Result, c.IsError = tasks.ErrorJSON(tasks.NotApprovedMessage), true
		}
	}
	return nil
}

// attachToolCalls reads rows of message_id and a call (scanToolCall) ordered by
// message id, and hands each call to its message in msgs, which is ordered
// by id too.
func attachToolCalls(rows pgx.Rows, msgs []tasks.Message) error {
	i := 0
	for rows.Next() {
		var (
			messageID int64
			c         tasks.ToolCall
		)
		if err := scanToolCall(rows, &c, &messageID); err != nil {
			return err
		}
		for i < len(msgs) && msgs[i].ID < messageID {
			i++
		}
		if i < len(msgs) && msgs[i].ID == messageID {
			msgs[i].ToolCalls = append(msgs[i].ToolCalls, c)
		}
	}
	return rows.Err()
}

// callColumns are a turn's tool calls as one array per column, for unnest.
// What a model wrote is made storable first: a turn must never fail to
// store because of it (see tasks.StorableJSON).
type callColumns struct {
	callIDs, tools, args, results []string
	isErr                         []bool
	rounds, durations, seqs       []int32
}

func newCallColumns(calls []tasks.ToolCall) callColumns {
	n := len(calls)
	c := callColumns{
		callIDs: make([]string, n), tools: make([]string, n), args: make([]string, n), results: make([]string, n),
		isErr: make([]bool, n), rounds: make([]int32, n), durations: make([]int32, n), seqs: make([]int32, n),
	}
	for i, call := range calls {
		c.callIDs[i], c.tools[i], c.isErr[i] = auditName(call.CallID, "call"), auditName(call.Tool, "unnamed"), call.IsError
		c.args[i], c.results[i] = jsonOr(call.Arguments, "{}"), storedResult(call.Tool, call.Result, call.IsError)
		c.rounds[i], c.durations[i], c.seqs[i] = int32(call.Round), int32(call.Duration.Milliseconds()), int32(call.Seq)
	}
	return c
}

// jsonOr returns raw as a call's record keeps it, as jsonb text
// (tasks.StoredJSON: storable and bounded), or def when raw is empty.
func jsonOr(raw []byte, def string) string {
	if len(raw) == 0 {
		return def
	}
	return string(tasks.StoredJSON(raw))
}

// storedResult is what a call's record keeps of the result a call to tool
// answered (tasks.StoredResult: a listing's summary, anything else
// bounded), as jsonb text; "null" when it has none.
func storedResult(tool string, result []byte, isError bool) string {
	switch {
	case len(result) == 0:
		return "null"
	case isError:
		return string(tasks.StoredJSON(result))
	}
	return string(tasks.StoredResult(tool, result))
}

// auditName makes a model-given name or id fit its column: 1 to 255
// characters of storable text.
func auditName(s, missing string) string {
	s = tasks.StorableText(s)
	if s == "" {
		return missing
	}
	if r := []rune(s); len(r) > 255 {
		return string(r[:254]) + "…"
	}
	return s
}
