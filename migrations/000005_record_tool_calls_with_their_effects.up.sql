-- A tool call that changes a task is recorded by the statement that makes
-- the change, in the same transaction, before the turn's reply exists. So a
-- call belongs first to its turn, and to its reply only once that is stored:
--
-- * turn_id is the id of the user message that started the turn. It is not
--   a foreign key: the record outlives its conversation.
-- * message_id, the assistant reply, is NULL until the reply is stored, or
--   until a turn cut short by a crash is finished by whoever next touches
--   its conversation (an interrupted reply with no text then takes the calls).
-- * Deleting a conversation detaches its calls (conversation_id and
--   message_id become NULL) instead of deleting them: every change to a
--   task keeps its record, whatever happens to the chat around it.
ALTER TABLE tool_calls ADD COLUMN turn_id bigint;

-- A stored call's turn is the user message its reply answers: the one
-- right before the reply, with no other reply between them. A reply stored
-- late (after its claim lapsed and the next message came) has none such;
-- its calls take the reply's own id, which no user message can have, so
-- that every (turn_id, seq) stays unique.
UPDATE tool_calls c
SET turn_id = coalesce((
    SELECT max(m.id) FROM messages m
    WHERE m.conversation_id = c.conversation_id AND m.role = 'user' AND m.id < c.message_id
      AND NOT EXISTS (
          SELECT 1 FROM messages r
          WHERE r.conversation_id = m.conversation_id AND r.role = 'assistant' AND r.id > m.id AND r.id < c.message_id)
), c.message_id);

ALTER TABLE tool_calls
    ALTER COLUMN turn_id SET NOT NULL,
    ALTER COLUMN message_id DROP NOT NULL,
    ALTER COLUMN conversation_id DROP NOT NULL,
    DROP CONSTRAINT tool_calls_message_id_seq_key,
    ADD CONSTRAINT tool_calls_turn_id_seq_key UNIQUE (turn_id, seq),
    -- On message_id alone: deleting a conversation nulls the call's
    -- conversation_id too, and a composite key with a NULL in it would no
    -- longer find the call to detach from its deleted reply.
    DROP CONSTRAINT tool_calls_message_id_conversation_id_fkey,
    ADD CONSTRAINT tool_calls_message_id_fkey
        FOREIGN KEY (message_id) REFERENCES messages (id) ON DELETE SET NULL,
    DROP CONSTRAINT tool_calls_conversation_id_user_id_fkey,
    ADD CONSTRAINT tool_calls_conversation_id_user_id_fkey
        FOREIGN KEY (conversation_id, user_id) REFERENCES conversations (id, user_id)
        ON DELETE SET NULL (conversation_id);

-- A keyed request names the turn it started as soon as the turn starts, so
-- a retry that finds the request cut short can tell whether its tools ran.
ALTER TABLE idempotency_keys ADD COLUMN turn_id bigint;
