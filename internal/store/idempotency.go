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
	err := s.pool.QueryRow(ctx, `
		WITH swept AS (
			DELETE FROM idempotency_keys
			WHERE user_id = $1 AND key <> $2 AND created_at < now() - $5::interval
		), ins AS (
			INSERT INTO idempotency_keys AS k (user_id, key, request_hash, locked_until)
			VALUES ($1, $2, $3, now() + $4::interval)
			ON CONFLICT (user_id, key) DO UPDATE
			SET request_hash = excluded.request_hash, locked_until = excluded.locked_until,
			    response = NULL, conversation_id = NULL, turn_id = NULL, created_at = now()
			WHERE k.created_at < now() - $5::interval
			   OR (k.response IS NULL AND k.locked_until < now() AND k.request_hash = excluded.request_hash
			       AND NOT EXISTS (SELECT 1 FROM tool_calls c WHERE c.user_id = $1 AND c.turn_id = k.turn_id))
			RETURNING true AS mine
		)
		SELECT (SELECT mine FROM ins), k.request_hash, k.response,
		       k.response IS NULL AND k.locked_until < now()
		       AND EXISTS (SELECT 1 FROM tool_calls c WHERE c.user_id = $1 AND c.turn_id = k.turn_id),
		       k.conversation_id, k.turn_id
		FROM (SELECT 1) one LEFT JOIN idempotency_keys k ON k.user_id = $1 AND k.key = $2`,
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
	err := s.pool.QueryRow(ctx, `
		UPDATE idempotency_keys SET locked_until = now() + $3::interval
		WHERE user_id = $1 AND key = $2 AND response IS NULL AND locked_until < now()
		RETURNING conversation_id, turn_id`, r.UserID, r.Key, r.LockFor).Scan(&ref.ConversationID, &ref.TurnID)
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
	_, err := s.pool.Exec(ctx, `
		UPDATE idempotency_keys SET response = $3::jsonb, locked_until = NULL
		WHERE user_id = $1 AND key = $2 AND response IS NULL`, userID, key, string(r))
	return translate(err)
}

// ForgetIdempotent ends a running key's request, which failed: a key whose
// turn recorded no tool call is dropped, so that a retry runs again; one
// whose turn did, whatever the caller believes, is kept and its lock
// released, so that a retry finishes that turn at once (see
// BeginIdempotent) instead of hearing "in progress" until the lock lapses.
func (s *Turns) ForgetIdempotent(ctx context.Context, userID, key string) error {
	_, err := s.pool.Exec(ctx, `
		WITH k AS (
			SELECT k.key, EXISTS (SELECT 1 FROM tool_calls c WHERE c.user_id = $1 AND c.turn_id = k.turn_id) AS ran
			FROM idempotency_keys k WHERE k.user_id = $1 AND k.key = $2 AND k.response IS NULL
		), dropped AS (
			DELETE FROM idempotency_keys d USING k WHERE d.user_id = $1 AND d.key = k.key AND NOT k.ran
		)
		UPDATE idempotency_keys u SET locked_until = now() FROM k
		WHERE u.user_id = $1 AND u.key = k.key AND k.ran`, userID, key)
	return translate(err)
}
