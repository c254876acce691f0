package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/taskchat/taskchat/internal/store"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/tasks"
)

// keyRequest is a keyed request with a minute's lock, kept for a day.
func keyRequest(user, key string) tasks.IdempotentRequest {
	return tasks.IdempotentRequest{UserID: user, Key: key, Hash: []byte("body-a"), LockFor: time.Minute, KeepFor: 24 * time.Hour}
}

// toRun reports whether a keyed request is the caller's to run.
func toRun(s tasks.KeyState) bool { return s.Replay == nil && s.CutShort == nil }

func TestIdempotencyKeys(t *testing.T) {
	t.Parallel()
	s, user := newTurns(t), storetest.UserID(t)
	ctx := context.Background()
	req := keyRequest(user, "k1")

	if got, err := s.BeginIdempotent(ctx, req); err != nil || !toRun(got) {
		t.Fatalf("first use: %+v, %v", got, err)
	}
	if _, err := s.BeginIdempotent(ctx, req); !errors.Is(err, tasks.ErrRequestInProgress) {
		t.Fatalf("retry while running: %v", err)
	}
	other := req
	other.Hash = []byte("body-b")
	if _, err := s.BeginIdempotent(ctx, other); !errors.Is(err, tasks.ErrKeyMismatch) {
		t.Fatalf("same key, other body: %v", err)
	}
	bob := req
	bob.UserID = storetest.UserID(t)
	if got, err := s.BeginIdempotent(ctx, bob); err != nil || !toRun(got) {
		t.Fatalf("keys are per user: %+v, %v", got, err)
	}

	turn := mustStartWith(t, s, tasks.TurnStart{UserID: user, Message: "hi", IdempotencyKey: "k1"})
	end := turnEnd(turn, "hello")
	end.IdempotencyKey, end.Response = "k1", json.RawMessage(`{"response":"hello"}`)
	if _, err := s.FinishTurn(ctx, end); err != nil {
		t.Fatal(err)
	}
	if got, err := s.BeginIdempotent(ctx, req); err != nil || got.CutShort != nil || !storetest.SameJSON(got.Replay, end.Response) {
		t.Fatalf("retry after completion: %+v, %v; want the stored response", got, err)
	}

	failed := keyRequest(user, "k2")
	if _, err := s.BeginIdempotent(ctx, failed); err != nil {
		t.Fatal(err)
	}
	if err := s.ForgetIdempotent(ctx, user, "k2"); err != nil {
		t.Fatal(err)
	}
	if got, err := s.BeginIdempotent(ctx, failed); err != nil || !toRun(got) {
		t.Fatalf("retry after a failure runs again: %+v, %v", got, err)
	}

	crashed := keyRequest(user, "k3")
	if _, err := s.BeginIdempotent(ctx, crashed); err != nil {
		t.Fatal(err)
	}
	mustLapseKey(t, user, "k3")
	if got, err := s.BeginIdempotent(ctx, crashed); err != nil || !toRun(got) {
		t.Fatalf("a retry takes over an expired lock: %+v, %v", got, err)
	}
}

// A keyed turn whose tools changed something and that then died must not
// run again: a retry is told which turn to finish, and only one retry is.
func TestKeyOfATurnCutShort(t *testing.T) {
	t.Parallel()
	s, ts := newTurns(t), newTasks(t)
	for _, continued := range []bool{false, true} {
		name := map[bool]string{false: "in a new conversation", true: "in a conversation that goes on"}[continued]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			user := storetest.UserID(t)
			start := tasks.TurnStart{UserID: user, Message: "Add milk", IdempotencyKey: "cut"}
			if continued {
				earlier := mustStart(t, s, user, 0, "Hello")
				mustFinish(t, s, earlier, "Hi.")
				start.ConversationID = earlier.Conversation.ID
			}
			mustCutShortKeyRunsOnce(t, s, ts, start)
		})
	}
}

