-- A task's id, as people and models see it, is its number on its user's
-- list: 1, 2, 3… per user, never reused for that user. tasks.id stays the
-- internal key. Existing tasks are numbered per user in id order, which is
-- the order they were created and listed in.
ALTER TABLE tasks ADD COLUMN number bigint;

UPDATE tasks t
SET number = n.number
FROM (SELECT id, row_number() OVER (PARTITION BY user_id ORDER BY id) AS number FROM tasks) n
WHERE t.id = n.id;

ALTER TABLE tasks
    ALTER COLUMN number SET NOT NULL,
    ADD CONSTRAINT tasks_user_id_number_key UNIQUE (user_id, number);

-- Listings are ordered, and tasks looked up, by (user_id, number) now.
DROP INDEX tasks_user_id_id_idx;

-- Each user's last number handed out. A new task takes its number by
-- bumping this row in the statement that inserts the task, so two tasks
-- created at once by one user wait on the row instead of sharing a number,
-- and deleting the newest task never frees its number. There is no row
-- for a user until their first task.
CREATE TABLE task_counters (
    user_id     text   PRIMARY KEY,
    last_number bigint NOT NULL CHECK (last_number > 0)
);

INSERT INTO task_counters (user_id, last_number)
SELECT user_id, max(number) FROM tasks GROUP BY user_id;

-- A task inserted without a number — by a replica still running the code of
-- before this migration, during a rolling deploy — takes the next one the
-- same way, so creating tasks never fails while replicas are replaced.
CREATE FUNCTION tasks_take_number() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO task_counters AS c (user_id, last_number) VALUES (NEW.user_id, 1)
    ON CONFLICT (user_id) DO UPDATE SET last_number = c.last_number + 1
    RETURNING last_number INTO NEW.number;
    RETURN NEW;
END
$$;

CREATE TRIGGER tasks_take_number BEFORE INSERT ON tasks
    FOR EACH ROW WHEN (NEW.number IS NULL) EXECUTE FUNCTION tasks_take_number();
