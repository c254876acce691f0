-- Calls whose conversation was deleted, or whose turn never stored a reply,
-- cannot be put back under the old rules, which had no place for them.
DELETE FROM tool_calls WHERE message_id IS NULL OR conversation_id IS NULL;

ALTER TABLE idempotency_keys DROP COLUMN turn_id;

ALTER TABLE tool_calls
    DROP CONSTRAINT tool_calls_conversation_id_user_id_fkey,
    ADD CONSTRAINT tool_calls_conversation_id_user_id_fkey
        FOREIGN KEY (conversation_id, user_id) REFERENCES conversations (id, user_id) ON DELETE CASCADE,
    DROP CONSTRAINT tool_calls_message_id_fkey,
    ADD CONSTRAINT tool_calls_message_id_conversation_id_fkey
        FOREIGN KEY (message_id, conversation_id) REFERENCES messages (id, conversation_id) ON DELETE CASCADE,
    DROP CONSTRAINT tool_calls_turn_id_seq_key,
    ADD CONSTRAINT tool_calls_message_id_seq_key UNIQUE (message_id, seq),
    ALTER COLUMN conversation_id SET NOT NULL,
    ALTER COLUMN message_id SET NOT NULL,
    DROP COLUMN turn_id;
