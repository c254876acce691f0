package mcptools

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskchat/taskchat/internal/tasks"
)

// CallMetaKey is the _meta member under which the chat engine, an
// in-process client of these servers, tells a tool which turn a call
// belongs to: a tasks.CallRecord. A task change made for such a call is
// recorded as that call in the same transaction, and is made only while
// the turn holds its conversation. The servers of this package are reached
// only in process; a server exposed to outside clients must not honour it.
const CallMetaKey = "taskchat.dev/call"

// CallMeta is the _meta of a call made for rec. The record travels as one
// JSON string holding its JSON: the SDK decodes _meta into generic maps,
// and a string is the one value it decodes without building any.
func CallMeta(rec tasks.CallRecord) mcp.Meta {
	b, _ := json.Marshal(rec)
	return mcp.Meta{CallMetaKey: string(b)}
}

// callRecord reads the call's record from its _meta; nil when it has none.
// A record that cannot be read fails the call: a change meant to be
// recorded is never made without its record. The record is a chat turn's,
// whatever it says: only the chat engine calls these servers.
func callRecord(_ context.Context, req *mcp.CallToolRequest) (*tasks.CallRecord, error) {
	if req == nil || req.Params == nil {
		return nil, nil
	}
	v, ok := req.Params.Meta[CallMetaKey]
	if !ok {
		return nil, nil
	}
	raw, ok := v.(string)
	var rec tasks.CallRecord
	if !ok || json.Unmarshal([]byte(raw), &rec) != nil || rec.TurnID == 0 || rec.ClaimToken == "" {
		return nil, errBadRecord
	}
	rec.Source, rec.Tool = tasks.SourceChat, req.Params.Name
	return &rec, nil
}

var errBadRecord = errors.New("The call's turn record could not be read; nothing was changed.")
