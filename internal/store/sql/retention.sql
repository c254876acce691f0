-- Retention (see Retention): what RETENTION_DAYS no longer keeps. The one
-- part of the store that works across users: every statement picks its rows
-- by age, not by user, at most $2 of them (a batch), and locks those it
-- picks with SKIP LOCKED, so that two passes share the work instead of
-- waiting on each other or deleting a row twice.
--
-- Each picks a batch in a CTE that locks its rows, then deletes them by key:
-- "= ANY(ARRAY(...))" makes that an index (or TID) scan of the batch's keys,
-- whatever the planner thinks of the condition checked again beside it,
-- which on a join it may well scan the whole range of old rows for, in
-- every batch.

-- name: DeleteOldConversations
-- Deletes a batch of conversations untouched for $1 days, oldest first,
-- with their tool calls; their messages and chat ids go by cascade. Its
-- first CTE locks the rows it picks and skips those another pass or a turn
-- has locked; a row a turn claimed or answered meanwhile is checked again
-- against its newest version (READ COMMITTED's recheck of locked rows), and
-- so is it by the DELETE: a conversation with a new turn is never deleted,
-- nor one a turn holds, even with a claim made to look old. Of the $2 it
-- picks, it deletes the oldest whose messages come to at most $3 together,
-- and always the first: a conversation is never split. No conversation's
-- messages are counted past $3 + 1, which is enough to know it does not
-- fit. Deleting the calls here spares the detaching update that deleting
-- the conversation alone would make each of them (see migration 000005):
-- they are as old as it is, so the next statement would delete them anyway.
-- It returns how many it deleted, how many it picked, and how many of those
-- it left for the next statement.
WITH picked AS (
    SELECT id, updated_at FROM conversations
    WHERE updated_at < now() - make_interval(days => $1) AND (claimed_until IS NULL OR claimed_until < now())
    ORDER BY updated_at
    LIMIT $2
    FOR UPDATE SKIP LOCKED
), sized AS (
    SELECT id,
           row_number() OVER w AS pos,
           sum((SELECT count(*) FROM (
               SELECT FROM messages m WHERE m.conversation_id = p.id LIMIT $3::bigint + 1) n)) OVER w AS upto
    FROM picked p
    WINDOW w AS (ORDER BY updated_at, id)
), doomed AS (
    SELECT id FROM sized WHERE pos = 1 OR upto <= $3::bigint
), calls AS (
    DELETE FROM tool_calls WHERE conversation_id = ANY(ARRAY(SELECT id FROM doomed))
), gone AS (
    DELETE FROM conversations
    WHERE id = ANY(ARRAY(SELECT id FROM doomed))
      AND updated_at < now() - make_interval(days => $1) AND (claimed_until IS NULL OR claimed_until < now())
    RETURNING id
)
SELECT (SELECT count(*) FROM gone), (SELECT count(*) FROM picked),
       (SELECT count(*) FROM picked) - (SELECT count(*) FROM doomed)

-- name: DeleteOldDetachedCalls
-- Deletes a batch of tool calls older than $1 days that belong to no
-- conversation: an MCP client's, or those of a conversation its user
-- deleted. A call of a kept conversation stays with it, however old: its
-- thread shows it.
WITH old AS (
    SELECT id FROM tool_calls
    WHERE conversation_id IS NULL AND created_at < now() - make_interval(days => $1)
    ORDER BY created_at
    LIMIT $2
    FOR UPDATE SKIP LOCKED
)
DELETE FROM tool_calls WHERE id = ANY(ARRAY(SELECT id FROM old)) AND conversation_id IS NULL

-- name: DeleteExpiredKeys
-- Deletes a batch of idempotency keys older than $1, as BeginIdempotent
-- does for the user who sends a new key; a key reused as new meanwhile is
-- checked again, by its new age. Rows are named by ctid, which a row keeps
-- while this statement holds its lock.
WITH old AS (
    SELECT ctid FROM idempotency_keys
    WHERE created_at < now() - $1::interval
    ORDER BY created_at
    LIMIT $2
    FOR UPDATE SKIP LOCKED
)
DELETE FROM idempotency_keys
WHERE ctid = ANY(ARRAY(SELECT ctid FROM old)) AND created_at < now() - $1::interval

-- name: DeleteOldRuns
-- Deletes a batch of runs whose lease ended more than $1 ago, with their
-- events by cascade. A run's lease ends with its turn's claim, so a run is
-- kept at least $1 after its turn ended, and at most the turn's longest run
-- more.
WITH old AS (
    SELECT id FROM turn_runs
    WHERE lease_until < now() - $1::interval
    ORDER BY lease_until
    LIMIT $2
    FOR UPDATE SKIP LOCKED
)
DELETE FROM turn_runs WHERE id = ANY(ARRAY(SELECT id FROM old))

-- name: DeleteOldStreamLeases
-- Deletes a batch of stream leases that ran out more than $1 ago: those a
-- replica that died left behind, of users who opened no stream since
-- (open_stream deletes a user's own as it counts them).
WITH old AS (
    SELECT id FROM stream_leases
    WHERE lease_until < now() - $1::interval
    ORDER BY lease_until
    LIMIT $2
    FOR UPDATE SKIP LOCKED
)
DELETE FROM stream_leases WHERE id = ANY(ARRAY(SELECT id FROM old))

-- name: DeleteOldUsage
-- Deletes a batch of token usage rows of UTC days more than $1 days before
-- today. The daily budget reads today's row only.
WITH old AS (
    SELECT ctid FROM token_usage
    WHERE day < (now() AT TIME ZONE 'UTC')::date - $1::int
    ORDER BY day
    LIMIT $2
    FOR UPDATE SKIP LOCKED
)
DELETE FROM token_usage
WHERE ctid = ANY(ARRAY(SELECT ctid FROM old)) AND day < (now() AT TIME ZONE 'UTC')::date - $1::int
