package mcptools

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskchat/taskchat/internal/tasks"
)

// CallMetaKey is the _meta member under which the chat engine, an
// in-process client of these servers, tells a tool which turn a call
// belongs to: the key of its tasks.CallRecord (see CallMeta). A task change made for such a call is
// recorded as that call in the same transaction, and is made only while
// the turn holds its conversation. The servers of this package are reached
// only in process; a server exposed to outside clients must not honour it.
const CallMetaKey = "taskchat.dev/call"

// CallMeta is the _meta of a call made for rec, and forget, to be called
// once the call has returned. The record stays in this process, in a table
// the _meta names one entry of: in-process servers read it from there, so
// neither side encodes or decodes it (it holds the call's arguments, which
// the call carries already). A call whose entry is gone, forgotten before
// its server read it, fails as a call with an unreadable record does:
// nothing is changed.
func CallMeta(rec tasks.CallRecord) (meta mcp.Meta, forget func()) {
	key := strconv.FormatUint(callKeys.Add(1), 36)
	callRecords.Store(key, &rec)
	return mcp.Meta{CallMetaKey: key}, func() { callRecords.Delete(key) }
}

var (
	callKeys    atomic.Uint64
	callRecords sync.Map // key -> *tasks.CallRecord, while its call runs
)

// callRecord reads the call's record from its _meta; nil when it has none.
// A record that cannot be found fails the call: a change meant to be
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
	key, _ := v.(string)
	found, ok := callRecords.Load(key)
	if !ok {
		return nil, errBadRecord
	}
	rec := *found.(*tasks.CallRecord)
	if rec.TurnID == 0 || rec.ClaimToken == "" {
		return nil, errBadRecord
	}
	rec.Source, rec.Tool = tasks.SourceChat, req.Params.Name
	return &rec, nil
}

var errBadRecord = errors.New("The call's turn record could not be read; nothing was changed.")
