-- The chat_ids table: the conversation a client's own chat id names. A
-- conversation is remembered under its chat id by StartConversation
-- (turns.sql), in the statement that creates it.

-- name: ChatConversation
-- The conversation user $1's chat id $2 names: the one started under it,
-- else the user's conversation numbered $3 (NULL when $2 spells no number);
-- NULL for neither.
SELECT coalesce(
    (SELECT c.number FROM chat_ids i JOIN conversations c ON c.id = i.conversation_id WHERE i.user_id = $1 AND i.chat_id = $2),
    (SELECT number FROM conversations WHERE user_id = $1 AND number = $3))
