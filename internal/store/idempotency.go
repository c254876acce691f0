package store

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/taskchat/taskchat/internal/tasks"
)

// BeginIdempotent records a keyed chat request as running, or says why it
// cannot run: it already completed (its response is returned for replay),
// the key came with another body (tasks.ErrKeyMismatch), or the first
// request still runs (tasks.ErrRequestInProgress). One statement also
// sweeps the user's expired keys, so no background job is needed.
//
// A running key whose lock expired (its replica crashed) is taken over by
// a retry with the same body; a key older than KeepFor is reused as new.
func (s *Conversations) BeginIdempotent(ctx context.Context, r tasks.IdempotentRequest) (json.RawMessage, error) {
	var (
		mine     *bool
		hash     []byte
		response json.RawMessage
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
			    response = NULL, conversation_id = NULL, created_at = now()
			WHERE k.created_at < now() - $5::interval
			   OR (k.response IS NULL AND k.locked_until < now() AND k.request_hash = excluded.request_hash)
			RETURNING true AS mine
		)
		SELECT (SELECT mine FROM ins), k.request_hash, k.response
		FROM (SELECT 1) one LEFT JOIN idempotency_keys k ON k.user_id = $1 AND k.key = $2`,
		r.UserID, r.Key, r.Hash, r.LockFor, r.KeepFor).Scan(&mine, &hash, &response)
	switch {
	case err != nil:
		return nil, translate(err)
	case mine != nil && *mine:
		return nil, nil
	case hash != nil && !bytes.Equal(hash, r.Hash):
		return nil, tasks.ErrKeyMismatch
	case response != nil:
		return response, nil
	}
	return nil, tasks.ErrRequestInProgress
}

// ForgetIdempotent drops a running key whose request failed, so that a
// retry runs again instead of being told the request is in progress.
func (s *Conversations) ForgetIdempotent(ctx context.Context, userID, key string) error {
	_, err := s.pool.Exec(ctx, `
		DELETE FROM idempotency_keys WHERE user_id = $1 AND key = $2 AND response IS NULL`, userID, key)
	return translate(err)
}
