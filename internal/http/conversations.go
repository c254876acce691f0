package http

import (
	"log/slog"
	"net/http"
	"strconv"

	"github.com/taskchat/taskchat/internal/chat"
	"github.com/taskchat/taskchat/internal/tasks"
)

// Page sizes of GET /conversations and GET /conversations/{id}/messages. A
// page of messages is bounded in bytes too, counting their text and their
// tool calls' arguments and results as stored: a reply whose calls listed
// a thousand long tasks is megabytes, and a page of them was a body of
// 63 MB held in memory whole. It ends early, with a next_cursor, at the
// message that would pass maxMessagePageBytes; its first message is there
// whatever its size, so a client always moves on.
const (
	defaultPageSize        = 20
	maxPageSize            = 100
	defaultMessagePageSize = 100
	maxMessagePageSize     = 500
	maxMessagePageBytes    = 1 << 20
)

// handleConversationsList answers the user's conversations, most recently
// active first, a page at a time.
func handleConversationsList(log *slog.Logger, convs tasks.ConversationStore) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, err := query(r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		limit, err := pageLimit(q.Get("limit"), defaultPageSize, maxPageSize)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		page, err := convs.ListConversations(r.Context(), userFrom(r.Context()), limit, q.Get("cursor"))
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		resp := conversationsResponse{Conversations: make([]conversationJSON, len(page.Items))}
		for i, c := range page.Items {
			resp.Conversations[i] = conversationJSON{ID: c.ID, Title: c.Title, CreatedAt: c.CreatedAt.UTC(), UpdatedAt: c.UpdatedAt.UTC()}
		}
		if page.Next != "" {
			resp.NextCursor = &page.Next
		}
		writeJSON(w, http.StatusOK, resp)
	})
}

// pageLimit reads the limit query parameter: def when absent, 1 to max.
func pageLimit(s string, def, max int) (int, error) {
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > max {
		return 0, tasks.Invalid("limit", "must be an integer from 1 to "+strconv.Itoa(max))
	}
	return n, nil
}

// handleMessagesList answers a conversation's messages, oldest first, each
// assistant message with the tool calls made for it, a page at a time: no
// answer is unbounded, however long the conversation.
func handleMessagesList(log *slog.Logger, convs tasks.ConversationStore) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := conversationID(r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		q, err := query(r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		limit, err := pageLimit(q.Get("limit"), defaultMessagePageSize, maxMessagePageSize)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		page, err := convs.Messages(r.Context(), userFrom(r.Context()), id, limit, maxMessagePageBytes, q.Get("cursor"))
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		resp := messagesResponse{ConversationID: id, Messages: make([]messageJSON, len(page.Items))}
		for i, m := range page.Items {
			resp.Messages[i] = messageJSON{ID: m.ID, Role: m.Role, Content: m.Content, Interrupted: m.Interrupted,
				ToolCalls: storedToolCalls(m.ToolCalls), CreatedAt: m.CreatedAt.UTC()}
		}
		if page.Next != "" {
			resp.NextCursor = &page.Next
		}
		writeJSON(w, http.StatusOK, resp)
	})
}

// handleConversationShow answers one conversation with its summary.
func handleConversationShow(log *slog.Logger, convs tasks.ConversationStore) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := conversationID(r)
		var c tasks.Conversation
		if err == nil {
			c, err = convs.Conversation(r.Context(), userFrom(r.Context()), id)
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		writeJSON(w, http.StatusOK, conversationShowOf(c))
	})
}

// handleConversationCompact compacts a conversation on demand and answers
// it with its summary. No body is read.
func handleConversationCompact(log *slog.Logger, engine *chat.Engine) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := conversationID(r)
		var c tasks.Conversation
		if err == nil {
			c, err = engine.Compact(r.Context(), userFrom(r.Context()), id)
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		writeJSON(w, http.StatusOK, conversationShowOf(c))
	})
}

// handleConversationDelete deletes a conversation with its messages and
// their tool-call audit.
func handleConversationDelete(log *slog.Logger, convs tasks.ConversationStore) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := conversationID(r)
		if err == nil {
			err = convs.DeleteConversation(r.Context(), userFrom(r.Context()), id)
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// conversationID reads {conversation_id} from the path, decoded as
// pathParam explains ("%31" is 1). One that is not a positive integer
// cannot exist, so it is not found.
func conversationID(r *http.Request) (int64, error) {
	s, ok := pathParam(r, "conversation_id")
	id, err := strconv.ParseInt(s, 10, 64)
	if !ok || err != nil || id <= 0 {
		return 0, apiErrf(codeNotFound, "Conversation %q was not found.", s)
	}
	infoFrom(r.Context()).conversationID = id
	return id, nil
}
