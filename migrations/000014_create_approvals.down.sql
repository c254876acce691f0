DROP VIEW tool_calls_read;
DROP FUNCTION approval_waits(approvals);
DROP FUNCTION approval_state(approvals);
DROP TABLE approvals;
