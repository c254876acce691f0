-- The tool_calls table: the record of every tool call, a chat turn's
-- (source 'chat', with its turn and conversation) or an outside MCP
-- client's (source 'mcp', with neither; migration 000008). A call that
-- changed a task is recorded by the statement that changed it (tasks.sql);
-- a chat turn's other calls by FinishTurn (turns.sql).

-- name: RecordMCPCall
-- An outside MCP client's call that changed no task, with the result its
-- client was told: a row of its own.
INSERT INTO tool_calls (source, user_id, call_id, tool, arguments, result, is_error, round, seq, duration_ms)
VALUES ('mcp', $1, $2, $3, $4::jsonb, $5::jsonb, $6, 0, 0, $7)
