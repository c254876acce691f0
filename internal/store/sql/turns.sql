-- A chat turn's writes: the claim on its conversation, the user message and
-- its run, the history it reads, its reply with its tool calls, and the
-- recovery of a turn cut short. StartTurn and FinishTurn each send all
-- their statements at once.

-- name: CommitLazily
-- Has the transaction of its batch commit without waiting for its WAL to
-- reach the disk (see commitLazily).
SELECT set_config('synchronous_commit', 'off', true)

-- name: PlanFromIndexes
-- Has the statements after it in its batch, in its transaction only, reach
-- their rows through an index (see planFromIndexes).
SELECT set_config('enable_bitmapscan', 'off', true), set_config('enable_seqscan', 'off', true)

-- name: StartConversation
-- Creates user $1's conversation titled $2, claimed by token $3 for $4, with
-- its first message $5 and the run of its first turn; tells the request's
-- idempotency key $6 (if any) its turn; and remembers the conversation
-- under the client's chat id $7, unless that is NULL: the conversation and
-- its chat id are written together or not at all.
WITH c AS (
    INSERT INTO conversations (user_id, title, claim_token, claimed_until)
    VALUES ($1, $2, $3, now() + $4::interval)
    RETURNING id, number, user_id, title, created_at, updated_at
), m AS (
    INSERT INTO messages (conversation_id, user_id, role, content)
    SELECT id, user_id, 'user', $5 FROM c
    RETURNING id, conversation_id, role, content, interrupted, created_at
), k AS (
    UPDATE idempotency_keys SET conversation_id = (SELECT number FROM c), turn_id = m.id, locked_until = now() + $4::interval
    FROM m WHERE idempotency_keys.user_id = $1 AND key = $6
), r AS (
    INSERT INTO turn_runs (conversation_id, user_id, turn_id, lease_until)
    SELECT m.conversation_id, $1, m.id, now() + $4::interval FROM m
    RETURNING id
), u AS (
    INSERT INTO chat_ids (user_id, chat_id, conversation_id)
    SELECT user_id, $7, id FROM c WHERE $7::text IS NOT NULL
)
SELECT c.number, c.user_id, c.title, c.created_at, c.updated_at,
       m.id, c.number, m.role, m.content, m.interrupted, m.created_at, r.id
FROM c, m, r

-- name: ClaimConversation
-- Claims user $2's conversation $1 for token $3 for $4, unless a turn
-- holds it.
UPDATE conversations
SET claim_token = $3, claimed_until = now() + $4::interval, updated_at = now()
WHERE number = $1 AND user_id = $2 AND (claimed_until IS NULL OR claimed_until < now())
RETURNING number, user_id, title, created_at, updated_at

-- name: AddUserMessage
-- Stores the user message $4 in user $2's conversation $1, which the turn
-- of token $3 claimed, with the run of its turn, leased for $6; and tells
-- the request's idempotency key $5 (if any) its turn. The key's lock is
-- renewed to end with the claim: a retry must not find the key free while
-- the turn may still write.
WITH m AS (
    INSERT INTO messages (conversation_id, user_id, role, content)
    SELECT id, user_id, 'user', $4 FROM conversations
    WHERE number = $1 AND user_id = $2 AND claim_token = $3
    RETURNING id, conversation_id, role, content, interrupted, created_at
), k AS (
    UPDATE idempotency_keys SET conversation_id = $1, turn_id = m.id, locked_until = now() + $6::interval
    FROM m WHERE idempotency_keys.user_id = $2 AND key = $5
), r AS (
    INSERT INTO turn_runs (conversation_id, user_id, turn_id, lease_until)
    SELECT m.conversation_id, $2, m.id, now() + $6::interval FROM m
    RETURNING id
)
SELECT m.id, $1::bigint, m.role, m.content, m.interrupted, m.created_at, r.id FROM m, r

