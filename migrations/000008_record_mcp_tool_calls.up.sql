-- Tool calls come from two places now: a chat turn's model (source 'chat')
-- and an outside MCP client at /mcp (source 'mcp'). A chat call belongs to
-- its turn, and through it to a conversation and a reply (see 000005). An
-- MCP call belongs to no turn and no conversation: it is recorded on its
-- own, by the statement that makes its change when it changes a task.
--
-- * turn_id is NULL exactly for MCP calls, so UNIQUE (turn_id, seq), which
--   orders a turn's calls and lets a turn's reply attach them, never
--   matches one (NULLs are distinct), and nothing that finds a turn's calls
--   by turn_id, nor a conversation's by conversation_id, ever sees one.
-- * An MCP call has no conversation or reply either, ever.
-- * Rows written before this migration, and by a replica still running the
--   code of before it during a rolling deploy, are chat calls: the default.
ALTER TABLE tool_calls
    ADD COLUMN source text NOT NULL DEFAULT 'chat',
    ALTER COLUMN turn_id DROP NOT NULL,
    ADD CONSTRAINT tool_calls_source_check CHECK (
        (source = 'chat' AND turn_id IS NOT NULL)
        OR (source = 'mcp' AND turn_id IS NULL AND conversation_id IS NULL AND message_id IS NULL));
