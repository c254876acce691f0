package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/taskchat/taskchat/internal/tasks"
)

// BeginIdempotent records a keyed chat request as running, or says why it
// cannot run: it already completed (its response is returned for replay),
// its turn was cut short after tools changed something (the turn is
// returned, to be finished, not run again), the key came with another body
// (tasks.ErrKeyMismatch), or the first request still runs
// (tasks.ErrRequestInProgress). One statement also sweeps the user's
// expired keys, so no background job is needed.
//
// A running key whose lock expired (its replica crashed, or its last write
// failed) is taken over by a retry with the same body when its turn
// recorded no tool call; a key older than KeepFor is reused as new.
func (s *Turns) BeginIdempotent(ctx context.Context, r tasks.IdempotentRequest) (tasks.KeyState, error) {
	var (
		mine, cutShort *bool
		hash           []byte
		response       json.RawMessage
		conv, turn     *int64
	)
	err := s.pool.QueryRow(ctx, stmt.BeginIdempotent,
		r.UserID, r.Key, r.Hash, r.LockFor, r.KeepFor).Scan(&mine, &hash, &response, &cutShort, &conv, &turn)
	switch {
	case err != nil:
		return tasks.KeyState{}, translate(err)
	case mine != nil && *mine:
		return tasks.KeyState{}, nil
	case hash != nil && !bytes.Equal(hash, r.Hash):
		return tasks.KeyState{}, tasks.ErrKeyMismatch
	case response != nil:
		return tasks.KeyState{Replay: response}, nil
	case cutShort != nil && *cutShort:
		return s.lockCutShort(ctx, r)
	case conv != nil && turn != nil:
		return tasks.KeyState{}, &tasks.InProgressError{Turn: tasks.TurnRef{ConversationID: *conv, TurnID: *turn}}
	}
	return tasks.KeyState{}, tasks.ErrRequestInProgress
}

// lockCutShort locks a key whose turn was cut short for the one retry that
// finishes it; a retry arriving meanwhile finds the request in progress.
func (s *Turns) lockCutShort(ctx context.Context, r tasks.IdempotentRequest) (tasks.KeyState, error) {
	var ref tasks.TurnRef
	err := s.pool.QueryRow(ctx, stmt.LockCutShortKey, r.UserID, r.Key, r.LockFor).Scan(&ref.ConversationID, &ref.TurnID)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return tasks.KeyState{}, tasks.ErrRequestInProgress
	case err != nil:
		return tasks.KeyState{}, translate(err)
	}
	return tasks.KeyState{CutShort: &ref}, nil
}

// CompleteIdempotent stores the response of a running key, to be replayed.
func (s *Turns) CompleteIdempotent(ctx context.Context, userID, key string, response json.RawMessage) error {
	r, _ := tasks.StorableJSON(response)
	_, err := s.pool.Exec(ctx, stmt.CompleteIdempotent, userID, key, string(r))
	return translate(err)
}

// ForgetIdempotent ends a running key's request, which failed: a key whose
// turn recorded no tool call is dropped, so that a retry runs again; one
// whose turn did, whatever the caller believes, is kept and its lock
// released, so that a retry finishes that turn at once (see
// BeginIdempotent) instead of hearing "in progress" until the lock lapses.
func (s *Turns) ForgetIdempotent(ctx context.Context, userID, key string) error {
	_, err := s.pool.Exec(ctx, stmt.ForgetIdempotent, userID, key)
	return translate(err)
}
