package store

import "github.com/taskchat/taskchat/internal/tasks"

// What the tests of package store_test read of the store's insides.
const (
	HistoryMessages  = historyMessages
	HistoryToolCalls = historyToolCalls

	ListConversationsFirst = listConversations
	ListConversationsAfter = listConversationsAfter
)

// The task list's statements, as listTasksPage builds them: of all the
// tasks, and of the pending or the completed ones, without a query and
// with one.
var (
	ListTasksPage, _               = listTasksPage("", tasks.StatusAll, nil, 0, 0)
	ListTasksPageByStatus, _       = listTasksPage("", tasks.StatusPending, nil, 0, 0)
	ListTasksPageSearch, _         = listTasksPage("", tasks.StatusAll, []string{"word"}, 0, 0)
	ListTasksPageSearchByStatus, _ = listTasksPage("", tasks.StatusPending, []string{"word"}, 0, 0)
)

// PlanFromIndexes is planFromIndexes, for the plan tests.
var PlanFromIndexes = planFromIndexes
