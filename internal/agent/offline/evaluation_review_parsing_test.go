package offline

// reviewParsingCases are messages from the second held-out review
// (2026-11-26) about reading one message: numbers, lists, exceptions, add
// requests and what is not a task.
var reviewParsingCases = []evalCase{}
