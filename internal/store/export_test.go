package store

import (
	"reflect"

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
	ListTasksPage, _               = listTasksPage(tasks.StatusAll, nil)
	ListTasksPageByStatus, _       = listTasksPage(tasks.StatusPending, nil)
	ListTasksPageSearch, _         = listTasksPage(tasks.StatusAll, []string{"word"})
	ListTasksPageSearchByStatus, _ = listTasksPage(tasks.StatusPending, []string{"word"})
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
