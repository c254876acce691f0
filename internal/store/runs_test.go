package store_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/taskchat/taskchat/internal/store"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/tasks"
)

// mustAppend writes events numbered from first, each the JSON string of
// its text.
func mustAppend(tb testing.TB, r *store.Runs, user string, run int64, first int, last bool, texts ...string) bool {
	tb.Helper()
	events := make([][]byte, len(texts))
	for i, t := range texts {
		events[i] = fmt.Appendf(nil, "%q", t)
	}
	stop, err := r.AppendRunEvents(context.Background(), user, run, first, events, last)
	if err != nil {
		tb.Fatalf("append events %d… of run %d: %v", first, run, err)
	}
	return stop
}

func mustRead(tb testing.TB, r *store.Runs, user string, run int64, after, limit int) ([]string, tasks.Run) {
	tb.Helper()
	events, state, err := r.ReadRunEvents(context.Background(), user, run, after, limit, false)
	if err != nil {
		tb.Fatalf("read run %d after %d: %v", run, after, err)
	}
	var got []string
	for i, e := range events {
		if e.Seq != after+i+1 {
			tb.Fatalf("event %d has number %d, want %d", i, e.Seq, after+i+1)
		}
		got = append(got, string(e.Data))
	}
	return got, state
}

func TestARunKeepsItsTurnsEventsInOrder(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	turns, runs, user := store.NewTurns(pool), store.NewRuns(pool), storetest.UserID(t)
	turn := mustStart(t, turns, user, 0, "Add a task to buy milk")
	if turn.RunID == 0 {
		t.Fatal("a started turn has no run")
	}
	latest, err := runs.LatestRun(context.Background(), user, turn.Conversation.ID)
	if err != nil || latest.ID != turn.RunID || latest.TurnID != turn.ID() || !latest.Running() {
		t.Fatalf("latest run = %+v, %v; want the turn's, running", latest, err)
	}

	mustAppend(t, runs, user, turn.RunID, 1, false, "a", "b")
	mustAppend(t, runs, user, turn.RunID, 3, false, "c")
	got, state := mustRead(t, runs, user, turn.RunID, 0, 10)
	if fmt.Sprint(got) != `["a" "b" "c"]` || state.LastSeq != 3 || state.Ended {
		t.Fatalf("read all = %v, %+v", got, state)
	}
	if got, _ := mustRead(t, runs, user, turn.RunID, 1, 10); fmt.Sprint(got) != `["b" "c"]` {
		t.Fatalf("after 1 = %v: a batch is read from the middle", got)
	}
	if got, _ := mustRead(t, runs, user, turn.RunID, 0, 1); fmt.Sprint(got) != `["a" "b"]` {
		t.Fatalf("a limit of one batch = %v", got)
	}
	mustAppend(t, runs, user, turn.RunID, 4, true, "d")
	got, state = mustRead(t, runs, user, turn.RunID, 3, 10)
	if fmt.Sprint(got) != `["d"]` || !state.Ended || state.Running() {
		t.Fatalf("after its end = %v, %+v", got, state)
	}

	t.Run("another user sees none of it", func(t *testing.T) {
		other := storetest.UserID(t)
		if _, _, err := runs.ReadRunEvents(context.Background(), other, turn.RunID, 0, 10, true); !errors.Is(err, tasks.ErrNotFound) {
			t.Errorf("another user's read = %v, want not found", err)
		}
		if _, err := runs.LatestRun(context.Background(), other, turn.Conversation.ID); !errors.Is(err, tasks.ErrNotFound) {
			t.Errorf("another user's latest run = %v, want not found", err)
		}
		if _, err := runs.AppendRunEvents(context.Background(), other, turn.RunID, 5, [][]byte{[]byte(`"x"`)}, false); !errors.Is(err, tasks.ErrNotFound) {
			t.Errorf("another user's write = %v, want not found", err)
		}
		if run, err := runs.RequestStop(context.Background(), other, turn.Conversation.ID); !errors.Is(err, tasks.ErrNotFound) {
			t.Errorf("another user's stop = %+v, %v, want not found", run, err)
		}
	})
}

func TestAStopIsAskedOnceAndSeenByTheWriter(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	turns, runs, user := store.NewTurns(pool), store.NewRuns(pool), storetest.UserID(t)
	turn := mustStart(t, turns, user, 0, "Add a task to buy milk")
	if mustAppend(t, runs, user, turn.RunID, 1, false, "a") {
		t.Fatal("a write reads a stop nobody asked")
	}
	for range 2 { // asked again, harmlessly
		run, err := runs.RequestStop(context.Background(), user, turn.Conversation.ID)
		if err != nil || run.ID != turn.RunID || !run.StopRequested {
			t.Fatalf("stop = %+v, %v", run, err)
		}
	}
	if ids, err := runs.StopsRequested(context.Background(), []int64{turn.RunID, turn.RunID + 1000}); err != nil || fmt.Sprint(ids) != fmt.Sprint([]int64{turn.RunID}) {
		t.Fatalf("stops requested = %v, %v", ids, err)
	}
	if !mustAppend(t, runs, user, turn.RunID, 2, false, "b") {
		t.Fatal("the writer does not read the stop")
	}
	mustAppend(t, runs, user, turn.RunID, 3, true, "end")
	if run, err := runs.RequestStop(context.Background(), user, turn.Conversation.ID); err != nil || run.ID != 0 {
		t.Fatalf("a stop after the run ended = %+v, %v; want no run", run, err)
	}
	conv := mustStart(t, turns, user, 0, "hello")
	mustFinish(t, turns, conv, "hi")
	if _, err := runs.RequestStop(context.Background(), user, conv.Conversation.ID+1_000_000); !errors.Is(err, tasks.ErrNotFound) {
		t.Fatalf("a stop of no conversation = %v", err)
	}
}

