package mcptools

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskchat/taskchat/internal/tasks"
)

// AddTaskArgs are add_task's arguments.
type AddTaskArgs struct {
	Title       string `json:"title" jsonschema:"Short title of the task, one line of 1 to 200 characters, e.g. Buy groceries. Keep the due date and the priority out of it: they have fields of their own."`
	Description string `json:"description,omitempty" jsonschema:"Optional details, at most 1000 characters."`
	Due         string `json:"due,omitempty" jsonschema:"When the task is due, if the person said: a date, 2026-12-04, or a date and time, 2026-12-04T17:00:00+01:00 (with an offset, or with none for the person's own time zone). Work out relative dates (tomorrow, next Friday) from the current date and time zone you were given."`
	Priority    string `json:"priority,omitempty" jsonschema:"high, medium or low, if the person gave one (urgent, important: high)."`
}

// ListTasksArgs are list_tasks' arguments.
type ListTasksArgs struct {
	Status    string `json:"status,omitempty" jsonschema:"Which tasks to list: all (default), pending or completed."`
	Query     string `json:"query,omitempty" jsonschema:"Only the tasks whose title or description holds every one of these words (at most 10), in any case, e.g. dentist. Leave it out for every task."`
	Priority  string `json:"priority,omitempty" jsonschema:"Only the tasks of this priority: high, medium or low."`
	DueAfter  string `json:"due_after,omitempty" jsonschema:"Only tasks due on or after this date (2026-12-01: from the start of that day in the person's time zone) or date and time."`
	DueBefore string `json:"due_before,omitempty" jsonschema:"Only tasks due on or before this date (2026-12-06: through the end of that day in the person's time zone), or before this date and time. With due_after, what's due this week is due_after the week's Monday and due_before its Sunday."`
	Overdue   bool   `json:"overdue,omitempty" jsonschema:"Only the open tasks whose due date has passed."`
	Sort      string `json:"sort,omitempty" jsonschema:"number (default): oldest first; due: soonest due first, tasks without a due date left out. A due-date filter sorts by due date too."`
	Limit     int    `json:"limit,omitempty" jsonschema:"At most this many tasks, 1 to 1000; 100 when left out."`
	Cursor    string `json:"cursor,omitempty" jsonschema:"The next_cursor of the previous list_tasks result, to read the tasks after it with the same filters."`
}

// DefaultListLimit is how many tasks list_tasks answers when the caller
// does not say. A model reads the whole result, so a page must stay a small
// part of its context however long the list is: 100 tasks as they usually
// are (a short title, no description) are about 3,000 tokens. A client
// that wants more asks for up to tasks.MaxTaskPage at a time, as GET /tasks
// allows (the offline model does, to find a task by its title in the whole
// list).
const DefaultListLimit = 100

// TaskIDArgs are the arguments of the tools that act on one task.
type TaskIDArgs struct {
	TaskID int64 `json:"task_id" jsonschema:"The task's number (1, 2, 3…), as shown by list_tasks."`
}

// UpdateTaskArgs are update_task's arguments; at least one besides
// task_id is required.
type UpdateTaskArgs struct {
	TaskID      int64            `json:"task_id" jsonschema:"The task's number (1, 2, 3…), as shown by list_tasks."`
	Title       *string          `json:"title,omitempty" jsonschema:"The new title, one line of 1 to 200 characters."`
	Description *string          `json:"description,omitempty" jsonschema:"The new description, at most 1000 characters."`
	Due         Optional[string] `json:"due,omitzero" jsonschema:"The new due date, as add_task takes it; an empty string (or null) removes the due date."`
	Priority    Optional[string] `json:"priority,omitzero" jsonschema:"The new priority, high, medium or low; an empty string (or null) removes it."`
	Completed   *bool            `json:"completed,omitempty" jsonschema:"true marks the task completed; false reopens a completed task (it is not done after all)."`
}

// Optional is an argument that may be left out (Set false), given, or
// given as null (Set, a nil Value) to clear what it sets.
type Optional[T any] struct {
	Set   bool
	Value *T
}

// UnmarshalJSON reads the argument; it is called only when it is present.
func (o *Optional[T]) UnmarshalJSON(b []byte) error {
	o.Set, o.Value = true, nil
	if string(b) == "null" {
		return nil
	}
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	o.Value = &v
	return nil
}

// MarshalJSON writes the argument as given: its value, or null.
func (o Optional[T]) MarshalJSON() ([]byte, error) { return json.Marshal(o.Value) }

// IsZero reports an argument left out, which omitzero leaves out.
func (o Optional[T]) IsZero() bool { return !o.Set }

// cleared reports whether the argument, given, asks to clear its field:
// null, as an MCP client may send it, or "", as a model does (the agent
// drops a model's nulls, which many send for every argument they leave
// out).
func cleared(o Optional[string]) bool {
	return o.Set && (o.Value == nil || strings.TrimSpace(*o.Value) == "")
}

// The tools' results are the domain's: tasks.ChangeResult for the four
// that change a task, tasks.ListResult for list_tasks.

