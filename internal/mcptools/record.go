package mcptools

import (
	"crypto/rand"
	"errors"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskchat/taskchat/internal/tasks"
)

// CallMetaKey is the _meta member under which the chat engine, an
// in-process client of these servers, tells a tool which turn a call
// belongs to: the key of its tasks.CallRecord (see Servers.CallMeta). A
// task change made for such a call is recorded as that call in the same
// transaction, and is made only while the turn holds its conversation.
// The servers of this package are reached only in process; a server
// exposed to outside clients must not honour it.
const CallMetaKey = "taskchat.dev/call"

// callRecords holds the records of in-process calls while their calls run,
// by key. One table belongs to one Servers (NewServers): the engine puts a
// record in it (Servers.CallMeta), the server the call reaches takes it
// out. The record stays in this process, so neither side encodes or
// decodes it (it holds the call's arguments, which the call carries
// already).
type callRecords struct {
	m sync.Map // key -> *callEntry
}

type callEntry struct {
	userID string // whose server may take it
	rec    tasks.CallRecord
}

// put keeps rec for a call to userID's server under a new key, 128 random
// bits, and returns the call's _meta naming it, and forget, to be called
// once the call has returned.
func (r *callRecords) put(userID string, rec tasks.CallRecord) (meta mcp.Meta, forget func()) {
	key := rand.Text()
	r.m.Store(key, &callEntry{userID: userID, rec: rec})
	return mcp.Meta{CallMetaKey: key}, func() { r.m.Delete(key) }
}

// take takes the record of a call to userID's server from its _meta; nil
// when it has none. A record that cannot be found, or is another user's,
// fails the call: a change meant to be recorded is never made without its
// record. A table is nil for a server built on its own (NewServer), which
// no record reaches. The record is a chat turn's, whatever it says: only
// the chat engine calls these servers.
func (r *callRecords) take(userID string, req *mcp.CallToolRequest) (*tasks.CallRecord, error) {
	if req == nil || req.Params == nil {
		return nil, nil
	}
	v, ok := req.Params.Meta[CallMetaKey]
	if !ok {
		return nil, nil
	}
	if r == nil {
		return nil, errBadRecord
	}
	key, _ := v.(string)
	found, ok := r.m.Load(key)
	if !ok || found.(*callEntry).userID != userID || !r.m.CompareAndDelete(key, found) {
		return nil, errBadRecord // another user's call leaves the entry to its owner
	}
	rec := found.(*callEntry).rec
	if rec.TurnID == 0 || rec.ClaimToken == "" {
		return nil, errBadRecord
	}
	rec.Source, rec.Tool = tasks.SourceChat, req.Params.Name
	return &rec, nil
}

//lint:ignore ST1005 the model reads this as a sentence and may repeat it to the user.
var errBadRecord = errors.New("The call's turn record could not be read; nothing was changed.")
