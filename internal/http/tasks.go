package http

import (
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/taskchat/taskchat/internal/tasks"
)

// defaultTaskPageSize is how many tasks a page of GET /tasks holds when
// the client does not say. The task list is shown whole, in one panel, so
// a page should hold most users' whole list: 200 tasks is about 30 KB of
// JSON as tasks usually are (a short title, no description). The most a
// client may ask for is tasks.MaxTaskPage.
const defaultTaskPageSize = 200

// handleTasksList answers the user's tasks in number order (or by due
// date), filtered by ?status=, ?priority=, ?due_after=, ?due_before= and
// ?overdue=, and searched by the words of ?query=, a page at a time: no
// answer is unbounded, however many tasks the user has.
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
		f, err := taskFilter(r, svc, q, status)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		page, err := svc.ListPage(r.Context(), userFrom(r.Context()), f, limit, q.Get("cursor"))
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		now := time.Now()
		resp := tasksResponse{Tasks: make([]taskJSON, len(page.Items))}
		for i, t := range page.Items {
			resp.Tasks[i] = taskJSONOf(t, now)
		}
		if page.Next != "" {
			resp.NextCursor = &page.Next
		}
		writeJSON(w, http.StatusOK, resp)
	})
}

// taskFilter reads the listing's filters from q: due-date bounds in the
// user's time zone (see tasks.ParseDueRange).
func taskFilter(r *http.Request, svc *tasks.Service, q url.Values, status tasks.Status) (tasks.Filter, error) {
	f := tasks.Filter{Status: status, Query: q.Get("query"), Priority: tasks.Priority(strings.TrimSpace(q.Get("priority")))}
	switch q.Get("sort") {
	case "", "number":
	case "due":
		f.ByDue = true
	default:
		return tasks.Filter{}, tasks.Invalid("sort", `must be "number" or "due"`)
	}
	switch q.Get("overdue") {
	case "", "false":
	case "true":
		f.Overdue = true
	default:
		return tasks.Filter{}, tasks.Invalid("overdue", `must be "true" or "false"`)
	}
	var err error
	f.DueFrom, f.DueTo, err = svc.DueRange(r.Context(), userFrom(r.Context()), q.Get("due_after"), q.Get("due_before"))
	return f, err
}

// taskJSONOf is t as the API shows it, read at now.
func taskJSONOf(t tasks.Task, now time.Time) taskJSON {
	j := taskJSON{ID: t.ID, Title: t.Title, Description: t.Description, Completed: t.Completed,
		Priority: nullableString(string(t.Priority)), CreatedAt: t.CreatedAt.UTC(), UpdatedAt: t.UpdatedAt.UTC()}
	if t.Due != nil {
		due := t.Due.String()
		j.Due, j.Overdue = &due, !t.Completed && t.Due.Overdue(now)
	}
	return j
}

func nullableString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// maxSettingsBody bounds a PUT /settings body: a time zone name and room.
const maxSettingsBody = 4 << 10

// handleSettingsShow answers the user's settings.
func handleSettingsShow(log *slog.Logger, svc *tasks.Service) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		set, err := svc.Settings(r.Context(), userFrom(r.Context()))
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		writeJSON(w, http.StatusOK, settingsJSONOf(set))
	})
}

// handleSettingsUpdate sets the user's settings: {"time_zone"}.
func handleSettingsUpdate(log *slog.Logger, svc *tasks.Service) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			TimeZone *string `json:"time_zone"`
		}
		if err := decodeJSON(w, r, maxSettingsBody, &body); err != nil {
			writeError(w, r, log, err)
			return
		}
		if body.TimeZone == nil {
			writeError(w, r, log, tasks.Invalid("time_zone", "is required: an IANA time zone name such as Europe/Paris"))
			return
		}
		set, err := svc.SaveSettings(r.Context(), userFrom(r.Context()), tasks.Settings{TimeZone: *body.TimeZone})
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		writeJSON(w, http.StatusOK, settingsJSONOf(set))
	})
}

type settingsJSON struct {
	TimeZone  string     `json:"time_zone"`
	UpdatedAt *time.Time `json:"updated_at"` // null until the user sets them
}

func settingsJSONOf(s tasks.Settings) settingsJSON {
	j := settingsJSON{TimeZone: s.TimeZone}
	if !s.UpdatedAt.IsZero() {
		at := s.UpdatedAt.UTC()
		j.UpdatedAt = &at
	}
	return j
}
