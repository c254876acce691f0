COMMENT ON COLUMN idempotency_keys.conversation_id IS NULL;

DROP TRIGGER conversations_take_number ON conversations;
DROP FUNCTION conversations_take_number();
DROP TABLE conversation_counters;

DROP INDEX conversations_user_id_updated_at_number_idx;
CREATE INDEX conversations_user_id_updated_at_idx ON conversations (user_id, updated_at DESC, id DESC);

ALTER TABLE conversations DROP COLUMN number;
