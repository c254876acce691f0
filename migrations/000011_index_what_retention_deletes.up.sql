-- What RETENTION_DAYS deletes (store.Retention), each table found oldest
-- first through an index, so that a pass reads the rows it deletes and not
-- the table around them.
--
-- Plain CREATE INDEX: CONCURRENTLY cannot run in a migration that several
-- replicas may start at once (it waits for every older snapshot, a
-- replica waiting for the migrations' lock among them). On a table too big
-- to lock for the build, create the same indexes CONCURRENTLY by hand
-- first: IF NOT EXISTS then makes this a no-op.
--
-- conversations (updated_at): a turn updates its conversation's row twice
-- (the claim, then the reply), both setting updated_at, which the listing
-- index (user_id, updated_at, id) already holds; so neither update is HOT
-- today, and indexing updated_at again makes no update lose HOT that has
-- it (measured: none of 40,000 such updates was HOT, with or without
-- it). What it costs is one more index entry per such update, two a turn:
-- one more WAL record each, 50-80 bytes on some 410-460. A partial index on
-- unclaimed rows would save the claim's, but would never see a
-- conversation whose claim lapsed with its replica, which then stayed
-- forever; a skip scan of the listing index needs PostgreSQL 18, and
-- walking the primary key reads every conversation still in use.
CREATE INDEX IF NOT EXISTS conversations_updated_at_idx ON conversations (updated_at);

-- tool_calls: only calls that belong to no conversation (MCP calls, and
-- those of conversations users deleted) are deleted on their own; a
-- conversation's go with it. A chat call enters this index only when a
-- user deletes its conversation, so recording one costs nothing more.
CREATE INDEX IF NOT EXISTS tool_calls_detached_created_at_idx ON tool_calls (created_at)
    WHERE conversation_id IS NULL;

-- tool_calls (message_id): deleting a message sets its calls' message_id
-- to NULL (the foreign key's ON DELETE SET NULL), which looks the calls up
-- by message_id, and no index led with it: every message deleted, by
-- retention or by a user deleting a conversation, read the whole of
-- tool_calls_conversation_id_idx. Measured on 200,000 calls, a batch of 200
-- conversations of 10 messages took 2.1-2.3 s without this index and
-- 83-100 ms with it; without it the cost grows with the table. Partial:
-- MCP calls, and chat calls until their reply is stored, have none.
CREATE INDEX IF NOT EXISTS tool_calls_message_id_idx ON tool_calls (message_id)
    WHERE message_id IS NOT NULL;

-- idempotency_keys: a user's expired keys are swept when that user sends a
-- new one (BeginIdempotent); these are the keys of users who never do. A
-- key's later updates (its response, its lock) change no indexed column
-- and stay HOT.
CREATE INDEX IF NOT EXISTS idempotency_keys_created_at_idx ON idempotency_keys (created_at);

-- token_usage: one entry per user and day; a turn's update of its day's row
-- changes only counts, and stays HOT.
CREATE INDEX IF NOT EXISTS token_usage_day_idx ON token_usage (day);