-- name: HistoryWindow
-- Bounds the history of user $2's conversation $1 before it is read: walks
-- its messages before the turn's (its newest user message, which the batch
-- stores or reopens; a reopened turn's old reply, after it, is not read)
-- newest first, at most $3 of them, and only while their size adds up to at most
-- $4 characters — a message's text with its tool calls' arguments and
-- results, as agent.History counts them at four characters a token at
-- least, so the walk never stops before a message History would keep. It
-- sets, for HistoryMessages and HistoryToolCalls after it in its batch, the
-- window they read: from the oldest user message the walk reached (a
-- history starts at one, as History's does) to the newest it walked; none
-- when it reached no user message. One message past the budget has its
-- size read, and no more.
WITH RECURSIVE walk AS (
    (SELECT id, role, size AS total, 1 AS n FROM (
        SELECT m.id, m.role, char_length(m.content) + (
            SELECT coalesce(sum(char_length(c.arguments::text) + coalesce(char_length(c.result::text), 0)), 0)
            FROM tool_calls c WHERE c.conversation_id = (SELECT id FROM conversations WHERE user_id = $2 AND number = $1) AND c.message_id = m.id AND c.user_id = $2) AS size
        FROM messages m WHERE m.conversation_id = (SELECT id FROM conversations WHERE user_id = $2 AND number = $1) AND m.user_id = $2
          AND m.id < (SELECT id FROM messages WHERE conversation_id = (SELECT id FROM conversations WHERE user_id = $2 AND number = $1) AND user_id = $2 AND role = 'user' ORDER BY id DESC LIMIT 1)
        ORDER BY m.id DESC LIMIT 1) newest
     WHERE size <= $4)
  UNION ALL
    SELECT m.id, m.role, walk.total + m.size, walk.n + 1
    FROM walk CROSS JOIN LATERAL (
        SELECT m.id, m.role, char_length(m.content) + (
            SELECT coalesce(sum(char_length(c.arguments::text) + coalesce(char_length(c.result::text), 0)), 0)
            FROM tool_calls c WHERE c.conversation_id = (SELECT id FROM conversations WHERE user_id = $2 AND number = $1) AND c.message_id = m.id AND c.user_id = $2) AS size
        FROM messages m WHERE m.conversation_id = (SELECT id FROM conversations WHERE user_id = $2 AND number = $1) AND m.user_id = $2 AND m.id < walk.id
        ORDER BY m.id DESC LIMIT 1) m
    WHERE walk.n < $3 AND walk.total + m.size <= $4
)
SELECT set_config('taskchat.history_first', coalesce(min(id) FILTER (WHERE role = 'user'), 1)::text, true),
       set_config('taskchat.history_last', CASE WHEN bool_or(role = 'user') THEN max(id) ELSE 0 END::text, true)
FROM walk

-- name: HistoryMessages
-- User $2's conversation $1's messages in HistoryWindow's window, oldest
-- first; after PlanFromIndexes.
SELECT id, $1::bigint, role, content, interrupted, created_at
FROM messages WHERE conversation_id = (SELECT id FROM conversations WHERE user_id = $2 AND number = $1) AND user_id = $2
  AND id BETWEEN current_setting('taskchat.history_first')::bigint AND current_setting('taskchat.history_last')::bigint
ORDER BY id

-- name: HistoryToolCalls
-- The tool calls of HistoryMessages' messages, by message and in order.
SELECT message_id, call_id, tool, arguments, result, is_error, round, seq, duration_ms, created_at, approval_id, approval_live
FROM tool_calls_read
WHERE conversation_id = (SELECT id FROM conversations WHERE user_id = $2 AND number = $1) AND user_id = $2
  AND message_id BETWEEN current_setting('taskchat.history_first')::bigint AND current_setting('taskchat.history_last')::bigint
ORDER BY message_id, seq

-- name: FinishTurn
-- Stores the reply $4 (interrupted: $5) in user $2's conversation $1,
-- attaches every tool call of turn $15 to it ($6 to $12 and $16, a column
-- each, for unnest), releases the claim of token $3, completes the
-- idempotency key $14 with the response $13, adds the turn's usage ($17
-- input and $18 output tokens) to its user's day, and, for the run $19,
-- writes its last $21 events $22 from number $20 and wakes its followers
-- on the channel $23 || run id: one statement, so one transaction and one
-- round trip. A call recorded when it ran (it changed a task) gets the
-- reply; the others are inserted. A reopened turn's reply replaces the one
-- it had, $24 (ReopenTurn kept it until now), and takes its calls.
WITH m AS (
    INSERT INTO messages (conversation_id, user_id, role, content, interrupted)
    SELECT id, user_id, 'assistant', $4, $5 FROM conversations WHERE number = $1 AND user_id = $2
    RETURNING id, conversation_id, created_at
), old AS (
    -- The reply $24 a reopened turn had (0: none), while the turn's claim
    -- stands: once another turn took the conversation, it is left alone.
    DELETE FROM messages r USING m
    WHERE r.id = $24 AND r.conversation_id = m.conversation_id AND r.user_id = $2 AND r.role = 'assistant'
      AND EXISTS (SELECT 1 FROM conversations WHERE id = m.conversation_id AND claim_token = $3)
    RETURNING r.id
), t AS (
    INSERT INTO tool_calls AS c (conversation_id, message_id, turn_id, user_id, call_id, tool, arguments, result, is_error, round, seq, duration_ms)
    SELECT m.conversation_id, m.id, $15, $2, x.call_id, x.tool, x.arguments::jsonb, x.result::jsonb, x.is_error, x.round, x.seq, x.duration_ms
    FROM m, unnest($6::text[], $7::text[], $8::text[], $9::text[], $10::bool[], $11::int[], $12::int[], $16::int[])
        AS x(call_id, tool, arguments, result, is_error, round, duration_ms, seq)
    ON CONFLICT (turn_id, seq) DO UPDATE SET message_id = excluded.message_id, duration_ms = excluded.duration_ms
    WHERE c.user_id = excluded.user_id AND (c.message_id IS NULL OR c.message_id IN (SELECT id FROM old))
), c AS (
    UPDATE conversations SET claim_token = NULL, claimed_until = NULL, updated_at = now()
    WHERE number = $1 AND user_id = $2 AND claim_token = $3
), k AS (
    UPDATE idempotency_keys SET response = $13::jsonb, conversation_id = $1, turn_id = $15, locked_until = NULL
    FROM m WHERE user_id = $2 AND key = $14
      AND response IS NULL AND (turn_id IS NULL OR turn_id = $15)
), u AS (
    INSERT INTO token_usage AS u (user_id, day, input_tokens, output_tokens, turns)
    VALUES ($2, (now() AT TIME ZONE 'UTC')::date, $17, $18, 1)
    ON CONFLICT (user_id, day) DO UPDATE SET input_tokens = u.input_tokens + excluded.input_tokens,
        output_tokens = u.output_tokens + excluded.output_tokens, turns = u.turns + 1
), lc AS (
    -- The conversation's lock before the run's: a delete of the
    -- conversation takes them in that order (its run goes by cascade), so
    -- the two never wait on each other in a circle.
    SELECT id FROM conversations WHERE number = $1 AND user_id = $2 AND $19::bigint IS NOT NULL FOR NO KEY UPDATE
), r AS (
    -- The run, locked as AppendRunEvents locks it (runs.sql).
    SELECT id, watched, stop_requested_at IS NOT NULL AS stop FROM turn_runs
    WHERE id = $19 AND user_id = $2 AND EXISTS (SELECT 1 FROM lc) AND EXISTS (SELECT 1 FROM m) FOR SHARE
), ev AS (
    INSERT INTO turn_events (run_id, first_seq, last_seq, events, last)
    SELECT id, $20::int, $20::int + $21::int - 1, $22, true
    FROM r WHERE $22::text IS NOT NULL
    ON CONFLICT (run_id, last_seq) DO NOTHING
), nt AS (
    SELECT pg_notify($23::text || id, '') FROM r WHERE watched
)
SELECT id, created_at, (SELECT count(*) FROM nt) FROM m

