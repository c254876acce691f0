package http

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/taskchat/taskchat/internal/agent/offline"
	"github.com/taskchat/taskchat/internal/store/storetest"
)

// TestSpecMatchesTheApprovals checks every answer of the approvals routes,
// and of the chat turns that ask for approvals, against the contract: a
// turn whose call waits, as JSON and as a stream; the list and one
// approval; a decision while another of its turn waits (202), the one that
// continues the turn, as a stream and as JSON, and its replay; and the
// refusals (400, 404, 409, 413, 415).
func TestSpecMatchesTheApprovals(t *testing.T) {
	t.Parallel()
	const (
		chatRoute = "/api/{user_id}/chat"
		list      = "/api/{user_id}/approvals"
		one       = "/api/{user_id}/approvals/{approval_id}"
	)
	s := mustServer(t, offline.New(), func(c *serverConfig) {
		c.chat.ApprovalTools, c.chat.ApprovalTTL = []string{"delete_task"}, time.Hour
	})
	user := storetest.UserID(t)
	tok := mustToken(t, user)
	api := "/api/" + user
	stream := http.Header{"Accept": {"text/event-stream"}}
	check := func(route string, c call, status int) reply {
		t.Helper()
		c.token = tok
		r := s.do(t, c)
		if r.status != status {
			t.Fatalf("%s %s = %d %s, want %d", c.method, c.path, r.status, r.body, status)
		}
		mustMatchSpec(t, c.method, route, r.status, r.header, r.body)
		return r
	}
	decide := func(id int64, body string, h http.Header) call {
		return call{method: "POST", path: fmt.Sprintf("%s/approvals/%d", api, id), body: body, header: h}
	}

	// send sends a JSON chat turn and returns its conversation and the ids
	// of the approvals it asked for.
	send := func(convID int64, msg string) (int64, []int64) {
		t.Helper()
		r := check(chatRoute, call{method: "POST", path: api + "/chat", body: chatBody(convID, msg)}, 200)
		var out struct {
			ConversationID int64 `json:"conversation_id"`
			Approvals      []struct {
				ID int64 `json:"id"`
			} `json:"approvals"`
		}
		if err := json.Unmarshal(r.body, &out); err != nil {
			t.Fatal(err)
		}
		ids := make([]int64, len(out.Approvals))
		for i, a := range out.Approvals {
			ids[i] = a.ID
		}
		return out.ConversationID, ids
	}

	conv, _ := send(0, "Add a task to buy milk and add a task to walk")
	_, asked := send(conv, "Delete task 1")
	if len(asked) != 1 {
		t.Fatalf("a turn whose call waits asked for %d approvals, want 1", len(asked))
	}
	first := asked[0]
	r := check(chatRoute, call{method: "POST", path: api + "/chat", body: chatBody(0, "Delete task 2"), header: stream}, 200)
	if !strings.Contains(string(r.body), "event: approval_required") {
		t.Fatalf("the stream of a turn whose call waits has no approval_required event:\n%s", r.body)
	}

	check(list, call{method: "GET", path: api + "/approvals?limit=1"}, 200)
	check(list, call{method: "GET", path: api + "/approvals?cursor=nope"}, 400)
	check(one, call{method: "GET", path: fmt.Sprintf("%s/approvals/%d", api, first)}, 200)
	check(one, call{method: "GET", path: api + "/approvals/999999999"}, 404)

	check(one, decide(first, `{}`, nil), 400)
	check(one, decide(first, `{"approved":true,"reason":"`+strings.Repeat("x", 17<<10)+`"}`, nil), 413)
	check(one, decide(first, `{"approved":true}`, http.Header{"Content-Type": {"text/plain"}}), 415)
	check(one, decide(999999999, `{"approved":true}`, nil), 404)
	check(one, decide(first, `{"approved":true}`, stream), 200)
	if r := check(one, decide(first, `{"approved":true}`, nil), 200); r.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("the same decision again is not marked replayed: %v", r.header)
	}
	check(one, decide(first, `{"approved":false}`, nil), 409)

	// Two calls of one turn wait: the first decision answers what still
	// waits, the second continues the turn.
	conv, _ = send(0, "Add a task to call mom and add a task to pay rent")
	if _, asked = send(conv, "Delete task 3 and delete task 4"); len(asked) != 2 {
		t.Fatalf("a turn whose two calls wait asked for %d approvals, want 2", len(asked))
	}
	check(one, decide(asked[0], `{"approved":false,"reason":"Not yet"}`, nil), 202)
	check(one, decide(asked[1], `{"approved":true}`, nil), 200)
}
