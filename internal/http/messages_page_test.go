package http

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/taskchat/taskchat/internal/agent/offline"
	"github.com/taskchat/taskchat/internal/store/storetest"
)

// A page of messages is bounded by bytes, not only by count: a thread of
// long replies, asked for 500 messages a page, comes a megabyte or so at a
// time, each page with a next_cursor, and reading on from it gives the
// whole thread, each message once. (The replies are written straight to
// the table: the service itself keeps a turn's stored calls small, and a
// thread this large takes long to make by talking.)
func TestMessagesPageBoundedByBytes(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	s := mustServerOn(t, pool, offline.New())
	user := storetest.UserID(t)
	r := s.chat(t, user, 0, "hi")
	if r.status != http.StatusOK {
		t.Fatalf("status %d: %.300s", r.status, r.body)
	}
	conv := int64(r.json(t)["conversation_id"].(float64))
	const turns = 8 // the first, and seven of about 250 kB each
	if _, err := pool.Exec(context.Background(), `INSERT INTO messages (conversation_id, user_id, role, content)
		SELECT (SELECT id FROM conversations WHERE user_id = $2 AND number = $1), $2, CASE WHEN g % 2 = 0 THEN 'user' ELSE 'assistant' END,
		       CASE WHEN g % 2 = 0 THEN 'show me all my tasks' ELSE repeat('- [ ] a long task title, listed again ', 6500) END
		FROM generate_series(0, $3) g ORDER BY g`, conv, user, 2*(turns-1)-1); err != nil {
		t.Fatal(err)
	}
	var ids []int64
	cursor, pages := "", 0
	for ; ; pages++ {
		path := fmt.Sprintf("/api/%s/conversations/%d/messages?limit=500", user, conv)
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		r := s.do(t, call{method: "GET", path: path, token: mustToken(t, user)})
		mustMatchSpec(t, "GET", "/api/{user_id}/conversations/{conversation_id}/messages", r.status, r.header, r.body)
		var page messagesResponse
		if err := json.Unmarshal(r.body, &page); err != nil || len(page.Messages) == 0 || pages > 2*turns {
			t.Fatalf("page %d: %d messages, %v: %.300s", pages, len(page.Messages), err, r.body)
		}
		if len(r.body) > maxMessagePageBytes*5/4 {
			t.Errorf("page %d is a body of %d bytes, for a bound of %d", pages, len(r.body), maxMessagePageBytes)
		}
		for _, m := range page.Messages {
			ids = append(ids, m.ID)
		}
		if page.NextCursor == nil {
			break
		}
		cursor = *page.NextCursor
	}
	if pages == 0 {
		t.Errorf("%d turns of listings came in one page", turns)
	}
	if len(ids) != 2*turns {
		t.Errorf("the pages hold %d messages, want %d", len(ids), 2*turns)
	}
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] {
			t.Errorf("message %d follows message %d", ids[i], ids[i-1])
		}
	}
}
