package http

import (
	"log/slog"
	"net/http"

	"github.com/taskchat/taskchat/internal/tasks"
)

// Page sizes of GET /tasks. The task list is shown whole, in one panel, so
// a page should hold most users' whole list: 200 tasks is about 30 KB of
// JSON as tasks usually are (a short title, no description), 270 KB at the
// 1.35 KB a task of the review's 27 MB list of 20,000 took. A client that
// reads a long list whole (the chat page asks for the maximum) takes 1,000
// a request: 20 requests for 20,000 tasks rather than 100, each answer
// about 1.4 MB at that size and 7.5 MB at worst (a 200-character title and
// a 1,000-character description, every character escaped as \uXXXX) —
// the same order as the most a page of messages holds.
const (
	defaultTaskPageSize = 200
	maxTaskPageSize     = 1000
)

// handleTasksList answers the user's tasks in number order, filtered by
// ?status= and searched by the words of ?query=, a page at a time: no answer
// is unbounded, however many tasks the user has.
func handleTasksList(log *slog.Logger, svc *tasks.Service) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, err := query(r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		status, err := tasks.ParseStatus(q.Get("status"))
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		limit, err := pageLimit(q.Get("limit"), defaultTaskPageSize, maxTaskPageSize)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		f := tasks.Filter{Status: status, Query: q.Get("query")}
		page, err := svc.ListPage(r.Context(), userFrom(r.Context()), f, limit, q.Get("cursor"))
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		resp := tasksResponse{Tasks: make([]taskJSON, len(page.Items))}
		for i, t := range page.Items {
			resp.Tasks[i] = taskJSON{ID: t.ID, Title: t.Title, Description: t.Description, Completed: t.Completed, CreatedAt: t.CreatedAt.UTC(), UpdatedAt: t.UpdatedAt.UTC()}
		}
		if page.Next != "" {
			resp.NextCursor = &page.Next
		}
		writeJSON(w, http.StatusOK, resp)
	})
}
