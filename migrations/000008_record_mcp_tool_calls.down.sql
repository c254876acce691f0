-- MCP calls have no turn, which the rules of before this migration require
-- of every call: they cannot be kept.
DELETE FROM tool_calls WHERE source = 'mcp';

ALTER TABLE tool_calls
    DROP CONSTRAINT tool_calls_source_check,
    ALTER COLUMN turn_id SET NOT NULL,
    DROP COLUMN source;
