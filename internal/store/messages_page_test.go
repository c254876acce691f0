package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/taskchat/taskchat/internal/store"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/tasks"
)

// A long conversation is read a page at a time, oldest first, each reply
// with its own tool calls, until a page says there is no next one.
func TestMessagesPaginates(t *testing.T) {
	t.Parallel()
	turns, s, user := newTurns(t), newConversations(t), storetest.UserID(t)
	ctx := context.Background()
	first := mustStart(t, turns, user, 0, "message 0")
	mustFinish(t, turns, first, "reply 0", call("call_0", "list_tasks", `{}`, `{"tasks":[]}`))
	convID := first.Conversation.ID
	for i := 1; i < 3; i++ {
		turn := mustStart(t, turns, user, convID, fmt.Sprintf("message %d", i))
		mustFinish(t, turns, turn, fmt.Sprintf("reply %d", i), call(fmt.Sprintf("call_%d", i), "list_tasks", `{}`, `{"tasks":[]}`))
	}
	all := mustMessages(t, s, user, convID)

	for _, limit := range []int{1, 2, 4, 6, 7} {
		t.Run(fmt.Sprintf("%d a page", limit), func(t *testing.T) {
			var got []tasks.Message
			cursor := ""
			for pages := 0; ; pages++ {
				page, err := s.Messages(ctx, user, convID, limit, 1<<30, cursor)
				if err != nil || pages > len(all) {
					t.Fatalf("page %d: %v", pages, err)
				}
				if len(page.Items) > limit {
					t.Fatalf("page %d holds %d messages, limit %d", pages, len(page.Items), limit)
				}
				got = append(got, page.Items...)
				if cursor = page.Next; cursor == "" {
					break
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(all) {
				t.Fatalf("pages = %+v\nwant the whole thread %+v", got, all)
			}
		})
	}
	t.Run("replies keep their tool calls", func(t *testing.T) {
		if roles(all) != "user assistant user assistant user assistant" {
			t.Fatalf("thread = %s", roles(all))
		}
		for i := 1; i < len(all); i += 2 {
			if len(all[i].ToolCalls) != 1 || all[i].ToolCalls[0].CallID != fmt.Sprintf("call_%d", i/2) {
				t.Errorf("reply %d has calls %+v", i, all[i].ToolCalls)
			}
		}
	})
	t.Run("the last page has no next", func(t *testing.T) {
		page, err := s.Messages(ctx, user, convID, len(all), 1<<30, "")
		if err != nil || len(page.Items) != len(all) || page.Next != "" {
			t.Fatalf("a page holding everything: %d messages, next %q, %v", len(page.Items), page.Next, err)
		}
	})
	t.Run("a cursor that is not a message cursor", func(t *testing.T) {
		convCursor := mustConversationCursor(t, s, user)
		for _, c := range []string{"nope", convCursor, "bTA", "bS0x", "bTAx"} { // m0, m-1, m01
			if _, err := s.Messages(ctx, user, convID, 2, 1<<30, c); !errors.Is(err, tasks.ErrInvalid) {
				t.Errorf("cursor %q: %v, want invalid", c, err)
			}
		}
	})
}

// mustConversationCursor returns a real next_cursor of user's conversations.
func mustConversationCursor(tb testing.TB, s *store.Conversations, user string) string {
	tb.Helper()
	turns := newTurns(tb)
	mustFinish(tb, turns, mustStart(tb, turns, user, 0, "another conversation"), "ok")
	page, err := s.ListConversations(context.Background(), user, 1, "")
	if err != nil || page.Next == "" {
		tb.Fatalf("no next cursor: %+v, %v", page, err)
	}
	return page.Next
}

// A page is bounded by bytes as well as by count: it ends before the
// message that would take its text and tool-call JSON past the bound, and
// a message larger than the bound is a page of its own, so that reading on
// from next_cursor always moves on, through the whole thread.
func TestMessagesPagesByBytes(t *testing.T) {
	t.Parallel()
	turns, s, user := newTurns(t), newConversations(t), storetest.UserID(t)
	ctx := context.Background()
	big := `{"tasks":[{"title":"` + strings.Repeat("x", 3000) + `"}]}`
	var convID int64
	for i := range 6 {
		turn := mustStart(t, turns, user, convID, fmt.Sprintf("message %d", i))
		result := `{"tasks":[]}`
		if i%3 == 1 {
			result = big
		}
		mustFinish(t, turns, turn, fmt.Sprintf("reply %d", i), call(fmt.Sprintf("call_%d", i), "list_tasks", `{}`, result))
		convID = turn.Conversation.ID
	}
	all := mustMessages(t, s, user, convID)
	size := func(m tasks.Message) int {
		n := len(m.Content)
		for _, c := range m.ToolCalls {
			n += len(c.Arguments) + len(c.Result)
		}
		return n
	}
	const bound = 1000
	var got []tasks.Message
	cursor := ""
	for pages := 0; ; pages++ {
		page, err := s.Messages(ctx, user, convID, 500, bound, cursor)
		if err != nil || pages > len(all) || len(page.Items) == 0 {
			t.Fatalf("page %d: %d messages, %v", pages, len(page.Items), err)
		}
		total := 0
		for _, m := range page.Items {
			total += size(m)
		}
		if total > bound && len(page.Items) > 1 {
			t.Errorf("page %d holds %d messages of %d bytes, past the bound of %d", pages, len(page.Items), total, bound)
		}
		got = append(got, page.Items...)
		if cursor = page.Next; cursor == "" {
			break
		}
		if next := all[len(got)]; total+size(next) <= bound {
			t.Errorf("page %d ends at %d bytes, before message %d of %d bytes that fits", pages, total, next.ID, size(next))
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(all) {
		t.Fatalf("pages = %+v\nwant the whole thread %+v", got, all)
	}
}
