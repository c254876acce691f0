-- A conversation's id, as its user and the API see it, is its number among
-- that user's conversations, as a task's is (migration 000006): a new
-- user's conversations are 1, 2, 3…, never reused. With one global
-- counter, "conversation 1" in an example was somebody else's, and an id
-- told everyone how many conversations there were. conversations.id stays
-- the internal key, which messages, tool calls, runs, chat ids and
-- approvals reference; it never leaves the database.
--
-- An existing conversation keeps the id it has as its number (ids are
-- unique, so unique per user too), and its user's next conversation takes
-- the number after their highest: every id a client already holds — a
-- page's #c=, a script's --conversation, an AI SDK chat id, a stored
-- response replayed for a retry — names the same conversation after the
-- migration as before it. Only users new since then start at 1.
--
-- The backfill writes every conversation row once (a conversation is one
-- small row; its messages are not touched), under a lock that holds writes
-- to conversations until it commits: on a large table, run it when turns
-- are few (docs/operating.md#upgrading). A replica of before this migration
-- answers with internal ids, which a new one reads as numbers: replace
-- replicas together rather than one by one.
ALTER TABLE conversations ADD COLUMN number bigint;

UPDATE conversations SET number = id;

ALTER TABLE conversations
    ALTER COLUMN number SET NOT NULL,
    ADD CONSTRAINT conversations_user_id_number_key UNIQUE (user_id, number);

-- A user's conversations are listed newest first with the number as the
-- tie-break (ListConversations); within a user, number order is id order.
DROP INDEX conversations_user_id_updated_at_idx;
CREATE INDEX conversations_user_id_updated_at_number_idx ON conversations (user_id, updated_at DESC, number DESC);

-- Each user's highest number handed out. A new conversation takes the next
-- one from this row, bumped by the trigger below in the statement that
-- inserts the conversation: two conversations started at once by one user
-- wait on the row instead of sharing a number, and deleting the newest
-- conversation never frees its number. No row until a user's first.
CREATE TABLE conversation_counters (
    user_id     text   PRIMARY KEY,
    last_number bigint NOT NULL CHECK (last_number > 0)
);

INSERT INTO conversation_counters (user_id, last_number)
SELECT user_id, max(number) FROM conversations GROUP BY user_id;

-- Every insert goes through the counter: one without a number takes the
-- next; one with a number of its own (a restore, a test's bulk load) moves
-- the counter past it, so the next new conversation never collides with it.
CREATE FUNCTION conversations_take_number() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.number IS NULL THEN
        INSERT INTO conversation_counters AS c (user_id, last_number) VALUES (NEW.user_id, 1)
        ON CONFLICT (user_id) DO UPDATE SET last_number = c.last_number + 1
        RETURNING last_number INTO NEW.number;
    ELSE
        INSERT INTO conversation_counters AS c (user_id, last_number) VALUES (NEW.user_id, NEW.number)
        ON CONFLICT (user_id) DO UPDATE SET last_number = greatest(c.last_number, excluded.last_number);
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER conversations_take_number BEFORE INSERT ON conversations
    FOR EACH ROW EXECUTE FUNCTION conversations_take_number();

-- idempotency_keys.conversation_id names the key's conversation by its
-- number from now on (it has no foreign key): a retry is told the number
-- even once the conversation is deleted. The rows there are hold ids,
-- which are the numbers above.
COMMENT ON COLUMN idempotency_keys.conversation_id IS 'the conversation''s number among its user''s (migration 000018)';
