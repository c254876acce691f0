package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/taskchat/taskchat/internal/store"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/tasks"
)

func TestTasksScopedByUser(t *testing.T) {
	ctx := context.Background()
	s := store.NewTasks(storetest.Pool(t))
	alice, bob := storetest.UserID(t), storetest.UserID(t)

	task, err := s.CreateTask(ctx, alice, "Buy groceries", "milk")
	if err != nil {
		t.Fatal(err)
	}
	title := "stolen"
	attempts := map[string]func() error{
		"complete": func() error { _, err := s.CompleteTask(ctx, bob, task.ID); return err },
		"delete":   func() error { _, err := s.DeleteTask(ctx, bob, task.ID); return err },
		"update": func() error {
			_, err := s.UpdateTask(ctx, bob, task.ID, tasks.TaskUpdate{Title: &title})
			return err
		},
	}
	for name, try := range attempts {
		err := try()
		var nf *tasks.NotFoundError
		if !errors.As(err, &nf) || nf.ID != task.ID || !errors.Is(err, tasks.ErrNotFound) {
			t.Errorf("%s by another user: err = %v, want task %d not found", name, err, task.ID)
		}
	}
	if list, err := s.ListTasks(ctx, bob, tasks.StatusAll); err != nil || len(list) != 0 {
		t.Errorf("bob lists %v, %v; want nothing", list, err)
	}
	list, err := s.ListTasks(ctx, alice, tasks.StatusAll)
	if err != nil || len(list) != 1 || list[0] != task {
		t.Fatalf("alice's task after bob's attempts = %+v, %v; want %+v unchanged", list, err, task)
	}
}

func TestTasksLifecycle(t *testing.T) {
	ctx := context.Background()
	s := store.NewTasks(storetest.Pool(t))
	u := storetest.UserID(t)

	a, _ := s.CreateTask(ctx, u, "a", "")
	b, _ := s.CreateTask(ctx, u, "b", "")
	if _, err := s.CompleteTask(ctx, u, a.ID); err != nil {
		t.Fatal(err)
	}
	for status, want := range map[tasks.Status][]int64{
		tasks.StatusAll: {a.ID, b.ID}, tasks.StatusPending: {b.ID}, tasks.StatusCompleted: {a.ID},
	} {
		list, err := s.ListTasks(ctx, u, status)
		if err != nil || len(list) != len(want) {
			t.Fatalf("%s: %v, %v", status, list, err)
		}
		for i := range want {
			if list[i].ID != want[i] {
				t.Errorf("%s[%d] = %d, want %d", status, i, list[i].ID, want[i])
			}
		}
	}
	desc := "new description"
	got, err := s.UpdateTask(ctx, u, b.ID, tasks.TaskUpdate{Description: &desc})
	if err != nil || got.Title != "b" || got.Description != desc || !got.UpdatedAt.After(b.UpdatedAt) {
		t.Fatalf("update description only = %+v, %v", got, err)
	}
	if got, err := s.DeleteTask(ctx, u, b.ID); err != nil || got.ID != b.ID {
		t.Fatalf("delete = %+v, %v", got, err)
	}
	if _, err := s.DeleteTask(ctx, u, b.ID); !errors.Is(err, tasks.ErrNotFound) {
		t.Fatalf("second delete: %v, want not found", err)
	}
}

func TestTasksDatabaseEnforcesLimits(t *testing.T) {
	// The service validates first; the database is the last line.
	s := store.NewTasks(storetest.Pool(t))
	_, err := s.CreateTask(context.Background(), storetest.UserID(t), strings.Repeat("x", 201), "")
	if !errors.Is(err, tasks.ErrInvalid) {
		t.Fatalf("201-character title: %v, want ErrInvalid", err)
	}
}
