package store

import (
	"reflect"
	"time"

	"github.com/taskchat/taskchat/internal/tasks"
)

// The statements whose plans the tests of package store_test read.
var (
	HistoryWindow    = stmt.HistoryWindow
	HistoryMessages  = stmt.HistoryMessages
	HistoryToolCalls = stmt.HistoryToolCalls

	ListConversationsFirst = stmt.ListConversations
	ListConversationsAfter = stmt.ListConversationsAfter
)

// The task list's statements, as listTasksPage picks them: of all the
// tasks, and of the pending or the completed ones, without a query and
// with one.
var (
	ListTasksPage, _               = listTasksPage(tasks.Filter{Status: tasks.StatusAll}, nil, time.Time{})
	ListTasksPageByStatus, _       = listTasksPage(tasks.Filter{Status: tasks.StatusPending}, nil, time.Time{})
	ListTasksPageSearch, _         = listTasksPage(tasks.Filter{Status: tasks.StatusAll}, []string{"word"}, time.Time{})
	ListTasksPageSearchByStatus, _ = listTasksPage(tasks.Filter{Status: tasks.StatusPending}, []string{"word"}, time.Time{})
)

// The task list's statements of one priority, and in due-date order (for
// a range, overdue, or a priority and a query too: one statement).
var (
	ListTasksOfPriority, _ = listTasksPage(tasks.Filter{Status: tasks.StatusAll, Priority: tasks.PriorityHigh}, nil, time.Time{})
	ListTasksByDue, _      = listTasksPage(tasks.Filter{Status: tasks.StatusAll, ByDue: true}, nil, time.Time{})
	ListTasksByDueOpen, _  = listTasksPage(tasks.Filter{Status: tasks.StatusPending, ByDue: true}, nil, time.Time{})
)

// PlanFromIndexes is planFromIndexes, for the plan tests.
var PlanFromIndexes = planFromIndexes

// Statements are the store's statements by name.
func Statements() map[string]string {
	v := reflect.ValueOf(stmt)
	out := make(map[string]string, v.NumField())
	for i := range v.NumField() {
		out[v.Type().Field(i).Name] = v.Field(i).String()
	}
	return out
}

// LoadStatements is loadStatements: it fills the string fields of the
// struct into points to from the sql/*.sql files of files.
var LoadStatements = loadStatements
