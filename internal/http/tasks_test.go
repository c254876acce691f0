package http

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/taskchat/taskchat/internal/agent/offline"
	"github.com/taskchat/taskchat/internal/store/storetest"
)

// taskPage is what a test reads of a page of tasks.
type taskPage struct {
	Tasks []struct {
		ID        int64 `json:"id"`
		Completed bool  `json:"completed"`
	} `json:"tasks"`
	NextCursor *string `json:"next_cursor"`
}

// A task list longer than a page is answered a page at a time, in number
// order, following next_cursor (with the same status) until it is null:
// every task of the listing once, none missing, for each status and page
// size. Every answer is checked against the contract.
func TestTasksArePaginated(t *testing.T) {
	t.Parallel()
	const route = "/api/{user_id}/tasks"
	pool := storetest.Pool(t)
	s := mustServerOn(t, pool, offline.New())
	user, other := storetest.UserID(t), storetest.UserID(t)
	tok := mustToken(t, user)
	// 1,100 tasks, every third completed: more than a page of the most a
	// page may hold, and each status more than a default page. Numbered by
	// the database, as tasks are; one deleted; another user's between them.
	const n = 1100
	if _, err := pool.Exec(context.Background(), `
		INSERT INTO tasks (user_id, title, completed)
		SELECT u, 'task ' || g, g % 3 = 0 FROM generate_series(1, $3) g, unnest(array[$1, $2]) u ORDER BY g, u`,
		user, other, n); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(context.Background(), `DELETE FROM tasks WHERE user_id = $1 AND number = 500`, user); err != nil {
		t.Fatal(err)
	}
	want := map[string][]int64{}
	for i := int64(1); i <= n; i++ {
		if i == 500 {
			continue
		}
		want["all"] = append(want["all"], i)
		if i%3 == 0 {
			want["completed"] = append(want["completed"], i)
		} else {
			want["pending"] = append(want["pending"], i)
		}
	}

	get := func(t *testing.T, query string) taskPage {
		t.Helper()
		r := s.do(t, call{method: "GET", path: "/api/" + url.PathEscape(user) + "/tasks" + query, token: tok})
		mustMatchSpec(t, "GET", route, r.status, r.header, r.body)
		if r.status != 200 {
			t.Fatalf("GET %s = %d %s", query, r.status, r.body)
		}
		var p taskPage
		if err := json.Unmarshal(r.body, &p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, status := range []string{"all", "pending", "completed", ""} {
		wantIDs := want[status]
		if status == "" {
			wantIDs = want["all"]
		}
		for _, limit := range []int{0, 97, 1000} { // 0: no limit given, the default of 200
			t.Run(fmt.Sprintf("status=%s limit=%d", status, limit), func(t *testing.T) {
				t.Parallel()
				q := url.Values{}
				if status != "" {
					q.Set("status", status)
				}
				size := defaultTaskPageSize
				if limit != 0 {
					q.Set("limit", fmt.Sprint(limit))
					size = limit
				}
				var got []int64
				pages := 0
				for {
					pages++
					p := get(t, "?"+q.Encode())
					if len(p.Tasks) > size || pages > 100 {
						t.Fatalf("page %d holds %d tasks, more than %d", pages, len(p.Tasks), size)
					}
					for _, task := range p.Tasks {
						if task.Completed != (task.ID%3 == 0) || (status == "pending" && task.Completed) || (status == "completed" && !task.Completed) {
							t.Fatalf("page %d has task %d (completed %v) in a %q listing", pages, task.ID, task.Completed, status)
						}
						got = append(got, task.ID)
					}
					if p.NextCursor == nil {
						break
					}
					if len(p.Tasks) != size {
						t.Fatalf("page %d holds %d tasks and is not the last", pages, len(p.Tasks))
					}
					q.Set("cursor", *p.NextCursor)
				}
				if !slices.Equal(got, wantIDs) {
					t.Fatalf("%d pages gave %d tasks, want the %d tasks %d…%d in order, each once",
						pages, len(got), len(wantIDs), wantIDs[0], wantIDs[len(wantIDs)-1])
				}
				if wantPages := (len(wantIDs) + size - 1) / size; pages != wantPages {
					t.Fatalf("%d pages, want %d", pages, wantPages)
				}
			})
		}
	}

	t.Run("a short list is one page", func(t *testing.T) {
		t.Parallel()
		r := s.do(t, call{method: "GET", path: "/api/" + url.PathEscape(other) + "/tasks?status=completed&limit=1000", token: mustToken(t, other)})
		mustMatchSpec(t, "GET", route, r.status, r.header, r.body)
		if !strings.Contains(string(r.body), `"next_cursor":null`) || strings.Count(string(r.body), `"id":`) != n/3 {
			t.Fatalf("GET = %d %s…", r.status, r.body[:min(len(r.body), 200)])
		}
	})
}

// ?query= lists the tasks whose title or description holds each of its words,
// in any case, with status, a page at a time; a blank query lists them all.
func TestTasksListSearches(t *testing.T) {
	t.Parallel()
	const route = "/api/{user_id}/tasks"
	pool := storetest.Pool(t)
	s := mustServerOn(t, pool, offline.New())
	user := storetest.UserID(t)
	tok := mustToken(t, user)
	if _, err := pool.Exec(context.Background(), `
		INSERT INTO tasks (user_id, title, description, completed)
		SELECT $1, CASE WHEN g % 50 = 0 THEN 'Call the Dentist' ELSE 'task ' || g END,
		       CASE WHEN g % 75 = 0 THEN 'about the dentist bill' ELSE '' END, g % 100 = 0
		FROM generate_series(1, 400) g ORDER BY g`, user); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string][]int64{
		"query=dentist&limit=3":                     {50, 75, 100, 150, 200, 225, 250, 300, 350, 375, 400},
		"query=DENTIST+call&limit=3":                {50, 100, 150, 200, 250, 300, 350, 400},
		"query=bill+dentist&status=pending&limit=3": {75, 150, 225, 375},
		"query=dentist&status=completed&limit=3":    {100, 200, 300, 400},
		"query=plumber&limit=3":                     nil,
		"query=%20%20&limit=1000":                   nil, // every task: checked by count below
	} {
		t.Run(q, func(t *testing.T) {
			var got []int64
			cursor := ""
			for pages := 0; pages < 20; pages++ {
				r := s.do(t, call{method: "GET", path: "/api/" + url.PathEscape(user) + "/tasks?" + q + cursor, token: tok})
				mustMatchSpec(t, "GET", route, r.status, r.header, r.body)
				var p taskPage
				if r.status != 200 || json.Unmarshal(r.body, &p) != nil {
					t.Fatalf("GET ?%s = %d %s", q, r.status, r.body)
				}
				for _, task := range p.Tasks {
					got = append(got, task.ID)
				}
				if p.NextCursor == nil {
					break
				}
				cursor = "&cursor=" + url.QueryEscape(*p.NextCursor)
			}
			if strings.HasPrefix(q, "query=%20") {
				if len(got) != 400 {
					t.Fatalf("a blank query listed %d tasks, want all 400", len(got))
				}
				return
			}
			if !slices.Equal(got, want) {
				t.Fatalf("GET ?%s, following next_cursor = %v, want %v", q, got, want)
			}
		})
	}
}

// A limit out of range or a cursor this service did not write for a task
// list is the client's mistake, 400 naming the field, never a 500.
func TestTasksListRefusesBadPages(t *testing.T) {
	t.Parallel()
	const route = "/api/{user_id}/tasks"
	s := mustServer(t, offline.New())
	user := storetest.UserID(t)
	tok := mustToken(t, user)
	for q, field := range map[string]string{
		"limit=0": "limit", "limit=1001": "limit", "limit=ten": "limit", "limit=-1": "limit", "limit=1.5": "limit",
		"status=pending&limit=0":               "limit",
		"cursor=nope":                          "cursor",
		"cursor=dDA":                           "cursor", // "t0"
		"cursor=dDE%3D":                        "cursor", // "t1" padded
		"cursor=bTE":                           "cursor", // a message cursor, "m1"
		"cursor=MTcwMDAwMDAwMDAwMDAwMC4x":      "cursor", // a conversation cursor
		"status=completed&cursor=LTMwMDAwMC4x": "cursor",
		"status=overdue&cursor=dDE":            "status",
		"query=" + strings.Repeat("x", 201):    "query",
		"query=milk%00":                        "query",
	} {
		t.Run(q, func(t *testing.T) {
			r := s.do(t, call{method: "GET", path: "/api/" + url.PathEscape(user) + "/tasks?" + q, token: tok})
			mustProblem(t, r, 400, "invalid_request")
			mustMatchSpec(t, "GET", route, r.status, r.header, r.body)
			errs, _ := r.json(t)["errors"].([]any)
			if len(errs) != 1 || errs[0].(map[string]any)["field"] != field {
				t.Fatalf("errors = %v, want one about %s", errs, field)
			}
		})
	}
	if strings.Contains(s.logs.String(), `"level":"ERROR"`) {
		t.Fatalf("a bad page was logged as an error:\n%s", s.logs)
	}
}
