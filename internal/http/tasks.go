package http

import (
	"log/slog"
	"net/http"

	"github.com/taskchat/taskchat/internal/tasks"
)

// handleTasksList answers the user's tasks, filtered by ?status=.
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
		list, err := svc.List(r.Context(), userFrom(r.Context()), status)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		resp := tasksResponse{Tasks: make([]taskJSON, len(list))}
		for i, t := range list {
			resp.Tasks[i] = taskJSON{ID: t.ID, Title: t.Title, Description: t.Description, Completed: t.Completed, CreatedAt: t.CreatedAt.UTC(), UpdatedAt: t.UpdatedAt.UTC()}
		}
		writeJSON(w, http.StatusOK, resp)
	})
}
