package runs_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/taskchat/taskchat/internal/runs"
	"github.com/taskchat/taskchat/internal/store"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/tasks"
)

func TestMain(m *testing.M) { os.Exit(storetest.Run(m)) }

var testConfig = runs.Config{FlushEvery: 20 * time.Millisecond, PollEvery: 100 * time.Millisecond, StopWait: 3 * time.Second}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// replica is one replica's share of the runs: its hub, and its listening
// connection unless it has none.
func mustReplica(tb testing.TB, pool *pgxpool.Pool, listen bool) *runs.Hub {
	tb.Helper()
	hub, err := runs.New(quiet, store.NewRuns(pool), testConfig)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(hub.Close)
	if listen {
		up := make(chan struct{}, 1)
		l := store.Listen(pool.Config().ConnString(), quiet, []string{tasks.StopChannel}, hub.Notify, func() {
			hub.Reconnected()
			select {
			case up <- struct{}{}:
			default:
			}
		})
		tb.Cleanup(l.Close)
		hub.SetNotifier(l)
		select {
		case <-up:
		case <-time.After(10 * time.Second):
			tb.Fatal("the listener did not connect")
		}
	}
	return hub
}

// mustTurn starts a turn of a new conversation of user, claimed for
// claim, and begins it on hub.
func mustTurn(tb testing.TB, pool *pgxpool.Pool, hub *runs.Hub, user string, claim time.Duration) (tasks.Turn, context.Context, *runs.Turn) {
	tb.Helper()
	turn, err := store.NewTurns(pool).StartTurn(context.Background(), tasks.TurnStart{UserID: user, Message: "hello", HistoryLimit: 50, ClaimFor: claim})
	if err != nil {
		tb.Fatal(err)
	}
	ctx, t := hub.Begin(context.Background())
	t.Started(user, turn.RunID)
	return turn, ctx, t
}

// follow follows run on hub after after, and returns the events' data in
// order and how the follow ended.
func follow(ctx context.Context, hub *runs.Hub, user string, run int64, after int) ([]string, error) {
	var got []string
	err := hub.Follow(ctx, user, run, after, func(ev tasks.RunEvent) (bool, error) {
		if want := after + len(got) + 1; ev.Seq != want {
			return true, fmt.Errorf("event number %d, want %d", ev.Seq, want)
		}
		got = append(got, string(ev.Data))
		return string(ev.Data) == `"end"`, nil
	})
	return got, err
}

func event(i int) []byte { return fmt.Appendf(nil, `"e%d"`, i) }

func wantEvents(n int) string {
	var s []string
	for i := 1; i <= n; i++ {
		s = append(s, fmt.Sprintf(`"e%d"`, i))
	}
	return strings.Join(append(s, `"end"`), " ")
}

