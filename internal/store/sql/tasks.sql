-- The tasks table, and the per-user counter that numbers a user's tasks
-- (task_counters). A task's id, as the domain and the API see it, is its
-- number on its user's list; the table's own key, tasks.id, stays inside.
--
-- The four statements that change a task each serve three callers: a change
-- nobody recorded (the REST API), a tool call of a chat turn, and a tool call
-- of an outside MCP client. They take the same parameters after their own:
-- the call's record, all NULL for an unrecorded change.
--
--   source           'chat' or 'mcp'; NULL: no record
--   conversation     the turn's conversation, by its number (chat only)
--   claim_token      the turn's claim on it (chat only)
--   turn_id          the turn (chat only)
--   call_id, tool, arguments
--   status           the result's status (tasks.StatusCreated…)
--   round, seq       the call's model round and position in its turn
--   duration_ms
--
-- A recorded change is one statement, so one transaction and one round
-- trip: it inserts the call's audit row in the same breath as the change,
-- and a change without its record cannot exist. The row's result is the
-- changed task's tasks.ChangeResult, built here from the changed row as the
-- tool builds it in Go: {"task_id", "status", "title"}.
--
-- A chat turn's change is made only while the turn holds its conversation.
-- The claim is read FOR SHARE: a claim taken over meanwhile, which takes
-- the row FOR NO KEY UPDATE, either waits for this change (which its turn's
-- recovery then sees) or makes this one find the claim gone. An MCP
-- client's change has no turn to wait for, and no condition.

-- name: CreateTask
-- A new task, $2 and $3 its title and description; its record from $4. It
-- takes the next number from its user's counter in the same statement. The
-- counter's row is locked until the statement's transaction ends, so tasks
-- created at once by one user never share a number; the guard sits on the
-- bump, so a refused change spends none.
WITH held AS (
    SELECT id FROM conversations
    WHERE number = $5 AND user_id = $1 AND claim_token = $6::uuid AND claimed_until > now()
    FOR SHARE
), n AS (
    INSERT INTO task_counters (user_id, last_number)
    SELECT $1, 1 WHERE $4::text IS DISTINCT FROM 'chat' OR EXISTS (SELECT 1 FROM held)
    ON CONFLICT (user_id) DO UPDATE SET last_number = task_counters.last_number + 1
    RETURNING last_number
), t AS (
    INSERT INTO tasks (user_id, number, title, description)
    SELECT $1, n.last_number, $2, $3 FROM n
    RETURNING number, user_id, title, description, completed, created_at, updated_at
), a AS (
    INSERT INTO tool_calls (source, conversation_id, turn_id, user_id, call_id, tool, arguments, result, is_error, round, seq, duration_ms)
    SELECT $4, (SELECT id FROM held), $7, $1, $8, $9, $10::jsonb,
           jsonb_build_object('task_id', t.number, 'status', $11::text, 'title', t.title),
           false, $12, $13, $14
    FROM t WHERE $4::text IS NOT NULL
)
SELECT number, user_id, title, description, completed, created_at, updated_at FROM t

-- name: CompleteTask
-- Marks task number $2 completed; its record from $3.
WITH held AS (
    SELECT id FROM conversations
    WHERE number = $4 AND user_id = $1 AND claim_token = $5::uuid AND claimed_until > now()
    FOR SHARE
), t AS (
    UPDATE tasks SET completed = true, updated_at = now()
    WHERE user_id = $1 AND number = $2
      AND ($3::text IS DISTINCT FROM 'chat' OR EXISTS (SELECT 1 FROM held))
    RETURNING number, user_id, title, description, completed, created_at, updated_at
), a AS (
    INSERT INTO tool_calls (source, conversation_id, turn_id, user_id, call_id, tool, arguments, result, is_error, round, seq, duration_ms)
    SELECT $3, (SELECT id FROM held), $6, $1, $7, $8, $9::jsonb,
           jsonb_build_object('task_id', t.number, 'status', $10::text, 'title', t.title),
           false, $11, $12, $13
    FROM t WHERE $3::text IS NOT NULL
)
SELECT number, user_id, title, description, completed, created_at, updated_at FROM t