// mustCutShortKeyRunsOnce begins a keyed request for start, lets its turn
// change a task and die, and checks that retries finish the turn instead of
// running it again.
func mustCutShortKeyRunsOnce(t *testing.T, s *store.Turns, ts *store.Tasks, start tasks.TurnStart) {
	t.Helper()
	ctx, user, key := context.Background(), start.UserID, start.IdempotencyKey
	req := keyRequest(user, key)
	if _, err := s.BeginIdempotent(ctx, req); err != nil {
		t.Fatal(err)
	}
	turn := mustStartWith(t, s, start)
	mustCreate(t, ts, user, "Buy milk", recordOf(turn, 0, "add_task", `{"title":"Buy milk"}`))
	mustLapseKey(t, user, key) // the replica died before the reply

	got, err := s.BeginIdempotent(ctx, req)
	want := tasks.TurnRef{ConversationID: turn.Conversation.ID, TurnID: turn.ID()}
	if err != nil || got.Replay != nil || got.CutShort == nil || *got.CutShort != want {
		t.Fatalf("retry of a turn cut short: %+v, %v; want CutShort %+v", got, err, want)
	}
	if _, err := s.BeginIdempotent(ctx, req); !errors.Is(err, tasks.ErrRequestInProgress) {
		t.Fatalf("a second retry while the first finishes the turn: %v, want in progress", err)
	}
	other := req
	other.Hash = []byte("body-b")
	if _, err := s.BeginIdempotent(ctx, other); !errors.Is(err, tasks.ErrKeyMismatch) {
		t.Fatalf("same key, other body: %v", err)
	}

	mustLapseKey(t, user, key) // the retry that was finishing it died too
	if got, err := s.BeginIdempotent(ctx, req); err != nil || got.CutShort == nil || *got.CutShort != want {
		t.Fatalf("retry after the finishing retry died: %+v, %v; want CutShort again", got, err)
	}
	if calls, err := s.RecoverTurn(ctx, user, want); err != nil || len(calls) != 1 {
		t.Fatalf("recover: %+v, %v", calls, err)
	}
	response := json.RawMessage(`{"response":"","interrupted":true}`)
	if err := s.CompleteIdempotent(ctx, user, key, response); err != nil {
		t.Fatal(err)
	}
	if got, err := s.BeginIdempotent(ctx, req); err != nil || !storetest.SameJSON(got.Replay, response) || got.CutShort != nil {
		t.Fatalf("retry after the turn was finished: %+v, %v; want its response replayed", got, err)
	}
}

// A running key whose lock ran out, and whose turn recorded no call (it
// never started, or its tools changed nothing), is taken over by a retry.
func TestLapsedKeyWhoseTurnRecordedNothingIsTakenOver(t *testing.T) {
	t.Parallel()
	s, user := newTurns(t), storetest.UserID(t)
	ctx := context.Background()
	for _, started := range []bool{false, true} {
		key := map[bool]string{false: "never-started", true: "changed-nothing"}[started]
		t.Run(key, func(t *testing.T) {
			req := keyRequest(user, key)
			if _, err := s.BeginIdempotent(ctx, req); err != nil {
				t.Fatal(err)
			}
			if started {
				mustStartWith(t, s, tasks.TurnStart{UserID: user, Message: "What is on my list?", IdempotencyKey: key})
			}
			mustLapseKey(t, user, key)
			if got, err := s.BeginIdempotent(ctx, req); err != nil || !toRun(got) {
				t.Fatalf("retry: %+v, %v; want it to run", got, err)
			}
		})
	}
}

// Retries racing for a lapsed key: exactly one gets it, the others are
// told the request is in progress.
func TestConcurrentRetriesOfALapsedKey(t *testing.T) {
	t.Parallel()
	s, ts := newTurns(t), newTasks(t)
	ctx := context.Background()
	cases := []struct {
		name    string
		changed bool // whether the lapsed turn's tools changed a task
		won     func(tasks.KeyState) bool
	}{
		{"cut short", true, func(k tasks.KeyState) bool { return k.CutShort != nil }},
		{"changed nothing", false, toRun},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			user := storetest.UserID(t)
			req := keyRequest(user, "race")
			if _, err := s.BeginIdempotent(ctx, req); err != nil {
				t.Fatal(err)
			}
			turn := mustStartWith(t, s, tasks.TurnStart{UserID: user, Message: "Add milk", IdempotencyKey: "race"})
			if c.changed {
				mustCreate(t, ts, user, "Buy milk", recordOf(turn, 0, "add_task", `{"title":"Buy milk"}`))
			}
			for round := range 5 {
				mustLapseKey(t, user, "race")
				var (
					wg    sync.WaitGroup
					start = make(chan struct{})
					got   = make([]tasks.KeyState, 4)
					errs  = make([]error, 4)
				)
				for i := range got {
					wg.Go(func() {
						<-start
						got[i], errs[i] = s.BeginIdempotent(ctx, req)
					})
				}
				close(start)
				wg.Wait()
				winners := 0
				for i := range got {
					switch {
					case errs[i] == nil && c.won(got[i]):
						winners++
					case !errors.Is(errs[i], tasks.ErrRequestInProgress):
						t.Fatalf("round %d, retry %d: %+v, %v", round, i, got[i], errs[i])
					}
				}
				if winners != 1 {
					t.Fatalf("round %d: %d retries got the key, want exactly one", round, winners)
				}
			}
		})
	}
}