func TestATurnsEventsAreWrittenInBatches(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	hub := mustReplica(t, pool, true)
	user := storetest.UserID(t)
	turn, _, run := mustTurn(t, pool, hub, user, time.Minute)
	for i := 1; i <= 500; i++ {
		if seq := run.Add(event(i)); seq != i {
			t.Fatalf("event %d numbered %d", i, seq)
		}
	}
	run.End([]byte(`"end"`))
	var rows, last int
	if err := pool.QueryRow(context.Background(), `SELECT count(*), max(last_seq) FROM turn_events WHERE run_id = $1`, turn.RunID).Scan(&rows, &last); err != nil {
		t.Fatal(err)
	}
	// 500 events added at once wait for one write, and the end writes the
	// rest: never a write an event.
	if rows > 3 || last != 501 {
		t.Fatalf("%d rows up to %d for 501 events; want at most 3 writes", rows, last)
	}
	got, err := follow(context.Background(), hub, user, turn.RunID, 0)
	if err != nil || strings.Join(got, " ") != wantEvents(500) {
		t.Fatalf("followed %d events, %v", len(got), err)
	}
	// A turn over before its first write writes once, with its end.
	quick, _, run := mustTurn(t, pool, hub, user, time.Minute)
	run.Add(event(1))
	run.End([]byte(`"end"`))
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM turn_events WHERE run_id = $1`, quick.RunID).Scan(&rows); err != nil || rows != 1 {
		t.Fatalf("a quick turn wrote %d times, %v", rows, err)
	}
}

func TestFollowersOnAnotherReplicaSeeEveryEventOnce(t *testing.T) {
	t.Parallel()
	for _, listen := range []bool{true, false} {
		t.Run(fmt.Sprintf("listening=%v", listen), func(t *testing.T) {
			t.Parallel()
			pool := storetest.Pool(t)
			a, b := mustReplica(t, pool, true), mustReplica(t, pool, listen)
			user := storetest.UserID(t)
			turn, _, run := mustTurn(t, pool, a, user, time.Minute)
			const followers = 100
			results := make([]string, followers)
			errs := make([]error, followers)
			var wg sync.WaitGroup
			for i := range followers {
				wg.Go(func() {
					got, err := follow(context.Background(), b, user, turn.RunID, 0)
					results[i], errs[i] = strings.Join(got, " "), err
				})
			}
			for i := 1; i <= 40; i++ {
				run.Add(event(i))
				time.Sleep(5 * time.Millisecond)
			}
			run.End([]byte(`"end"`))
			wg.Wait()
			for i := range followers {
				if errs[i] != nil || results[i] != wantEvents(40) {
					t.Fatalf("follower %d: %q, %v", i, results[i], errs[i])
				}
			}
			// One who resumes after event 25 gets the rest, once.
			got, err := follow(context.Background(), b, user, turn.RunID, 25)
			if err != nil || strings.Join(got, " ") != strings.Join(strings.Fields(wantEvents(40))[25:], " ") {
				t.Fatalf("resumed after 25: %v, %v", got, err)
			}
		})
	}
}

func TestAStopReachesTheReplicaThatRunsTheTurn(t *testing.T) {
	t.Parallel()
	for _, listen := range []bool{true, false} {
		t.Run(fmt.Sprintf("listening=%v", listen), func(t *testing.T) {
			t.Parallel()
			pool := storetest.Pool(t)
			a, b := mustReplica(t, pool, listen), mustReplica(t, pool, listen)
			user := storetest.UserID(t)
			turn, ctx, run := mustTurn(t, pool, a, user, time.Minute)
			run.Add(event(1))
			go func() {
				<-ctx.Done() // the turn notices, and ends as a stopped turn does
				run.End([]byte(`"end"`))
			}()
			asked := time.Now()
			stopped, ended, err := b.Stop(context.Background(), user, turn.Conversation.ID)
			if err != nil || stopped.ID != turn.RunID || !ended {
				t.Fatalf("stop = %+v, ended %v, %v", stopped, ended, err)
			}
			if took := time.Since(asked); took > time.Second {
				t.Errorf("the turn ended %v after the stop; want within a second", took)
			}
			if !errors.Is(context.Cause(ctx), runs.ErrStopped) {
				t.Fatalf("the turn ended with %v, want a stop", context.Cause(ctx))
			}
			if again, _, err := b.Stop(context.Background(), user, turn.Conversation.ID); err != nil || again.ID != 0 {
				t.Fatalf("a stop once it ended = %+v, %v; want nothing to stop", again, err)
			}
		})
	}
}

func TestAFollowerOfACrashedTurnHearsItWasCutShort(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	hub := mustReplica(t, pool, true)
	user := storetest.UserID(t)
	// A turn whose replica died after one write: nobody ends it.
	turn, _, run := mustTurn(t, pool, hub, user, time.Second)
	run.Add(event(1))
	waitWritten(t, pool, turn.RunID, 1)
	got, err := follow(context.Background(), hub, user, turn.RunID, 0)
	if !errors.Is(err, runs.ErrCutShort) || strings.Join(got, " ") != `"e1"` {
		t.Fatalf("followed %v, ended with %v; want e1, then cut short", got, err)
	}
}

// waitWritten waits until run's events up to seq are written.
func waitWritten(tb testing.TB, pool *pgxpool.Pool, run int64, seq int) {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var n int
		if err := pool.QueryRow(context.Background(), `SELECT coalesce(max(last_seq), 0) FROM turn_events WHERE run_id = $1`, run).Scan(&n); err != nil {
			tb.Fatal(err)
		}
		if n >= seq {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("run %d's events up to %d were not written in 10 s (%d were)", run, seq, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestAFollowerWaitsOutADatabaseOutage runs alone, not in parallel: the
// outage it makes is the package's database's, every other test's
// connections with it.
func TestAFollowerWaitsOutADatabaseOutage(t *testing.T) {
	pool := storetest.Pool(t)
	a, b := mustReplica(t, pool, true), mustReplica(t, pool, true)
	user := storetest.UserID(t)
	turn, _, run := mustTurn(t, pool, a, user, time.Minute)
	done := make(chan error, 1)
	var got []string
	go func() {
		var err error
		got, err = follow(context.Background(), b, user, turn.RunID, 0)
		done <- err
	}()
	for i := 1; i <= 10; i++ {
		run.Add(event(i))
	}
	waitWritten(t, pool, turn.RunID, 10)
	restore := storetest.CutDatabase(t) // as a restart: every connection dropped, none taken
	for i := 11; i <= 20; i++ {
		run.Add(event(i)) // written once the database is back
	}
	time.Sleep(time.Second)
	restore()
	for i := 21; i <= 30; i++ {
		run.Add(event(i))
	}
	run.End([]byte(`"end"`))
	select {
	case err := <-done:
		if err != nil || strings.Join(got, " ") != wantEvents(30) {
			t.Fatalf("followed %v, %v", got, err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the follower is still waiting 20 s after the outage")
	}
}

func TestAFollowerEndsWhenItsReplicaShutsDown(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	a, b := mustReplica(t, pool, true), mustReplica(t, pool, true)
	user := storetest.UserID(t)
	turn, _, run := mustTurn(t, pool, a, user, time.Minute)
	defer run.End([]byte(`"end"`))
	run.Add(event(1))
	done := make(chan error, 1)
	first := make(chan struct{})
	go func() {
		err := b.Follow(context.Background(), user, turn.RunID, 0, func(tasks.RunEvent) (bool, error) {
			close(first) // following
			return false, nil
		})
		done <- err
	}()
	<-first
	b.Close()
	select {
	case err := <-done:
		if !errors.Is(err, runs.ErrClosing) {
			t.Fatalf("follow ended with %v, want ErrClosing", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a follower outlives its replica's shutdown")
	}
}

// Interrupt, a shutdown's last resort, ends the turns of the replica,
// those that have not started yet (their first writes under way) too.
func TestInterruptEndsEveryTurn(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	hub := mustReplica(t, pool, false)
	user := storetest.UserID(t)
	_, started, run := mustTurn(t, pool, hub, user, time.Minute)
	defer run.End([]byte(`"end"`))
	beginning, _ := hub.Begin(context.Background()) // not started
	hub.Interrupt()
	for name, ctx := range map[string]context.Context{"started": started, "beginning": beginning} {
		select {
		case <-ctx.Done():
			if !errors.Is(context.Cause(ctx), runs.ErrShutdown) {
				t.Errorf("the %s turn ended with %v, want ErrShutdown", name, context.Cause(ctx))
			}
		case <-time.After(5 * time.Second):
			t.Errorf("the %s turn goes on after Interrupt", name)
		}
	}
	after, _ := hub.Begin(context.Background())
	if err := context.Cause(after); err != nil {
		t.Fatalf("a turn begun after Interrupt ended at once: %v", err)
	}
}
