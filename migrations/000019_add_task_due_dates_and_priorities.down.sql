DROP FUNCTION task_change_result(bigint, text, text, text, smallint);
DROP TABLE user_settings;
DROP INDEX tasks_user_id_priority_number_idx;
DROP INDEX tasks_user_id_open_due_by_number_idx;
DROP INDEX tasks_user_id_due_by_number_idx;
ALTER TABLE tasks
    DROP CONSTRAINT tasks_priority_check,
    DROP CONSTRAINT tasks_due_whole,
    DROP COLUMN priority,
    DROP COLUMN due_text,
    DROP COLUMN due_by,
    DROP COLUMN due_zone,
    DROP COLUMN due_at,
    DROP COLUMN due_on;
