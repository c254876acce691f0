CREATE TABLE conversations (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id    text        NOT NULL CHECK (char_length(user_id) BETWEEN 1 AND 255),
    title      text        NOT NULL CHECK (char_length(title) BETWEEN 1 AND 200),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    -- Lets messages and tool calls reference (id, user_id), so the database
    -- itself refuses a row whose user differs from its conversation's.
    UNIQUE (id, user_id)
);

-- Listing a user's conversations, newest first, paginated by (updated_at, id).
CREATE INDEX conversations_user_id_updated_at_idx ON conversations (user_id, updated_at DESC, id DESC);

CREATE TABLE messages (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    conversation_id bigint      NOT NULL,
    user_id         text        NOT NULL,
    role            text        NOT NULL CHECK (role IN ('user', 'assistant')),
    content         text        NOT NULL,
    -- True when the reply was cut short (client gone, model failed mid-turn):
    -- content then holds only what had been produced.
    interrupted     boolean     NOT NULL DEFAULT false,
    created_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (id, conversation_id),
    FOREIGN KEY (conversation_id, user_id) REFERENCES conversations (id, user_id) ON DELETE CASCADE
);

-- History is read per conversation in id order.
CREATE INDEX messages_conversation_id_id_idx ON messages (conversation_id, id);

CREATE TABLE tool_calls (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    conversation_id bigint      NOT NULL,
    message_id      bigint      NOT NULL,
    user_id         text        NOT NULL,
    call_id         text        NOT NULL CHECK (char_length(call_id) BETWEEN 1 AND 255),
    tool            text        NOT NULL CHECK (char_length(tool) BETWEEN 1 AND 255),
    arguments       jsonb       NOT NULL,
    result          jsonb       NOT NULL,
    is_error        boolean     NOT NULL,
    -- The model round that asked for the call (0-based) and its position in
    -- the turn, so a history replays calls as the model made them.
    round           smallint    NOT NULL CHECK (round >= 0),
    seq             smallint    NOT NULL CHECK (seq >= 0),
    duration_ms     integer     NOT NULL CHECK (duration_ms >= 0),
    created_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (message_id, seq),
    FOREIGN KEY (message_id, conversation_id) REFERENCES messages (id, conversation_id) ON DELETE CASCADE,
    FOREIGN KEY (conversation_id, user_id) REFERENCES conversations (id, user_id) ON DELETE CASCADE
);

-- History and the messages endpoint read a conversation's calls at once.
CREATE INDEX tool_calls_conversation_id_idx ON tool_calls (conversation_id, message_id);
