-- The conversations table and its messages, as a user reads them and
-- deletes them; the turns write them (turns.sql).

-- name: ListConversations
-- The first page of user $1's conversations, at most $2, most recently
-- active first, read from the index on (user_id, updated_at DESC, number
-- DESC). A conversation is known outside the database by its number.
-- The next pages are ListConversationsAfter's: a statement of their own,
-- not one with an optional cursor, because in a generic plan (see planOnce)
-- a condition such as "$3 IS NULL OR (updated_at, id) < ($3, $4)" cannot
-- bound the index scan, and a page deep in a long list would read every
-- conversation before it (TestConversationPagesReadOnlyThemselves).
SELECT number, user_id, title, created_at, updated_at
FROM conversations
WHERE user_id = $1
ORDER BY updated_at DESC, number DESC
LIMIT $2

-- name: ListConversationsAfter
-- A later page of ListConversations: after the conversation $4 last active
-- at $3.
SELECT number, user_id, title, created_at, updated_at
FROM conversations
WHERE user_id = $1 AND (updated_at, number) < ($3, $4)
ORDER BY updated_at DESC, number DESC
LIMIT $2

-- name: ConversationExists
-- Whether user $2 has conversation $1: no row if not.
SELECT true FROM conversations WHERE number = $1 AND user_id = $2

-- name: MessagesPageEnd
-- Where a page of user $2's conversation $1 after the message $3 ends: it
-- walks the messages oldest first, at most $4 of them, while their size
-- adds up to at most $5 bytes — a message's text with its tool calls'
-- arguments and results, as stored — but always takes the first, so that a
-- client always moves on. It sets, for MessagesPage and
-- MessagesPageToolCalls after it in its batch, the page's last message,
-- and returns it with whether a message follows. One message past the
-- bound has its size read, and no more.
WITH RECURSIVE walk AS (
    (SELECT m.id, m.size AS total, 1 AS n FROM (
        SELECT m.id, octet_length(m.content) + (
            SELECT coalesce(sum(octet_length(c.arguments::text) + coalesce(octet_length(c.result::text), 0)), 0)
            FROM tool_calls c WHERE c.conversation_id = (SELECT id FROM conversations WHERE user_id = $2 AND number = $1) AND c.message_id = m.id AND c.user_id = $2) AS size
        FROM messages m WHERE m.conversation_id = (SELECT id FROM conversations WHERE user_id = $2 AND number = $1) AND m.user_id = $2 AND m.id > $3
        ORDER BY m.id LIMIT 1) m)
  UNION ALL
    SELECT m.id, walk.total + m.size, walk.n + 1
    FROM walk CROSS JOIN LATERAL (
        SELECT m.id, octet_length(m.content) + (
            SELECT coalesce(sum(octet_length(c.arguments::text) + coalesce(octet_length(c.result::text), 0)), 0)
            FROM tool_calls c WHERE c.conversation_id = (SELECT id FROM conversations WHERE user_id = $2 AND number = $1) AND c.message_id = m.id AND c.user_id = $2) AS size
        FROM messages m WHERE m.conversation_id = (SELECT id FROM conversations WHERE user_id = $2 AND number = $1) AND m.user_id = $2 AND m.id > walk.id
        ORDER BY m.id LIMIT 1) m
    WHERE walk.n < $4 AND walk.total + m.size <= $5
), last AS (
    SELECT coalesce(max(id), 0) AS id FROM walk
)
SELECT set_config('taskchat.page_last', last.id::text, true)::bigint, EXISTS (
    SELECT 1 FROM messages WHERE conversation_id = (SELECT id FROM conversations WHERE user_id = $2 AND number = $1) AND user_id = $2 AND id > last.id AND last.id > 0)
FROM last

-- name: MessagesPage
-- The messages of user $2's conversation $1 after the message $3 and up to
-- MessagesPageEnd's last, oldest first.
SELECT id, $1::bigint, role, content, interrupted, created_at
FROM messages WHERE conversation_id = (SELECT id FROM conversations WHERE user_id = $2 AND number = $1) AND user_id = $2
  AND id > $3 AND id <= current_setting('taskchat.page_last')::bigint
ORDER BY id

-- name: MessagesPageToolCalls
-- The tool calls of MessagesPage's messages, by message and in order.
SELECT message_id, call_id, tool, arguments, result, is_error, round, seq, duration_ms, created_at, approval_id, approval_live
FROM tool_calls_read
WHERE conversation_id = (SELECT id FROM conversations WHERE user_id = $2 AND number = $1) AND user_id = $2
  AND message_id > $3 AND message_id <= current_setting('taskchat.page_last')::bigint
ORDER BY message_id, seq

-- name: DeleteConversation
-- Deletes user $2's conversation $1; its messages, chat id and run go by
-- cascade, and its tool calls stay, detached (migration 000005).
DELETE FROM conversations WHERE number = $1 AND user_id = $2

-- name: ShowConversation
-- User $2's conversation $1 with its summary, if any.
SELECT number, user_id, title, created_at, updated_at, summary, summary_through, summary_at
FROM conversations WHERE number = $1 AND user_id = $2
