-- A conversation's last turn started again, to write its reply anew (a
-- regenerated reply; ReopenTurn). The message of a conversation's last turn
-- is its newest user message:
--   (SELECT id FROM messages WHERE conversation_id = <its key> AND user_id = $2 AND role = 'user' ORDER BY id DESC LIMIT 1)
-- where its key, the internal id of user $2's conversation numbered $1, is
--   (SELECT id FROM conversations WHERE user_id = $2 AND number = $1)

-- name: ReopenClaim
-- Claims user $2's conversation $1 for token $3 for $4 when no turn holds
-- it and its last turn is the one asked for: its message is $5 (unless
-- NULL), its id $6 (unless 0), and at most its reply follows it. It
-- returns the conversation, whether it claimed it and whether its last
-- turn is the one asked for, as of the statement's snapshot: a
-- conversation whose turn was still writing when the claim was tried reads
-- busy, not moved on, even if that turn has let it go since. (A claim that
-- waits for a committing turn's row lock checks the row again as that turn
-- left it; its last turn is still read as of the snapshot, which at worst
-- claims a turn that is still the last, or reads busy.) No row: no such
-- conversation.
WITH k AS (
    SELECT id FROM conversations WHERE user_id = $2 AND number = $1
), last AS (
    SELECT EXISTS (
        SELECT 1 FROM messages u
        WHERE u.id = (SELECT id FROM messages WHERE conversation_id = (SELECT id FROM k) AND user_id = $2 AND role = 'user' ORDER BY id DESC LIMIT 1)
          AND ($5::text IS NULL OR u.content = $5) AND ($6::bigint = 0 OR u.id = $6)
          AND (SELECT count(*) FROM messages r WHERE r.conversation_id = (SELECT id FROM k) AND r.user_id = $2 AND r.id > u.id) <= 1) AS ok
), claimed AS (
    UPDATE conversations
    SET claim_token = $3, claimed_until = now() + $4::interval, updated_at = now()
    WHERE id = (SELECT id FROM k) AND (claimed_until IS NULL OR claimed_until < now()) AND (SELECT ok FROM last)
    RETURNING id, updated_at
)
SELECT c.number, c.user_id, c.title, c.created_at, coalesce(claimed.updated_at, c.updated_at), claimed.id IS NOT NULL, (SELECT ok FROM last)
FROM conversations c LEFT JOIN claimed ON true
WHERE c.number = $1 AND c.user_id = $2

-- name: ReopenTurn
-- Starts a new run of the last turn of user $2's conversation $1, which the
-- token $3 claimed (ReopenClaim), leased for $5, and tells the request's
-- idempotency key $4 (if any) its turn, the reopened one. It returns the
-- turn's message, the run and the turn's reply, which stays until a new one
-- replaces it (FinishTurn), so a run that fails loses nothing.
WITH u AS (
    SELECT m.id, m.conversation_id, m.role, m.content, m.interrupted, m.created_at
    FROM messages m JOIN conversations c ON c.id = m.conversation_id AND c.user_id = m.user_id
    WHERE m.id = (SELECT id FROM messages WHERE conversation_id = (SELECT id FROM conversations WHERE user_id = $2 AND number = $1)
                  AND user_id = $2 AND role = 'user' ORDER BY id DESC LIMIT 1)
      AND c.claim_token = $3
), k AS (
    UPDATE idempotency_keys SET conversation_id = $1, turn_id = u.id, locked_until = now() + $5::interval
    FROM u WHERE idempotency_keys.user_id = $2 AND key = $4
), r AS (
    INSERT INTO turn_runs (conversation_id, user_id, turn_id, lease_until)
    SELECT u.conversation_id, $2, u.id, now() + $5::interval FROM u
    RETURNING id
)
SELECT u.id, $1::bigint, u.role, u.content, u.interrupted, u.created_at, r.id,
    coalesce((SELECT id FROM messages WHERE conversation_id = u.conversation_id AND user_id = $2 AND id > u.id ORDER BY id LIMIT 1), 0)
FROM u, r

-- name: EarlierCalls
-- Every call the last turn of user $2's conversation $1 made, in order,
-- while the token $3 holds the conversation.
SELECT call_id, tool, arguments, result, is_error, round, seq, duration_ms, created_at, approval_id, approval_live
FROM tool_calls_read
WHERE user_id = $2 AND turn_id = (SELECT id FROM messages WHERE conversation_id = (SELECT id FROM conversations WHERE user_id = $2 AND number = $1)
                                  AND user_id = $2 AND role = 'user' ORDER BY id DESC LIMIT 1)
  AND EXISTS (SELECT 1 FROM conversations WHERE number = $1 AND user_id = $2 AND claim_token = $3)
ORDER BY seq
