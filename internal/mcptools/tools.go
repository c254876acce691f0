package mcptools

import (
	"context"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskchat/taskchat/internal/tasks"
)

// AddTaskArgs are add_task's arguments.
type AddTaskArgs struct {
	Title       string `json:"title" jsonschema:"Short title of the task, one line of 1 to 200 characters, e.g. Buy groceries."`
	Description string `json:"description,omitempty" jsonschema:"Optional details, at most 1000 characters."`
}

// ListTasksArgs are list_tasks' arguments.
type ListTasksArgs struct {
	Status string `json:"status,omitempty" jsonschema:"Which tasks to list: all (default), pending or completed."`
	Query  string `json:"query,omitempty" jsonschema:"Only the tasks whose title or description holds every one of these words (at most 10), in any case, e.g. dentist. Leave it out for every task."`
	Limit  int    `json:"limit,omitempty" jsonschema:"At most this many tasks, 1 to 1000; 100 when left out."`
	Cursor string `json:"cursor,omitempty" jsonschema:"The next_cursor of the previous list_tasks result, to read the tasks after it with the same status and query."`
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

// UpdateTaskArgs are update_task's arguments; title or description is required.
type UpdateTaskArgs struct {
	TaskID      int64   `json:"task_id" jsonschema:"The task's number (1, 2, 3…), as shown by list_tasks."`
	Title       *string `json:"title,omitempty" jsonschema:"The new title, one line of 1 to 200 characters."`
	Description *string `json:"description,omitempty" jsonschema:"The new description, at most 1000 characters."`
}

// The tools' results are the domain's: tasks.ChangeResult for the four
// that change a task, tasks.ListResult for list_tasks.

var (
	yes, no = true, false

	addTaskTool = &mcp.Tool{
		Name:        tasks.ToolAddTask,
		Description: "Create a new task on the user's todo list. Use when the user wants to add, create or remember something. Returns the new task's id.",
		Annotations: &mcp.ToolAnnotations{Title: "Add task", DestructiveHint: &no, OpenWorldHint: &no},
	}
	listTasksTool = &mcp.Tool{
		Name:        tasks.ToolListTasks,
		Description: "List the user's tasks, oldest first, with their ids, titles and whether they are completed, 100 at a time unless limit says otherwise: when the result has next_cursor, more tasks match, and calling again with it as cursor reads them. Use it to answer questions about tasks, and to find a task's id before acting on a task named by its title (query finds it by words of its title).",
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
		Description: "Change the title, the description, or both, of one of the user's tasks, by id.",
		Annotations: &mcp.ToolAnnotations{Title: "Update task", DestructiveHint: &no, IdempotentHint: true, OpenWorldHint: &no},
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
	s.Properties["query"].MaxLength = jsonschema.Ptr(tasks.MaxQueryLen)
	s.Properties["limit"].Minimum = jsonschema.Ptr(1.0)
	s.Properties["limit"].Maximum = jsonschema.Ptr(float64(tasks.MaxTaskPage))
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
		return t.svc.Add(ctx, t.userID, in.Title, in.Description, rec)
	})
}

func (t *tools) listTasks(ctx context.Context, _ *mcp.CallToolRequest, in ListTasksArgs) (*mcp.CallToolResult, tasks.ListResult, error) {
	limit := in.Limit
	if limit == 0 {
		limit = DefaultListLimit
	}
	page, err := t.svc.ListPage(ctx, t.userID, tasks.Filter{Status: tasks.Status(in.Status), Query: in.Query}, limit, in.Cursor)
	if err != nil {
		return nil, tasks.ListResult{}, toolError(err)
	}
	out := tasks.ListResult{Tasks: make([]tasks.ListItem, len(page.Items)), NextCursor: page.Next}
	for i, task := range page.Items {
		out.Tasks[i] = tasks.ListItemOf(task)
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
		return t.svc.Update(ctx, t.userID, in.TaskID, tasks.TaskUpdate{Title: in.Title, Description: in.Description}, rec)
	})
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
	return nil, tasks.ChangeResult{TaskID: task.ID, Status: status, Title: task.Title}, nil
}