-- name: AbandonTurn
-- Releases the claim of token $3 on user $2's conversation $1.
UPDATE conversations SET claim_token = NULL, claimed_until = NULL
WHERE number = $1 AND user_id = $2 AND claim_token = $3

-- name: TurnCalls
-- Every call user $1's turn $2 recorded, in order.
SELECT call_id, tool, arguments, result, is_error, round, seq, duration_ms, created_at, approval_id, approval_live
FROM tool_calls_read
WHERE user_id = $1 AND turn_id = $2 ORDER BY seq

-- name: LockConversationToRecover
-- Locks user $2's conversation $1 when no turn holds it and a turn of it
-- was cut short (tool calls with no reply), so that two requests finishing
-- it one after the other see each other's work (each statement of a batch
-- reads what committed before it started).
SELECT 1 FROM conversations
WHERE number = $1 AND user_id = $2 AND (claimed_until IS NULL OR claimed_until < now()) AND EXISTS (
    SELECT 1 FROM tool_calls WHERE conversation_id = conversations.id AND user_id = $2 AND message_id IS NULL)
FOR UPDATE

-- RecoverConversationUnheld and RecoverConversationClaimed finish a turn of
-- user $2's conversation $1 that was cut short — tool calls that changed
-- tasks, recorded with no reply — the first when no turn holds the
-- conversation, the second when the turn of claim token $3 does: the calls
-- get an interrupted reply with no text. At most one turn of a conversation
-- is ever in that state, since the next turn's StartTurn runs the second
-- first, under the claim it just took; other callers lock the row first
-- (LockConversationToRecover). That turn is the conversation's last: a
-- reply after its message is the one it had before it was reopened, which
-- the interrupted reply replaces, with its calls, as FinishTurn's would.