var (
	yes, no = true, false

	addTaskTool = &mcp.Tool{
		Name:        tasks.ToolAddTask,
		Description: "Create a new task on the user's todo list, with its due date and priority when the user gave them. Use when the user wants to add, create or remember something. Returns the new task's id, and its due date as stored: confirm it with its weekday.",
		Annotations: &mcp.ToolAnnotations{Title: "Add task", DestructiveHint: &no, OpenWorldHint: &no},
		InputSchema: addTaskSchema(),
	}
	listTasksTool = &mcp.Tool{
		Name:        tasks.ToolListTasks,
		Description: "List the user's tasks, oldest first (or soonest due first), with their ids, titles, whether they are completed, due dates and priorities, 100 at a time unless limit says otherwise: when the result has next_cursor, more tasks match, and calling again with it as cursor reads them. Use it to answer questions about tasks, and to find a task's id before acting on a task named by its title (query finds it by words of its title).",
		Annotations: &mcp.ToolAnnotations{Title: "List tasks", ReadOnlyHint: true, OpenWorldHint: &no},
		InputSchema: listTasksSchema(),
	}
	completeTaskTool = &mcp.Tool{
		Name:        tasks.ToolCompleteTask,
		Description: "Mark one of the user's tasks as completed, by id. Completing a completed task changes nothing.",
		Annotations: &mcp.ToolAnnotations{Title: "Complete task", DestructiveHint: &no, IdempotentHint: true, OpenWorldHint: &no},
	}
	deleteTaskTool = &mcp.Tool{
		Name:        tasks.ToolDeleteTask,
		Description: "Permanently delete one of the user's tasks, by id. If the user named the task by title, call list_tasks first and ask when several tasks match.",
		Annotations: &mcp.ToolAnnotations{Title: "Delete task", DestructiveHint: &yes, IdempotentHint: true, OpenWorldHint: &no},
	}
	updateTaskTool = &mcp.Tool{
		Name:        tasks.ToolUpdateTask,
		Description: "Change one of the user's tasks, by id: its title, description, due date or priority (an empty string removes the last two), or reopen it (completed: false) when it is not done after all.",
		Annotations: &mcp.ToolAnnotations{Title: "Update task", DestructiveHint: &no, IdempotentHint: true, OpenWorldHint: &no},
		InputSchema: updateTaskSchema(),
	}
)

// ToolNames names the tools every user's server has.
func ToolNames() []string {
	return []string{addTaskTool.Name, listTasksTool.Name, completeTaskTool.Name, deleteTaskTool.Name, updateTaskTool.Name}
}

// listTasksSchema is the inferred schema with the status values and the
// bounds spelled out, so a model sees the choices rather than guessing
// them, and a call out of bounds is refused before it runs.
func listTasksSchema() *jsonschema.Schema {
	s, err := jsonschema.For[ListTasksArgs](nil)
	if err != nil {
		panic(fmt.Sprintf("list_tasks schema: %v", err))
	}
	s.Properties["status"].Enum = []any{"all", "pending", "completed"}
	s.Properties["priority"].Enum = priorities()
	s.Properties["sort"].Enum = []any{"number", "due"}
	s.Properties["query"].MaxLength = jsonschema.Ptr(tasks.MaxQueryLen)
	s.Properties["limit"].Minimum = jsonschema.Ptr(1.0)
	s.Properties["limit"].Maximum = jsonschema.Ptr(float64(tasks.MaxTaskPage))
	return s
}

// priorities are the priorities as a schema lists them.
func priorities() []any {
	out := make([]any, len(tasks.Priorities))
	for i, p := range tasks.Priorities {
		out[i] = string(p)
	}
	return out
}

// addTaskSchema lists the priorities.
func addTaskSchema() *jsonschema.Schema {
	s, err := jsonschema.For[AddTaskArgs](nil)
	if err != nil {
		panic(fmt.Sprintf("add_task schema: %v", err))
	}
	s.Properties["priority"].Enum = append(priorities(), "") // "": none, as a model fills in what it leaves out
	return s
}

// updateTaskSchema says what an Optional argument is: a string, or null to
// clear the field; the priority one of three.
func updateTaskSchema() *jsonschema.Schema {
	nullable := &jsonschema.Schema{Types: []string{"string", "null"}}
	s, err := jsonschema.For[UpdateTaskArgs](&jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[Optional[string]](): nullable,
	}})
	if err != nil {
		panic(fmt.Sprintf("update_task schema: %v", err))
	}
	s.Properties["priority"].Enum = append(priorities(), "", nil)
	return s
}

// tools holds the handlers of one user's server.
type tools struct {
	userID string
	svc    *tasks.Service
	// recordOf returns the record a call's change is made with, nil for
	// none: the chat turn's from _meta in process (callRecord), the one
	// the server made itself for an outside client (remoteRecord).
	recordOf func(context.Context, *mcp.CallToolRequest) (*tasks.CallRecord, error)
}

