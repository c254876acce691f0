DROP FUNCTION approval_waits(approvals);
DROP FUNCTION approval_state(approvals);
DROP TABLE approvals;
