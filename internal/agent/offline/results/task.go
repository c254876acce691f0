package results

// Task is one task of a list_tasks result.
type Task struct {
	ID          int64  `json:"id"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Completed   bool   `json:"completed"`
	// Deleted marks a task the conversation deleted since: still what "it"
	// or "the second one" points at, never a task to act on or offer.
	Deleted bool `json:"-"`
}

// MarkDeleted returns list with task id marked deleted, copied: list may
// be an earlier turn's.
func MarkDeleted(list []Task, id int64) []Task {
	out := append([]Task(nil), list...)
	for i := range out {
		if out[i].ID == id {
			out[i].Deleted = true
		}
	}
	return out
}

// WithoutDeleted returns the tasks of list the conversation has not deleted.
func WithoutDeleted(list []Task) []Task {
	return TasksWhere(list, func(t Task) bool { return !t.Deleted })
}

// TasksWhere returns the tasks of ts that keep says to keep.
func TasksWhere(ts []Task, keep func(Task) bool) []Task {
	var out []Task
	for _, t := range ts {
		if keep(t) {
			out = append(out, t)
		}
	}
	return out
}

// IDTasks are the tasks numbered ids, known by number only.
func IDTasks(ids []int64) []Task {
	out := make([]Task, len(ids))
	for i, id := range ids {
		out[i] = Task{ID: id}
	}
	return out
}

// OpenTasks returns the tasks of ts not yet completed.
func OpenTasks(ts []Task) []Task {
	return TasksWhere(ts, func(t Task) bool { return !t.Completed })
}

// FindTask finds task id in ts.
func FindTask(ts []Task, id int64) (Task, bool) {
	for _, t := range ts {
		if t.ID == id {
			return t, true
		}
	}
	return Task{}, false
}