-- name: DeleteTask
-- Deletes task number $2, returning it as it was; its record from $3.
WITH held AS (
    SELECT id FROM conversations
    WHERE number = $4 AND user_id = $1 AND claim_token = $5::uuid AND claimed_until > now()
    FOR SHARE
), t AS (
    DELETE FROM tasks
    WHERE user_id = $1 AND number = $2
      AND ($3::text IS DISTINCT FROM 'chat' OR EXISTS (SELECT 1 FROM held))
    RETURNING number, user_id, title, description, completed, created_at, updated_at
), a AS (
    INSERT INTO tool_calls (source, conversation_id, turn_id, user_id, call_id, tool, arguments, result, is_error, round, seq, duration_ms)
    SELECT $3, (SELECT id FROM held), $6, $1, $7, $8, $9::jsonb,
           jsonb_build_object('task_id', t.number, 'status', $10::text, 'title', t.title),
           false, $11, $12, $13
    FROM t WHERE $3::text IS NOT NULL
)
SELECT number, user_id, title, description, completed, created_at, updated_at FROM t

-- name: UpdateTask
-- Sets the title $3 and the description $4 of task number $2, each unless
-- NULL; its record from $5.
WITH held AS (
    SELECT id FROM conversations
    WHERE number = $6 AND user_id = $1 AND claim_token = $7::uuid AND claimed_until > now()
    FOR SHARE
), t AS (
    UPDATE tasks
    SET title = COALESCE($3, title),
        description = COALESCE($4, description),
        updated_at = now()
    WHERE user_id = $1 AND number = $2
      AND ($5::text IS DISTINCT FROM 'chat' OR EXISTS (SELECT 1 FROM held))
    RETURNING number, user_id, title, description, completed, created_at, updated_at
), a AS (
    INSERT INTO tool_calls (source, conversation_id, turn_id, user_id, call_id, tool, arguments, result, is_error, round, seq, duration_ms)
    SELECT $5, (SELECT id FROM held), $8, $1, $9, $10, $11::jsonb,
           jsonb_build_object('task_id', t.number, 'status', $12::text, 'title', t.title),
           false, $13, $14, $15
    FROM t WHERE $5::text IS NOT NULL
)
SELECT number, user_id, title, description, completed, created_at, updated_at FROM t

-- name: TurnHoldsConversation
-- Whether the turn of claim $3 still holds conversation $1 of user $2: it
-- tells a missing task from an ended turn after a chat turn's change
-- changed nothing.
SELECT EXISTS (
    SELECT 1 FROM conversations
    WHERE number = $1 AND user_id = $2 AND claim_token = $3::uuid AND claimed_until > now())

-- The pages of a user's tasks (ListTasksPage): at most $3 tasks, in number
-- order, after the number $2 (0 for the first page). There is a statement
-- for each pair of filters, each reading from an index that holds the
-- page's tasks in that order: (user_id, number) for all of a user's tasks,
-- (user_id, completed, number) of migration 000012 for the pending or the
-- completed ones. So a page reads about a page of index entries, custom
-- plan or generic, wherever it is in the list and however few of the
-- user's tasks match (TestTaskPagesReadOnlyThemselves). One statement with
-- the status as "$4 = 'all' OR completed = …" would read, for a page of
-- the few pending tasks of a long list, every completed task in between.
-- A query's words, as ILIKE patterns, are matched against each task the
-- index yields, so a page of a rare word reads the user's tasks up to its
-- last match: a user's list, not the table — under PlanFromIndexes,
-- without which the planner, believing the words rare, reads the whole
-- table and sorts it. A word holds no space, so none matches across the
-- two fields.

-- name: ListTasks
SELECT number, user_id, title, description, completed, created_at, updated_at
FROM tasks
WHERE user_id = $1 AND number > $2
ORDER BY number
LIMIT $3

-- name: ListTasksWithStatus
-- $4: completed (true) or pending (false).
SELECT number, user_id, title, description, completed, created_at, updated_at
FROM tasks
WHERE user_id = $1 AND number > $2 AND completed = $4
ORDER BY number
LIMIT $3

-- name: ListTasksMatching
-- $4: the patterns every task must match.
SELECT number, user_id, title, description, completed, created_at, updated_at
FROM tasks
WHERE user_id = $1 AND number > $2 AND title || ' ' || description ILIKE ALL ($4)
ORDER BY number
LIMIT $3

-- name: ListTasksWithStatusMatching
-- $4: completed or pending; $5: the patterns every task must match.
SELECT number, user_id, title, description, completed, created_at, updated_at
FROM tasks
WHERE user_id = $1 AND number > $2 AND completed = $4 AND title || ' ' || description ILIKE ALL ($5)
ORDER BY number
LIMIT $3