func TestRunningTurnsAreCappedAcrossTheDatabase(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	turns, runs, user := store.NewTurns(pool), store.NewRuns(pool), storetest.UserID(t)
	start := func(msg string) (tasks.Turn, error) {
		return turns.StartTurn(context.Background(), tasks.TurnStart{UserID: user, Message: msg, HistoryLimit: 50, ClaimFor: time.Minute, MaxRunningTurns: 3})
	}
	// Eight at once, as eight replicas would: three start.
	var mu sync.Mutex
	var started []tasks.Turn
	var refused int
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			turn, err := start(fmt.Sprintf("message %d", i))
			mu.Lock()
			defer mu.Unlock()
			var re *tasks.RunningTurnsError
			switch {
			case err == nil:
				started = append(started, turn)
			case errors.As(err, &re) && re.Max == 3 && errors.Is(err, tasks.ErrTooManyRunningTurns):
				refused++
			default:
				t.Errorf("start %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if len(started) != 3 || refused != 5 {
		t.Fatalf("started %d, refused %d; want 3 and 5", len(started), refused)
	}
	// A run that ended frees its place; a refused turn wrote nothing.
	mustAppend(t, runs, user, started[0].RunID, 1, true, "done")
	if _, err := start("one more"); err != nil {
		t.Fatalf("a start after a run ended: %v", err)
	}
	convs := store.NewConversations(pool)
	page, err := convs.ListConversations(context.Background(), user, 100, "")
	if err != nil || len(page.Items) != 4 {
		t.Fatalf("conversations = %d, %v; want the 4 turns that started", len(page.Items), err)
	}
}

// TestAListenerHearsRunsAndComesBackAfterALoss runs alone, not in
// parallel: it drops every listening connection of the package's
// database, and counts them.
func TestAListenerHearsRunsAndComesBackAfterALoss(t *testing.T) {
	pool := storetest.Pool(t)
	turns, runs, user := store.NewTurns(pool), store.NewRuns(pool), storetest.UserID(t)
	turn := mustStart(t, turns, user, 0, "Add a task to buy milk")
	heard := make(chan string, 16)
	reconnected := make(chan struct{}, 16)
	l := store.Listen(pool.Config().ConnString(), slog.New(slog.NewTextHandler(io.Discard, nil)), []string{tasks.StopChannel},
		func(channel, payload string) { heard <- channel + " " + payload },
		func() { reconnected <- struct{}{} })
	defer l.Close()
	waitFor(t, reconnected, "the first connection")
	channel := tasks.RunChannel(turn.RunID)
	if !l.Subscribe(context.Background(), channel) {
		t.Fatal("a subscription on a live connection is not live")
	}
	defer l.Unsubscribe(channel)

	// Unwatched, a write notifies nobody; watched, it wakes the followers.
	mustAppend(t, runs, user, turn.RunID, 1, false, "a")
	if _, _, err := runs.ReadRunEvents(context.Background(), user, turn.RunID, 0, 10, true); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, runs, user, turn.RunID, 2, false, "b")
	if got := waitFor(t, heard, "a watched write"); got != channel+" " {
		t.Fatalf("heard %q, want the run's channel", got)
	}
	select {
	case got := <-heard:
		t.Fatalf("heard %q too: the unwatched write notified", got)
	default:
	}

	// The database drops the listener's connection, as a restart does
	// (only it: the package's other tests share the database).
	var dropped int
	if err := pool.QueryRow(context.Background(), `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE '%LISTEN%'`).Scan(&dropped); err != nil || dropped != 1 {
		t.Fatalf("dropped %d listening connections, %v; want 1", dropped, err)
	}
	waitFor(t, reconnected, "the connection after the loss")
	if _, err := runs.RequestStop(context.Background(), user, turn.Conversation.ID); err != nil {
		t.Fatal(err)
	}
	if got := waitFor(t, heard, "a stop after the loss"); got != fmt.Sprintf("%s %d", tasks.StopChannel, turn.RunID) {
		t.Fatalf("heard %q, want the stop of run %d", got, turn.RunID)
	}
	mustAppend(t, runs, user, turn.RunID, 3, false, "c")
	if got := waitFor(t, heard, "a watched write after the loss"); got != channel+" " {
		t.Fatalf("heard %q: the run's channel was not listened to again", got)
	}
}

func waitFor[T any](tb testing.TB, c <-chan T, what string) T {
	tb.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(10 * time.Second):
		tb.Fatalf("waited 10 s for %s", what)
		panic("unreachable")
	}
}
