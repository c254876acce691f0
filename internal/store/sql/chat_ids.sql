-- The chat_ids table: the conversation a client's own chat id names. A
-- conversation is remembered under its chat id by StartConversation
-- (turns.sql), in the statement that creates it.

-- name: ChatConversation
-- The conversation user $1's chat id $2 names: the one started under it,
-- else the user's conversation numbered $3 (NULL when $2 spells no number);
-- NULL for neither.
SELECT coalesce(
    (SELECT conversation_id FROM chat_ids WHERE user_id = $1 AND chat_id = $2),
    (SELECT id FROM conversations WHERE user_id = $1 AND id = $3))