-- name: RecoverConversationUnheld
WITH m AS (
    INSERT INTO messages (conversation_id, user_id, role, content, interrupted)
    SELECT id, user_id, 'assistant', '', true FROM conversations
    WHERE number = $1 AND user_id = $2 AND (claimed_until IS NULL OR claimed_until < now()) AND EXISTS (
        SELECT 1 FROM tool_calls WHERE conversation_id = conversations.id AND user_id = $2 AND message_id IS NULL)
    RETURNING id, conversation_id
), old AS (
    DELETE FROM messages r USING m
    WHERE r.conversation_id = m.conversation_id AND r.user_id = $2 AND r.role = 'assistant'
      AND r.id > (SELECT id FROM messages WHERE conversation_id = (SELECT id FROM conversations WHERE user_id = $2 AND number = $1)
                  AND user_id = $2 AND role = 'user' ORDER BY id DESC LIMIT 1)
    RETURNING r.id
)
UPDATE tool_calls SET message_id = m.id FROM m
WHERE tool_calls.conversation_id = m.conversation_id AND user_id = $2 AND (message_id IS NULL OR message_id IN (SELECT id FROM old))

-- name: RecoverConversationClaimed
WITH m AS (
    INSERT INTO messages (conversation_id, user_id, role, content, interrupted)
    SELECT id, user_id, 'assistant', '', true FROM conversations
    WHERE number = $1 AND user_id = $2 AND claim_token = $3::uuid AND EXISTS (
        SELECT 1 FROM tool_calls WHERE conversation_id = conversations.id AND user_id = $2 AND message_id IS NULL)
    RETURNING id, conversation_id
), old AS (
    DELETE FROM messages r USING m
    WHERE r.conversation_id = m.conversation_id AND r.user_id = $2 AND r.role = 'assistant'
      AND r.id > (SELECT id FROM messages WHERE conversation_id = (SELECT id FROM conversations WHERE user_id = $2 AND number = $1)
                  AND user_id = $2 AND role = 'user' ORDER BY id DESC LIMIT 1)
    RETURNING r.id
)
UPDATE tool_calls SET message_id = m.id FROM m
WHERE tool_calls.conversation_id = m.conversation_id AND user_id = $2 AND (message_id IS NULL OR message_id IN (SELECT id FROM old))
