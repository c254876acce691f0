package store_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/taskchat/taskchat/internal/store"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/tasks"
)

var quietLog = slog.New(slog.NewTextHandler(io.Discard, nil))

// A reply stored with its run's end, while its user deletes the
// conversation: the two take their locks in one order, so neither is
// ever chosen as a deadlock's victim (40P01). (With the run's row locked
// before the conversation's, about one race in twelve deadlocked.)
func TestFinishTurnAndADeleteNeverDeadlock(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	ctx := context.Background()
	turns, convs := store.NewTurns(pool), store.NewConversations(pool)
	var mu sync.Mutex
	var deadlocks []error
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			user := storetest.UserID(t)
			for range 40 {
				turn := mustStart(t, turns, user, 0, "hello")
				end := turnEnd(turn, "Hi.")
				end.Run = &tasks.RunEnd{RunID: turn.RunID, First: 1, Events: [][]byte{[]byte(`"end"`)}}
				var finished, deleted error
				var race sync.WaitGroup
				wait := time.Duration(rand.IntN(400)) * time.Microsecond
				race.Go(func() { _, finished = turns.FinishTurn(ctx, end) })
				race.Go(func() { time.Sleep(wait); deleted = convs.DeleteConversation(ctx, user, turn.Conversation.ID) })
				race.Wait()
				mu.Lock()
				for _, err := range []error{finished, deleted} {
					var pgErr *pgconn.PgError
					if errors.As(err, &pgErr) && pgErr.Code == "40P01" || err != nil && !errors.Is(err, tasks.ErrNotFound) {
						deadlocks = append(deadlocks, err)
					}
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(deadlocks) > 0 {
		t.Fatalf("%d of 160 races failed other than as not found, the first: %v", len(deadlocks), deadlocks[0])
	}
}

// A follower of a run leaves as another joins it, on one replica: the
// joiner told that notifications come gets them, also when its Subscribe
// falls while the leaver's UNLISTEN is under way.
func TestASubscribeDuringAnUnlistenStillHears(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	ctx := context.Background()
	heard := make(chan string, 16)
	up := make(chan struct{}, 1)
	l := store.Listen(pool.Config().ConnString(), quietLog, nil, func(ch, _ string) { heard <- ch },
		func() {
			select {
			case up <- struct{}{}:
			default:
			}
		})
	defer l.Close()
	waitFor(t, up, "the listener to connect")
	told, missed := 0, 0
	for i := range 100 {
		ch := fmt.Sprintf("taskchat_test_%d", i)
		if !l.Subscribe(ctx, ch) {
			t.Fatal("a subscription on a live connection is not live")
		}
		var live bool
		var race sync.WaitGroup
		wait := time.Duration(rand.IntN(300)) * time.Microsecond
		race.Go(func() { l.Unsubscribe(ch) })
		race.Go(func() { time.Sleep(wait); live = l.Subscribe(ctx, ch) })
		race.Wait()
		if live {
			told++
			if _, err := pool.Exec(ctx, `SELECT pg_notify($1, '')`, ch); err != nil {
				t.Fatal(err)
			}
			select {
			case got := <-heard:
				if got != ch {
					t.Fatalf("heard %s, want %s", got, ch)
				}
			case <-time.After(5 * time.Second):
				missed++
			}
		}
		l.Unsubscribe(ch)
	}
	if missed > 0 || told == 0 {
		t.Fatalf("%d of %d subscribers told their notifications come heard none", missed, told)
	}
}