// ForgetIdempotent is called when a request fails; a key whose turn
// recorded a change must survive it, so that a retry finds the turn, and
// at once: the failed attempt is over, nothing is in progress any more.
func TestForgetKeepsAKeyWhoseTurnRecordedACall(t *testing.T) {
	t.Parallel()
	s, ts, user := newTurns(t), newTasks(t), storetest.UserID(t)
	ctx := context.Background()
	req := keyRequest(user, "failed-after-a-change")
	if _, err := s.BeginIdempotent(ctx, req); err != nil {
		t.Fatal(err)
	}
	turn := mustStartWith(t, s, tasks.TurnStart{UserID: user, Message: "Add milk", IdempotencyKey: req.Key})
	mustCreate(t, ts, user, "Buy milk", recordOf(turn, 0, "add_task", `{"title":"Buy milk"}`))

	if err := s.ForgetIdempotent(ctx, user, req.Key); err != nil {
		t.Fatal(err)
	}
	got, err := s.BeginIdempotent(ctx, req)
	if err != nil || got.CutShort == nil || got.CutShort.TurnID != turn.ID() {
		t.Fatalf("retry right after the failure: %+v, %v; want the turn to finish, not a new run", got, err)
	}
	if _, err := s.BeginIdempotent(ctx, req); !errors.Is(err, tasks.ErrRequestInProgress) {
		t.Fatalf("a second retry while the first finishes the turn: %v, want in progress", err)
	}
}

// A key whose turn recorded nothing is dropped by ForgetIdempotent: the
// retry runs the request anew.
func TestForgetDropsAKeyWhoseTurnChangedNothing(t *testing.T) {
	t.Parallel()
	s, user := newTurns(t), storetest.UserID(t)
	ctx := context.Background()
	req := keyRequest(user, "failed-before-a-change")
	if _, err := s.BeginIdempotent(ctx, req); err != nil {
		t.Fatal(err)
	}
	mustStartWith(t, s, tasks.TurnStart{UserID: user, Message: "Add milk", IdempotencyKey: req.Key})
	if err := s.ForgetIdempotent(ctx, user, req.Key); err != nil {
		t.Fatal(err)
	}
	if got, err := s.BeginIdempotent(ctx, req); err != nil || got.Replay != nil || got.CutShort != nil {
		t.Fatalf("retry after a failure that changed nothing: %+v, %v; want to run", got, err)
	}
}

func TestKeyIsNotCompletedForADeletedConversation(t *testing.T) {
	t.Parallel()
	s, convs, ts := newTurns(t), newConversations(t), newTasks(t)
	ctx := context.Background()
	// deleted begins a keyed turn, lets it add a task if changed, deletes
	// its conversation and fails to finish it.
	deleted := func(t *testing.T, user string, changed bool) (tasks.IdempotentRequest, tasks.Turn) {
		t.Helper()
		req := keyRequest(user, "gone")
		if _, err := s.BeginIdempotent(ctx, req); err != nil {
			t.Fatal(err)
		}
		turn := mustStartWith(t, s, tasks.TurnStart{UserID: user, Message: "Add milk", IdempotencyKey: "gone"})
		if changed {
			mustCreate(t, ts, user, "Buy milk", recordOf(turn, 0, "add_task", `{"title":"Buy milk"}`))
		}
		mustDeleteConversation(t, convs, user, turn.Conversation.ID)
		end := turnEnd(turn, "too late")
		end.IdempotencyKey, end.Response = "gone", json.RawMessage(`{"response":"too late"}`)
		if _, err := s.FinishTurn(ctx, end); !errors.Is(err, tasks.ErrNotFound) {
			t.Fatalf("finishing a deleted conversation's turn: %v", err)
		}
		if got, err := s.BeginIdempotent(ctx, req); got.Replay != nil || !errors.Is(err, tasks.ErrRequestInProgress) {
			t.Fatalf("the key replays %s, %v; it must not point at a turn that was not stored", got.Replay, err)
		}
		mustLapseKey(t, user, "gone")
		return req, turn
	}

	t.Run("a turn that changed nothing runs again", func(t *testing.T) {
		user := storetest.UserID(t)
		req, _ := deleted(t, user, false)
		if got, err := s.BeginIdempotent(ctx, req); err != nil || !toRun(got) {
			t.Fatalf("retry: %+v, %v; want it to run", got, err)
		}
	})

	t.Run("a turn that changed a task is recovered", func(t *testing.T) {
		user := storetest.UserID(t)
		req, turn := deleted(t, user, true)
		got, err := s.BeginIdempotent(ctx, req)
		if err != nil || got.CutShort == nil || got.CutShort.TurnID != turn.ID() || got.CutShort.ConversationID != turn.Conversation.ID {
			t.Fatalf("retry: %+v, %v; want the turn, cut short, in conversation %d (the number it had)", got, err, turn.Conversation.ID)
		}
		calls, err := s.RecoverTurn(ctx, user, *got.CutShort)
		if err != nil || len(calls) != 1 || calls[0].Tool != "add_task" {
			t.Fatalf("recovered calls = %+v, %v; want the add_task that ran", calls, err)
		}
	})
}
