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
-- tool builds it in Go: {"task_id", "status", "title", "due", "priority"}
-- (task_change_result, migration 000019).
--
-- A chat turn's change is made only while the turn holds its conversation.
-- The claim is read FOR SHARE: a claim taken over meanwhile, which takes
-- the row FOR NO KEY UPDATE, either waits for this change (which its turn's
-- recovery then sees) or makes this one find the claim gone. An MCP
-- client's change has no turn to wait for, and no condition.

-- name: CreateTask
-- A new task, $2 and $3 its title and description, due on $4 (in the zone
-- $6, at $5 when a time was given; due by $7 and shown as $8: see
-- tasks.Due.By and String), of priority $9 (1-3, NULL for none); its
-- record from $10. It
-- takes the next number from its user's counter in the same statement. The
-- counter's row is locked until the statement's transaction ends, so tasks
-- created at once by one user never share a number; the guard sits on the
-- bump, so a refused change spends none.
WITH held AS (
    SELECT id FROM conversations
    WHERE number = $11 AND user_id = $1 AND claim_token = $12::uuid AND claimed_until > now()
    FOR SHARE
), n AS (
    INSERT INTO task_counters (user_id, last_number)
    SELECT $1, 1 WHERE $10::text IS DISTINCT FROM 'chat' OR EXISTS (SELECT 1 FROM held)
    ON CONFLICT (user_id) DO UPDATE SET last_number = task_counters.last_number + 1
    RETURNING last_number
), t AS (
    INSERT INTO tasks (user_id, number, title, description, due_on, due_at, due_zone, due_by, due_text, priority)
    SELECT $1, n.last_number, $2, $3, $4, $5, $6, $7, $8, $9 FROM n
    RETURNING number, user_id, title, description, completed, created_at, updated_at, due_on, due_at, due_zone, due_by, due_text, priority
), a AS (
    INSERT INTO tool_calls (source, conversation_id, turn_id, user_id, call_id, tool, arguments, result, is_error, round, seq, duration_ms)
    SELECT $10, (SELECT id FROM held), $13, $1, $14, $15, $16::jsonb,
           task_change_result(t.number, $17::text, t.title, t.due_text, t.priority),
           false, $18, $19, $20
    FROM t WHERE $10::text IS NOT NULL
)
SELECT number, user_id, title, description, completed, created_at, updated_at, due_on, due_at, due_zone, due_by, due_text, priority FROM t

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
    RETURNING number, user_id, title, description, completed, created_at, updated_at, due_on, due_at, due_zone, due_by, due_text, priority
), a AS (
    INSERT INTO tool_calls (source, conversation_id, turn_id, user_id, call_id, tool, arguments, result, is_error, round, seq, duration_ms)
    SELECT $3, (SELECT id FROM held), $6, $1, $7, $8, $9::jsonb,
           task_change_result(t.number, $10::text, t.title, t.due_text, t.priority),
           false, $11, $12, $13
    FROM t WHERE $3::text IS NOT NULL
)
SELECT number, user_id, title, description, completed, created_at, updated_at, due_on, due_at, due_zone, due_by, due_text, priority FROM t

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
    RETURNING number, user_id, title, description, completed, created_at, updated_at, due_on, due_at, due_zone, due_by, due_text, priority
), a AS (
    INSERT INTO tool_calls (source, conversation_id, turn_id, user_id, call_id, tool, arguments, result, is_error, round, seq, duration_ms)
    SELECT $3, (SELECT id FROM held), $6, $1, $7, $8, $9::jsonb,
           task_change_result(t.number, $10::text, t.title, t.due_text, t.priority),
           false, $11, $12, $13
    FROM t WHERE $3::text IS NOT NULL
)
SELECT number, user_id, title, description, completed, created_at, updated_at, due_on, due_at, due_zone, due_by, due_text, priority FROM t

