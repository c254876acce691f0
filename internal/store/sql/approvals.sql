-- The approvals table: the tool calls that wait for their person
-- (migration 000014). approval_state(a) is an approval's state now: a
-- pending one that expired, or whose turn is no longer its conversation's
-- last, is no longer live.

-- name: ApprovalTaskTitle
-- The title of user $1's task number $2, for an approval's summary.
SELECT title FROM tasks WHERE user_id = $1 AND number = $2

-- name: RequestApproval
-- Records the call $4 (tool $5, arguments $6, round $7, position $8) of
-- turn $9 in user $1's conversation $2, while the turn of claim token $3
-- holds it, as waiting: the approval, summarised $10 (of the task titled
-- $13), expiring after $11, and the call's record, its result the
-- placeholder $12 with the approval's id added. The claim is read FOR SHARE, as a task change reads
-- it (tasks.sql): a turn that lost its conversation asks for nothing.
WITH held AS (
    SELECT id FROM conversations
    WHERE number = $2 AND user_id = $1 AND claim_token = $3::uuid AND claimed_until > now()
    FOR SHARE
), a AS (
    INSERT INTO approvals (user_id, conversation_id, turn_id, call_id, seq, round, tool, arguments, summary, title, expires_at)
    SELECT $1, held.id, $9, $4, $8, $7, $5, $6::jsonb, $10, $13, now() + $11::interval FROM held
    RETURNING id, conversation_id, created_at, expires_at
), c AS (
    INSERT INTO tool_calls (source, conversation_id, turn_id, user_id, call_id, tool, arguments, result, is_error, round, seq, duration_ms)
    SELECT 'chat', a.conversation_id, $9, $1, $4, $5, $6::jsonb, $12::jsonb || jsonb_build_object('approval_id', a.id), false, $7, $8, 0
    FROM a
)
SELECT id, created_at, expires_at FROM a

-- name: LockTurnApprovals
-- Every approval of the turn of user $1's approval $2, in order, with its
-- state now, locked for a decision: two decisions of one turn's approvals
-- take their locks one after the other, so exactly one of them sees none
-- left waiting.
SELECT id, (SELECT number FROM conversations c WHERE c.id = a.conversation_id), turn_id, call_id, seq, round, tool, arguments, summary, title, approval_state(a),
       coalesce(reason, ''), coalesce(decided_at, 'epoch'), created_at, expires_at
FROM approvals a
WHERE user_id = $1 AND turn_id = (SELECT turn_id FROM approvals WHERE id = $2 AND user_id = $1)
ORDER BY seq
FOR UPDATE

-- name: DecideApproval
-- Decides user $1's approval $2: $3 'approved' or 'denied', for the reason
-- $4 (NULL for none). The caller holds its lock (LockTurnApprovals) and saw
-- it live.
UPDATE approvals SET state = $3, reason = $4, decided_by = $1, decided_at = now()
WHERE id = $2 AND user_id = $1 AND state = 'pending'
RETURNING decided_at

-- name: ListApprovals
-- At most $3 of user $1's live approvals with ids below $2 (0: any),
-- newest first.
SELECT id, (SELECT number FROM conversations c WHERE c.id = a.conversation_id), turn_id, call_id, seq, round, tool, arguments, summary, title, approval_state(a),
       coalesce(reason, ''), coalesce(decided_at, 'epoch'), created_at, expires_at
FROM approvals a
WHERE user_id = $1 AND state = 'pending' AND ($2::bigint = 0 OR id < $2) AND approval_state(a) = 'pending'
ORDER BY id DESC
LIMIT $3

-- name: GetApproval
-- User $1's approval $2, with its state now.
SELECT id, (SELECT number FROM conversations c WHERE c.id = a.conversation_id), turn_id, call_id, seq, round, tool, arguments, summary, title, approval_state(a),
       coalesce(reason, ''), coalesce(decided_at, 'epoch'), created_at, expires_at
FROM approvals a
WHERE user_id = $1 AND id = $2

-- name: TurnApprovals
-- Every approval of user $1's turn $2, in order, with its state now.
SELECT id, (SELECT number FROM conversations c WHERE c.id = a.conversation_id), turn_id, call_id, seq, round, tool, arguments, summary, title, approval_state(a),
       coalesce(reason, ''), coalesce(decided_at, 'epoch'), created_at, expires_at
FROM approvals a
WHERE user_id = $1 AND turn_id = $2
ORDER BY seq
