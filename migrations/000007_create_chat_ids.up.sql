-- The chat ids of AI SDK clients (POST /api/{user_id}/chat/ui). useChat
-- names each chat with an id it makes up; the first message of a chat
-- starts a conversation, remembered here under that id for that user, so
-- that the next message with the same id continues it. Chat ids belong to
-- their user: two users' chats may share an id, and a chat id never names
-- another user's conversation. Deleting the conversation deletes its chat
-- id, so a later message with that id starts a new conversation.
--
-- A conversation is remembered by the statement that creates it, so two
-- first messages sent at once with one new chat id cannot both start one:
-- the second fails on the primary key, and nothing of it is written.
CREATE TABLE chat_ids (
    user_id         text        NOT NULL,
    chat_id         text        NOT NULL CHECK (chat_id ~ '^[A-Za-z0-9_.:-]{1,128}$'),
    conversation_id bigint      NOT NULL UNIQUE,
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, chat_id),
    FOREIGN KEY (conversation_id, user_id) REFERENCES conversations (id, user_id) ON DELETE CASCADE
);
