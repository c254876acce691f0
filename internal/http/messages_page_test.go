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
// long task listings, asked for 500 messages a page, comes a megabyte or so
// at a time, each page with a next_cursor, and reading on from it gives
// the whole thread, each message once.
func TestMessagesPageBoundedByBytes(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	s := mustServerOn(t, pool, offline.New())
	user := storetest.UserID(t)
	if _, err := pool.Exec(context.Background(), `INSERT INTO tasks (user_id, title, description)
		SELECT $1, 'Task ' || g || repeat(' long title', 17), repeat('a long description ', 52) FROM generate_series(1, 100) g`, user); err != nil {
		t.Fatal(err)
	}
	var conv int64
	const turns = 8 // each about 250 kB: the reply lists the tasks, and so does its call's result
	for range turns {
		r := s.chat(t, user, conv, "show me all my tasks")
		if r.status != http.StatusOK {
			t.Fatalf("status %d: %.300s", r.status, r.body)
		}
		conv = int64(r.json(t)["conversation_id"].(float64))
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
