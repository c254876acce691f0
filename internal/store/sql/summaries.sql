-- A conversation's summary (migration 000017): read with the history in the
-- batch that starts a turn, compared and set when a compaction stores one.

-- name: HistorySummary
-- User $2's conversation $1's summary, and whether the history window
-- HistoryWindow set (after it in its batch) starts after messages the
-- summary does not cover: a message after the summary's last and before
-- the window's first, or, when the window is empty, before the turn's
-- message. The check reads one index entry, so a turn pays nothing for it.
SELECT c.summary, c.summary_through, c.summary_at, EXISTS (
    SELECT 1 FROM messages m WHERE m.conversation_id = c.id AND m.user_id = $2
      AND m.id > coalesce(c.summary_through, 0)
      AND m.id < CASE WHEN current_setting('taskchat.history_last')::bigint = 0
          THEN (SELECT id FROM messages WHERE conversation_id = (SELECT id FROM conversations WHERE user_id = $2 AND number = $1)
                   AND user_id = $2 AND role = 'user' ORDER BY id DESC LIMIT 1)
          ELSE current_setting('taskchat.history_first')::bigint END)
FROM conversations c WHERE c.number = $1 AND c.user_id = $2

-- name: ClaimToCompact
-- Claims user $2's conversation $1 for token $3 for $4, unless a turn
-- holds it, to compact it on demand. Unlike a turn's claim it leaves
-- updated_at alone: a compaction is not activity.
UPDATE conversations
SET claim_token = $3, claimed_until = now() + $4::interval
WHERE number = $1 AND user_id = $2 AND (claimed_until IS NULL OR claimed_until < now())
RETURNING number, user_id, title, created_at, updated_at

-- name: CompactionPageEnd
-- Where a chunk of user $2's conversation $1 to summarise ends: as
-- MessagesPageEnd (conversations.sql), the messages after $3 and before
-- $6, at most $4 of them, while their characters add up to at most $5,
-- but the first always. It sets taskchat.page_last for MessagesPage and
-- MessagesPageToolCalls after it in its batch.
WITH RECURSIVE walk AS (
    (SELECT m.id, m.size AS total, 1 AS n FROM (
        SELECT m.id, char_length(m.content) + (
            SELECT coalesce(sum(char_length(c.arguments::text) + coalesce(char_length(c.result::text), 0)), 0)
            FROM tool_calls c WHERE c.conversation_id = (SELECT id FROM conversations WHERE user_id = $2 AND number = $1) AND c.message_id = m.id AND c.user_id = $2) AS size
        FROM messages m WHERE m.conversation_id = (SELECT id FROM conversations WHERE user_id = $2 AND number = $1) AND m.user_id = $2 AND m.id > $3 AND m.id < $6
        ORDER BY m.id LIMIT 1) m)
  UNION ALL
    SELECT m.id, walk.total + m.size, walk.n + 1
    FROM walk CROSS JOIN LATERAL (
        SELECT m.id, char_length(m.content) + (
            SELECT coalesce(sum(char_length(c.arguments::text) + coalesce(char_length(c.result::text), 0)), 0)
            FROM tool_calls c WHERE c.conversation_id = (SELECT id FROM conversations WHERE user_id = $2 AND number = $1) AND c.message_id = m.id AND c.user_id = $2) AS size
        FROM messages m WHERE m.conversation_id = (SELECT id FROM conversations WHERE user_id = $2 AND number = $1) AND m.user_id = $2 AND m.id > walk.id AND m.id < $6
        ORDER BY m.id LIMIT 1) m
    WHERE walk.n < $4 AND walk.total + m.size <= $5
)
SELECT set_config('taskchat.page_last', coalesce(max(id), 0)::text, true)::bigint FROM walk

-- name: SaveSummary
-- Stores the summary $3 of user $2's conversation $1, through the message
-- $5, in place of the one through $4 (0: none), only if that is still the
-- conversation's and $5 is past it: of two compactions of one span, the
-- second finds the first's and writes nothing (it waits for the first's
-- row lock, then reads the row again). Adds $6 input and $7 output tokens,
-- what writing it cost, to the user's day either way. It returns when the
-- summary was stored (NULL: it was not) and whether the conversation
-- exists.
WITH s AS (
    UPDATE conversations SET summary = $3, summary_through = $5, summary_at = now()
    WHERE number = $1 AND user_id = $2 AND coalesce(summary_through, 0) = $4 AND $5 > $4
    RETURNING summary_at
), u AS (
    INSERT INTO token_usage AS u (user_id, day, input_tokens, output_tokens, turns)
    SELECT $2, (now() AT TIME ZONE 'UTC')::date, $6, $7, 0 WHERE $6::bigint + $7::bigint > 0
    ON CONFLICT (user_id, day) DO UPDATE SET input_tokens = u.input_tokens + excluded.input_tokens,
        output_tokens = u.output_tokens + excluded.output_tokens
)
SELECT (SELECT summary_at FROM s), EXISTS (SELECT 1 FROM conversations WHERE number = $1 AND user_id = $2)
