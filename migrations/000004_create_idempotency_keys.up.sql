-- Idempotency-Key records for POST /api/{user_id}/chat, scoped per user.
-- A row is "running" while locked_until is set and response is NULL, and
-- "done" once response holds the final object to replay.
CREATE TABLE idempotency_keys (
    user_id         text        NOT NULL CHECK (char_length(user_id) BETWEEN 1 AND 255),
    key             text        NOT NULL CHECK (char_length(key) BETWEEN 1 AND 255),
    request_hash    bytea       NOT NULL,
    conversation_id bigint,
    response        jsonb,
    locked_until    timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, key),
    CHECK (response IS NULL OR locked_until IS NULL)
);

-- Expired keys are swept per user when that user presents a new key.
CREATE INDEX idempotency_keys_user_id_created_at_idx ON idempotency_keys (user_id, created_at);
