-- The idempotency_keys table: a keyed chat request, its turn and, once it
-- completed, its response for replay. StartTurn, ReopenTurn and FinishTurn
-- (turns.sql, reopen.sql) tell a key its turn and its response in their own
-- statements.

-- name: BeginIdempotent
-- Records user $1's key $2, of the request hashed $3, as running, locked
-- for $4, unless it is known; a key older than $5 is swept, or reused as
-- new. A running key whose lock expired is taken over by a retry with the
-- same body when its turn recorded no tool call. It answers whether the
-- key is this request's now (mine), and the key as it is: its hash, its
-- response, whether its turn was cut short after recording calls, its turn
-- and its conversation's number (migration 000018).
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
FROM (SELECT 1) one LEFT JOIN idempotency_keys k ON k.user_id = $1 AND k.key = $2

-- name: LockCutShortKey
-- Locks user $1's running key $2, whose lock expired, for $3: for the one
-- retry that finishes its turn, even once its conversation is deleted:
-- then only its calls are left to report.
UPDATE idempotency_keys SET locked_until = now() + $3::interval
WHERE user_id = $1 AND key = $2 AND response IS NULL AND locked_until < now()
RETURNING conversation_id, turn_id

-- name: CompleteIdempotent
-- Stores the response $3 of user $1's running key $2.
UPDATE idempotency_keys SET response = $3::jsonb, locked_until = NULL
WHERE user_id = $1 AND key = $2 AND response IS NULL

-- name: ForgetIdempotent
-- Ends user $1's running key $2, whose request failed: drops it when its
-- turn recorded no tool call, and releases its lock when it did.
WITH k AS (
    SELECT k.key, EXISTS (SELECT 1 FROM tool_calls c WHERE c.user_id = $1 AND c.turn_id = k.turn_id) AS ran
    FROM idempotency_keys k WHERE k.user_id = $1 AND k.key = $2 AND k.response IS NULL
), dropped AS (
    DELETE FROM idempotency_keys d USING k WHERE d.user_id = $1 AND d.key = k.key AND NOT k.ran
)
UPDATE idempotency_keys u SET locked_until = now() FROM k
WHERE u.user_id = $1 AND u.key = k.key AND k.ran
