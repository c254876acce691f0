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
// belongs to: the key of its tasks.CallRecord (see CallMeta). A task
// change made for such a call is recorded as that call in the same
// transaction, and is made only while the turn holds its conversation.
// The servers of this package are reached only in process; a server
// exposed to outside clients must not honour it.
const CallMetaKey = "taskchat.dev/call"

// CallMeta is the _meta of a call made for rec on userID's server, and
// forget, to be called once the call has returned. The record stays in
// this process, in a table the _meta names one entry of: in-process
// servers read it from there, so neither side encodes or decodes it (it
// holds the call's arguments, which the call carries already). The entry's
// key is 128 random bits, it is taken by userID's server only, and once: a
// call whose entry is gone (forgotten, taken, or never there) or another
// user's fails as a call with an unreadable record does: nothing is
// changed.
func CallMeta(userID string, rec tasks.CallRecord) (meta mcp.Meta, forget func()) {
	key := rand.Text()
	callRecords.Store(key, &callEntry{userID: userID, rec: rec})
	return mcp.Meta{CallMetaKey: key}, func() { callRecords.Delete(key) }
}

// callRecords holds the records of in-process calls, by key, while their
// calls run.
var callRecords sync.Map // key -> *callEntry

type callEntry struct {
	userID string // whose server may take it
	rec    tasks.CallRecord
}

// callRecord takes the record of a call to userID's server from its
// _meta; nil when it has none. A record that cannot be found, or is
// another user's, fails the call: a change meant to be recorded is never
// made without its record. The record is a chat turn's, whatever it says:
// only the chat engine calls these servers.
func callRecord(userID string, req *mcp.CallToolRequest) (*tasks.CallRecord, error) {
	if req == nil || req.Params == nil {
		return nil, nil
	}
	v, ok := req.Params.Meta[CallMetaKey]
	if !ok {
		return nil, nil
	}
	key, _ := v.(string)
	found, ok := callRecords.Load(key)
	if !ok || found.(*callEntry).userID != userID || !callRecords.CompareAndDelete(key, found) {
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