func (t *tools) addTask(ctx context.Context, req *mcp.CallToolRequest, in AddTaskArgs) (*mcp.CallToolResult, tasks.ChangeResult, error) {
	return t.change(ctx, req, tasks.StatusCreated, func(rec *tasks.CallRecord) (tasks.Task, error) {
		nt := tasks.NewTask{Title: in.Title, Description: in.Description, Priority: tasks.Priority(in.Priority)}
		if in.Due != "" {
			due, err := t.svc.Due(ctx, t.userID, in.Due)
			if err != nil {
				return tasks.Task{}, err
			}
			nt.Due = &due
		}
		return t.svc.Add(ctx, t.userID, nt, rec)
	})
}

func (t *tools) listTasks(ctx context.Context, _ *mcp.CallToolRequest, in ListTasksArgs) (*mcp.CallToolResult, tasks.ListResult, error) {
	limit := in.Limit
	if limit == 0 {
		limit = DefaultListLimit
	}
	f, err := t.filter(ctx, in)
	if err != nil {
		return nil, tasks.ListResult{}, toolError(err)
	}
	page, err := t.svc.ListPage(ctx, t.userID, f, limit, in.Cursor)
	if err != nil {
		return nil, tasks.ListResult{}, toolError(err)
	}
	out := tasks.ListResult{Tasks: make([]tasks.ListItem, len(page.Items)), NextCursor: page.Next}
	now := time.Now()
	for i, task := range page.Items {
		out.Tasks[i] = tasks.ListItemOf(task, now)
	}
	return nil, out, nil
}

func (t *tools) completeTask(ctx context.Context, req *mcp.CallToolRequest, in TaskIDArgs) (*mcp.CallToolResult, tasks.ChangeResult, error) {
	return t.change(ctx, req, tasks.StatusDone, func(rec *tasks.CallRecord) (tasks.Task, error) {
		return t.svc.Complete(ctx, t.userID, in.TaskID, rec)
	})
}

func (t *tools) deleteTask(ctx context.Context, req *mcp.CallToolRequest, in TaskIDArgs) (*mcp.CallToolResult, tasks.ChangeResult, error) {
	return t.change(ctx, req, tasks.StatusDeleted, func(rec *tasks.CallRecord) (tasks.Task, error) {
		return t.svc.Delete(ctx, t.userID, in.TaskID, rec)
	})
}

func (t *tools) updateTask(ctx context.Context, req *mcp.CallToolRequest, in UpdateTaskArgs) (*mcp.CallToolResult, tasks.ChangeResult, error) {
	return t.change(ctx, req, tasks.StatusUpdated, func(rec *tasks.CallRecord) (tasks.Task, error) {
		u := tasks.TaskUpdate{Title: in.Title, Description: in.Description, Completed: in.Completed}
		switch {
		case cleared(in.Due):
			u.Due = tasks.Clear[tasks.Due]()
		case in.Due.Set:
			due, err := t.svc.Due(ctx, t.userID, *in.Due.Value)
			if err != nil {
				return tasks.Task{}, err
			}
			u.Due = tasks.SetTo(due)
		}
		switch {
		case cleared(in.Priority):
			u.Priority = tasks.Clear[tasks.Priority]()
		case in.Priority.Set:
			u.Priority = tasks.SetTo(tasks.Priority(*in.Priority.Value))
		}
		return t.svc.Update(ctx, t.userID, in.TaskID, u, rec)
	})
}

// filter is the listing in asks for: due-date bounds are read in the
// user's time zone, and an overdue listing ends now.
func (t *tools) filter(ctx context.Context, in ListTasksArgs) (tasks.Filter, error) {
	f := tasks.Filter{Status: tasks.Status(in.Status), Query: in.Query, Priority: tasks.Priority(in.Priority), Overdue: in.Overdue}
	switch in.Sort {
	case "", "number":
	case "due":
		f.ByDue = true
	default:
		return tasks.Filter{}, tasks.Invalid("sort", `must be "number" or "due"`)
	}
	var err error
	if f.DueFrom, f.DueTo, err = t.svc.DueRange(ctx, t.userID, in.DueAfter, in.DueBefore); err != nil {
		return tasks.Filter{}, err
	}
	return f, nil
}

// change runs a tool that changes one task, with the call's record when it
// has one (see recordOf), and shapes its outcome. The store records a
// call's result, a tasks.ChangeResult too, from the same row (see
// store.Tasks), so the audit says exactly what the model was told.
func (t *tools) change(ctx context.Context, req *mcp.CallToolRequest, status string, do func(*tasks.CallRecord) (tasks.Task, error)) (*mcp.CallToolResult, tasks.ChangeResult, error) {
	rec, err := t.recordOf(ctx, req)
	if err != nil {
		return nil, tasks.ChangeResult{}, err
	}
	task, err := do(rec)
	if err != nil {
		return nil, tasks.ChangeResult{}, toolError(err)
	}
	markRecorded(ctx)
	return nil, tasks.ChangeResultOf(task, status), nil
}
