-- Tasks as people keep them (issue 27): a due day, or a day and a time, and
-- a priority; and each user's time zone, which "tomorrow" and "at 5" are
-- read in. Every new column is NULL for the rows there are, so adding them
-- rewrites nothing. The whole file is one transaction, holding writes to
-- tasks while its checks and its partial indexes each read the table once
-- (the indexes start empty: no task has a due date or a priority yet);
-- see docs/operating.md#upgrading.
--
-- A due date is kept as people and calendars keep it (Todoist's due
-- {date, datetime, timezone}): due_on, the day, in due_zone, the IANA zone
-- it was meant in; due_at, the instant, only when a time was given. The
-- service, which reads zones with Go's zone database, also writes what the
-- database would otherwise compute with its own, so that the two never
-- disagree and no statement depends on PostgreSQL knowing a zone: due_by,
-- the last instant the task is due in (due_at, or the last microsecond of
-- due_on in due_zone: tasks.Due.By), which overdue, due-before, due-after
-- and the due-date order all read, one range of one index whatever the
-- zone; and due_text, the due date as the API and the tools show it
-- (tasks.Due.String). A recurring task's rule (an RRULE) and a reminder can
-- join them later as columns of their own, due_by then being the next
-- occurrence.
ALTER TABLE tasks
    ADD COLUMN due_on   date,
    ADD COLUMN due_at   timestamptz,
    ADD COLUMN due_zone text,
    ADD COLUMN due_by   timestamptz,
    ADD COLUMN due_text text,
    -- 1 high, 2 medium, 3 low: ordered as a list sorted by priority is.
    ADD COLUMN priority smallint,
    ADD CONSTRAINT tasks_due_whole CHECK (
        (due_on IS NULL) = (due_zone IS NULL) AND (due_on IS NULL) = (due_by IS NULL)
        AND (due_on IS NULL) = (due_text IS NULL) AND (due_at IS NULL OR due_on IS NOT NULL)),
    ADD CONSTRAINT tasks_priority_check CHECK (priority BETWEEN 1 AND 3);

-- A listing filtered by due date, or sorted by it, reads the first index
-- from its bound; one of open tasks only (overdue, pending by due date)
-- the second, which holds no completed task however many a user keeps; a
-- listing of one priority the third. Partial: tasks without a due date or
-- a priority, most of them, add nothing to them.
CREATE INDEX IF NOT EXISTS tasks_user_id_due_by_number_idx ON tasks (user_id, due_by, number)
    WHERE due_by IS NOT NULL;
CREATE INDEX IF NOT EXISTS tasks_user_id_open_due_by_number_idx ON tasks (user_id, due_by, number)
    WHERE due_by IS NOT NULL AND NOT completed;
CREATE INDEX IF NOT EXISTS tasks_user_id_priority_number_idx ON tasks (user_id, priority, number)
    WHERE priority IS NOT NULL;

-- Each user's settings: for now the time zone (an IANA name, checked by the
-- service); no row means UTC.
CREATE TABLE user_settings (
    user_id    text        PRIMARY KEY CHECK (char_length(user_id) BETWEEN 1 AND 255),
    time_zone  text        NOT NULL CHECK (char_length(time_zone) BETWEEN 1 AND 64),
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- The result of a change to a task, as the tool answers it
-- (tasks.ChangeResult): its number, what happened, its title, and its due
-- date and priority when it has them. The record of a change holds it,
-- built in the statement that makes the change (sql/tasks.sql).
CREATE FUNCTION task_change_result(number bigint, status text, title text, due_text text, priority smallint)
RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
    SELECT jsonb_strip_nulls(jsonb_build_object(
        'task_id', number, 'status', status, 'title', title,
        'due', due_text, 'priority', (ARRAY['high', 'medium', 'low'])[priority]))
$$;
