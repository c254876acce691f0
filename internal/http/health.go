package http

import (
	"context"
	"log/slog"
	"net/http"
	"time"
)

// handleHealthz answers while the process is up.
func handleHealthz() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
}

// handleReadyz answers 200 when the database answers, 503 when it does not,
// so a load balancer sends no traffic to a replica that cannot serve it.
func handleReadyz(log *slog.Logger, db Pinger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := db.Ping(ctx); err != nil {
			log.WarnContext(ctx, "not ready: database does not answer", "err", err)
			writeProblem(w, apiErr(codeUnavailable, "The database does not answer."))
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	})
}
