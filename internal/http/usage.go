package http

import (
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/taskchat/taskchat/internal/chat"
	"github.com/taskchat/taskchat/internal/tasks"
)

// The range of GET /usage: the last 30 UTC days by default, at most a
// year and a day, so that no answer is large.
const (
	defaultUsageDays = 30
	maxUsageDays     = 366
)

// handleUsageShow answers the user's token usage per UTC day, from and to
// inclusive, every day of the range, with the total and the daily budget.
func handleUsageShow(log *slog.Logger, engine *chat.Engine) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, err := query(r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		from, to, err := usageRange(q, time.Now())
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		days, err := engine.Usage(r.Context(), userFrom(r.Context()), from, to)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		writeJSON(w, http.StatusOK, usageResponseOf(from, to, days, engine.DailyTokenBudget()))
	})
}

// usageRange reads from and to (YYYY-MM-DD, UTC): to defaults to today,
// from to 29 days before to.
func usageRange(q url.Values, now time.Time) (from, to time.Time, err error) {
	y, m, d := now.UTC().Date()
	to = time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	if s := q.Get("to"); s != "" {
		if to, err = parseDay("to", s); err != nil {
			return from, to, err
		}
	}
	from = to.AddDate(0, 0, 1-defaultUsageDays)
	if s := q.Get("from"); s != "" {
		if from, err = parseDay("from", s); err != nil {
			return from, to, err
		}
	}
	switch {
	case from.After(to):
		return from, to, tasks.Invalid("from", "must not be after to")
	case to.Sub(from) >= maxUsageDays*24*time.Hour:
		return from, to, tasks.Invalid("to", "must be less than 366 days after from")
	}
	return from, to, nil
}

func parseDay(name, s string) (time.Time, error) {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return t, tasks.Invalid(name, "must be a date such as 2026-11-23 (YYYY-MM-DD, a UTC day)")
	}
	return t, nil
}

func usageResponseOf(from, to time.Time, days []tasks.DailyUsage, budget int64) usageResponse {
	resp := usageResponse{From: from.Format(time.DateOnly), To: to.Format(time.DateOnly), Days: make([]usageDayJSON, len(days))}
	if budget > 0 {
		resp.DailyTokenBudget = &budget
	}
	for i, d := range days {
		u := usageJSONOf(d.Usage, d.Turns)
		resp.Days[i] = usageDayJSON{Date: d.Day.Format(time.DateOnly), usageJSON: u}
		resp.Total.InputTokens += u.InputTokens
		resp.Total.OutputTokens += u.OutputTokens
		resp.Total.TotalTokens += u.TotalTokens
		resp.Total.Turns += u.Turns
	}
	return resp
}

func usageJSONOf(u tasks.Usage, turns int64) usageJSON {
	return usageJSON{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, TotalTokens: u.Total(), Turns: turns}
}
