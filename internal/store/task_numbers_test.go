package store_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/taskchat/taskchat/internal/store"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/tasks"
)

// Each user's tasks are numbered 1, 2, 3… on their own, whatever other
// users do meanwhile.
func TestTaskNumbersArePerUser(t *testing.T) {
	t.Parallel()
	s := newTasks(t)
	alice, bob := storetest.UserID(t), storetest.UserID(t)

	if got := mustCreate(t, s, alice, "Buy milk", nil).ID; got != 1 {
		t.Fatalf("alice's first task is number %d, want 1", got)
	}
	for i := range 5 {
		mustCreate(t, s, bob, fmt.Sprintf("Bob's task %d", i+1), nil)
	}
	mustDelete(t, s, bob, 5)
	if got := mustCreate(t, s, alice, "Call mom", nil).ID; got != 2 {
		t.Errorf("alice's second task, after bob's five, is number %d, want 2", got)
	}
	if got := mustIDs(t, s, alice); !slices.Equal(got, []int64{1, 2}) {
		t.Errorf("alice's tasks = %v, want [1 2]", got)
	}
	if got := mustIDs(t, s, bob); !slices.Equal(got, []int64{1, 2, 3, 4}) {
		t.Errorf("bob's tasks = %v, want [1 2 3 4]", got)
	}
}

// Deleting a task never frees its number, not even the newest one's.
func TestTaskNumbersAreNeverReused(t *testing.T) {
	t.Parallel()
	s, u := newTasks(t), storetest.UserID(t)
	for _, title := range []string{"a", "b", "c"} {
		mustCreate(t, s, u, title, nil)
	}
	mustDelete(t, s, u, 3)
	mustDelete(t, s, u, 1)
	if got := mustCreate(t, s, u, "d", nil).ID; got != 4 {
		t.Errorf("the task after deleting 3 and 1 is number %d, want 4", got)
	}
	if got := mustIDs(t, s, u); !slices.Equal(got, []int64{2, 4}) {
		t.Errorf("tasks = %v, want [2 4]", got)
	}
}

// Tasks created at once by one user take distinct numbers, with no gaps.
func TestTaskNumbersUnderConcurrentCreates(t *testing.T) {
	t.Parallel()
	s, u := newTasks(t), storetest.UserID(t)
	const n = 20
	ids, errs := make([]int64, n), make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			task, err := s.CreateTask(context.Background(), u, tasks.NewTask{Title: fmt.Sprintf("task %d", i), Description: ""}, nil)
			ids[i], errs[i] = task.ID, err
		})
	}
	wg.Wait()
	seen := map[int64]bool{}
	for i, id := range ids {
		if errs[i] != nil {
			t.Fatalf("create %d: %v", i, errs[i])
		}
		if seen[id] || id < 1 || id > n {
			t.Errorf("create %d got number %d; numbers so far %v", i, id, ids)
		}
		seen[id] = true
	}
	if got := mustIDs(t, s, u); len(got) != n || got[0] != 1 || got[n-1] != n {
		t.Errorf("tasks = %v, want 1 to %d", got, n)
	}
}

func mustDelete(tb testing.TB, s *store.Tasks, user string, id int64) {
	tb.Helper()
	if _, err := s.DeleteTask(context.Background(), user, id, nil); err != nil {
		tb.Fatalf("delete %d: %v", id, err)
	}
}

// mustIDs lists user's task ids in listing order.
func mustIDs(tb testing.TB, s *store.Tasks, user string) []int64 {
	tb.Helper()
	var ids []int64
	for _, task := range mustList(tb, s, user) {
		ids = append(ids, task.ID)
	}
	return ids
}

// A replica still running the code of before per-user numbers inserts
// tasks without a number, during a rolling deploy: they take the next
// number all the same, and the counter goes on from there.
func TestTaskInsertedWithoutANumberTakesTheNext(t *testing.T) {
	t.Parallel()
	s, user := newTasks(t), storetest.UserID(t)
	first := mustCreate(t, s, user, "first", nil)
	var number int64
	if err := storetest.Pool(t).QueryRow(context.Background(),
		`INSERT INTO tasks (user_id, title, description) VALUES ($1, 'by an old replica', '') RETURNING number`, user).Scan(&number); err != nil {
		t.Fatal(err)
	}
	third := mustCreate(t, s, user, "third", nil)
	if first.ID != 1 || number != 2 || third.ID != 3 {
		t.Fatalf("numbers %d, %d, %d; want 1, 2, 3", first.ID, number, third.ID)
	}
}
