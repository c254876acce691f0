package tasks

import (
	"encoding/json"
	"time"
)

// The results of the task tools, as a model or an MCP client reads them and
// as a call's record keeps them (tasks.ToolCall.Result). Each shape is
// written here once: the MCP tools answer with these types, the agent and
// the tools' audit write failures as ErrorResult, and the clients of the
// records read them back with them. One copy lives outside Go, and must:
// the store records a change's ChangeResult in the very statement that
// makes the change, built from the changed row (the task number a new task
// takes is known only there; internal/store/sql/tasks.sql), so that the
// record is written with the change or not at all. The tests that compare a recorded result with what the
// tool answered (mcptools' TestToolCallsForATurnAreRecorded, the store's
// TestRecordedChangeCommitsWithItsRecord) hold the two to the same JSON.

// The task tools' names, as their MCP server declares them and the
// records of their calls keep them.
const (
	ToolAddTask      = "add_task"
	ToolListTasks    = "list_tasks"
	ToolCompleteTask = "complete_task"
	ToolDeleteTask   = "delete_task"
	ToolUpdateTask   = "update_task"
)

// ChangeResult is what a tool that changes one task answers: add_task,
// complete_task, delete_task and update_task.
type ChangeResult struct {
	TaskID   int64  `json:"task_id"`
	Status   string `json:"status" jsonschema:"What happened: created, completed, deleted or updated."`
	Title    string `json:"title"`
	Due      string `json:"due,omitempty" jsonschema:"The task's due date as stored: a date, or a date and time with the user's offset."`
	Priority string `json:"priority,omitempty" jsonschema:"The task's priority: high, medium or low."`
}

// ChangeResultOf is the result of a change with status that left t as it
// is (deleted: as it was).
func ChangeResultOf(t Task, status string) ChangeResult {
	r := ChangeResult{TaskID: t.ID, Status: status, Title: t.Title, Priority: string(t.Priority)}
	if t.Due != nil {
		r.Due = t.Due.String()
	}
	return r
}

// The statuses of a ChangeResult.
const (
	StatusCreated = "created"
	StatusDone    = "completed"
	StatusDeleted = "deleted"
	StatusUpdated = "updated"
)

// ListResult is list_tasks' result.
type ListResult struct {
	Tasks      []ListItem `json:"tasks"`
	NextCursor string     `json:"next_cursor,omitempty" jsonschema:"Present when more tasks match: pass it as cursor, with the same status and query, to read them."`
}

// ListItem is one task in a listing.
type ListItem struct {
	ID          int64     `json:"id"`
	Title       string    `json:"title"`
	Description string    `json:"description"`
	Completed   bool      `json:"completed"`
	Due         string    `json:"due,omitempty" jsonschema:"When it is due: a date, or a date and time with the user's offset."`
	Overdue     bool      `json:"overdue,omitempty" jsonschema:"Open and past its due date."`
	Priority    string    `json:"priority,omitempty" jsonschema:"high, medium or low."`
	CreatedAt   time.Time `json:"created_at"`
}

// ListItemOf is t as a listing read at now shows it.
func ListItemOf(t Task, now time.Time) ListItem {
	item := ListItem{ID: t.ID, Title: t.Title, Description: t.Description, Completed: t.Completed, Priority: string(t.Priority), CreatedAt: t.CreatedAt}
	if t.Due != nil {
		item.Due = t.Due.String()
		item.Overdue = !t.Completed && t.Due.Overdue(now)
	}
	return item
}

// ErrorResult is the result of a call that failed, whoever failed it (the
// tool, the agent, the transport): a sentence a model can act on.
type ErrorResult struct {
	Error string `json:"error"`
}

// ErrorJSON is the ErrorResult of message, encoded.
func ErrorJSON(message string) json.RawMessage {
	b, _ := json.Marshal(ErrorResult{Error: message})
	return b
}

// TextResult is the result of a call that answered with text only, no
// structured result.
type TextResult struct {
	Text string `json:"text"`
}

// TextJSON is the TextResult of text, encoded.
func TextJSON(text string) json.RawMessage {
	b, _ := json.Marshal(TextResult{Text: text})
	return b
}
