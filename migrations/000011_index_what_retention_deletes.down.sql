DROP INDEX IF EXISTS token_usage_day_idx;
DROP INDEX IF EXISTS idempotency_keys_created_at_idx;
DROP INDEX IF EXISTS tool_calls_message_id_idx;
DROP INDEX IF EXISTS tool_calls_detached_created_at_idx;
DROP INDEX IF EXISTS conversations_updated_at_idx;
