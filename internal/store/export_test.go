package store

// What the tests of package store_test read of the store's insides.
const (
	HistoryMessages  = historyMessages
	HistoryToolCalls = historyToolCalls

	ListConversationsFirst = listConversations
	ListConversationsAfter = listConversationsAfter

	ListTasksPage         = listTasksPage
	ListTasksPageByStatus = listTasksPageByStatus
)

// PlanFromIndexes is planFromIndexes, for the plan tests.
var PlanFromIndexes = planFromIndexes
