package http

import (
	"log/slog"
	"net/http"

	"github.com/taskchat/taskchat/internal/tasks"
)

// defaultTaskPageSize is how many tasks a page of GET /tasks holds when
// the client does not say. The task list is shown whole, in one panel, so
// a page should hold most users' whole list: 200 tasks is about 30 KB of
// JSON as tasks usually are (a short title, no description). The most a
// client may ask for is tasks.MaxTaskPage.
const defaultTaskPageSize = 200

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
		limit, err := pageLimit(q.Get("limit"), defaultTaskPageSize, tasks.MaxTaskPage)
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