-- name: UpdateTask
-- Sets the title $3 and the description $4 of task number $2, each unless
-- NULL; the due date to $6 (at $7, in the zone $8, due by $9, shown as
-- $10: see CreateTask; NULL clears it) when $5; the priority to $12 (NULL
-- clears it) when $11; and completes ($13 true) or reopens ($13 false) it
-- unless $13 is NULL; its record from $14.
WITH held AS (
    SELECT id FROM conversations
    WHERE number = $15 AND user_id = $1 AND claim_token = $16::uuid AND claimed_until > now()
    FOR SHARE
), t AS (
    UPDATE tasks
    SET title = COALESCE($3, title),
        description = COALESCE($4, description),
        due_on = CASE WHEN $5 THEN $6::date ELSE due_on END,
        due_at = CASE WHEN $5 THEN $7::timestamptz ELSE due_at END,
        due_zone = CASE WHEN $5 THEN $8::text ELSE due_zone END,
        due_by = CASE WHEN $5 THEN $9::timestamptz ELSE due_by END,
        due_text = CASE WHEN $5 THEN $10::text ELSE due_text END,
        priority = CASE WHEN $11 THEN $12::smallint ELSE priority END,
        completed = COALESCE($13, completed),
        updated_at = now()
    WHERE user_id = $1 AND number = $2
      AND ($14::text IS DISTINCT FROM 'chat' OR EXISTS (SELECT 1 FROM held))
    RETURNING number, user_id, title, description, completed, created_at, updated_at, due_on, due_at, due_zone, due_by, due_text, priority
), a AS (
    INSERT INTO tool_calls (source, conversation_id, turn_id, user_id, call_id, tool, arguments, result, is_error, round, seq, duration_ms)
    SELECT $14, (SELECT id FROM held), $17, $1, $18, $19, $20::jsonb,
           task_change_result(t.number, $21::text, t.title, t.due_text, t.priority),
           false, $22, $23, $24
    FROM t WHERE $14::text IS NOT NULL
)
SELECT number, user_id, title, description, completed, created_at, updated_at, due_on, due_at, due_zone, due_by, due_text, priority FROM t

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
SELECT number, user_id, title, description, completed, created_at, updated_at, due_on, due_at, due_zone, due_by, due_text, priority
FROM tasks
WHERE user_id = $1 AND number > $2
ORDER BY number
LIMIT $3

-- name: ListTasksWithStatus
-- $4: completed (true) or pending (false).
SELECT number, user_id, title, description, completed, created_at, updated_at, due_on, due_at, due_zone, due_by, due_text, priority
FROM tasks
WHERE user_id = $1 AND number > $2 AND completed = $4
ORDER BY number
LIMIT $3

-- name: ListTasksMatching
-- $4: the patterns every task must match.
SELECT number, user_id, title, description, completed, created_at, updated_at, due_on, due_at, due_zone, due_by, due_text, priority
FROM tasks
WHERE user_id = $1 AND number > $2 AND title || ' ' || description ILIKE ALL ($4)
ORDER BY number
LIMIT $3

-- name: ListTasksWithStatusMatching
-- $4: completed or pending; $5: the patterns every task must match.
SELECT number, user_id, title, description, completed, created_at, updated_at, due_on, due_at, due_zone, due_by, due_text, priority
FROM tasks
WHERE user_id = $1 AND number > $2 AND completed = $4 AND title || ' ' || description ILIKE ALL ($5)
ORDER BY number
LIMIT $3

-- name: ListTasksOfPriority
-- A page of the tasks of priority $4 (1-3), in number order, read from the
-- index on (user_id, priority, number); $5: completed or pending (NULL:
-- both); $6: the patterns every task must match (NULL: none).
SELECT number, user_id, title, description, completed, created_at, updated_at, due_on, due_at, due_zone, due_by, due_text, priority
FROM tasks
WHERE user_id = $1 AND priority = $4 AND number > $2
  AND ($5::bool IS NULL OR completed = $5)
  AND ($6::text[] IS NULL OR title || ' ' || description ILIKE ALL ($6))
ORDER BY number
LIMIT $3

-- name: ListTasksByDue
-- A page of the tasks due from $4 up to $5 (their due_by, see
-- tasks.Due.By; -infinity and infinity for no bound), soonest first,
-- after the task $2 due by $6 (-infinity, 0 for the first page), read from
-- the index on (user_id, due_by, number) from its bound; $7: completed or
-- pending (NULL: both); $8: the priority (NULL: any); $9: the patterns
-- every task must match (NULL: none).
SELECT number, user_id, title, description, completed, created_at, updated_at, due_on, due_at, due_zone, due_by, due_text, priority
FROM tasks
WHERE user_id = $1 AND due_by IS NOT NULL AND due_by >= $4 AND due_by < $5
  AND (due_by, number) > ($6::timestamptz, $2::bigint)
  AND ($7::bool IS NULL OR completed = $7)
  AND ($8::smallint IS NULL OR priority = $8)
  AND ($9::text[] IS NULL OR title || ' ' || description ILIKE ALL ($9))
ORDER BY due_by, number
LIMIT $3

-- name: ListTasksByDueOpen
-- ListTasksByDue of the open tasks only (pending, overdue), read from the
-- index that holds no completed task: a user's completed tasks, however
-- many, are not read past. $7: the priority (NULL: any); $8: the patterns
-- every task must match (NULL: none).
SELECT number, user_id, title, description, completed, created_at, updated_at, due_on, due_at, due_zone, due_by, due_text, priority
FROM tasks
WHERE user_id = $1 AND due_by IS NOT NULL AND NOT completed AND due_by >= $4 AND due_by < $5
  AND (due_by, number) > ($6::timestamptz, $2::bigint)
  AND ($7::smallint IS NULL OR priority = $7)
  AND ($8::text[] IS NULL OR title || ' ' || description ILIKE ALL ($8))
ORDER BY due_by, number
LIMIT $3
