DROP TRIGGER tasks_take_number ON tasks;
DROP FUNCTION tasks_take_number();
DROP TABLE task_counters;

CREATE INDEX tasks_user_id_id_idx ON tasks (user_id, id);

ALTER TABLE tasks DROP COLUMN number;
