DROP FUNCTION approval_state(approvals);
DROP TABLE approvals;
