DROP INDEX IF EXISTS tasks_user_id_completed_number_idx;
