DROP FUNCTION check_running_turns(text, integer);
DROP TABLE turn_events;
DROP TABLE turn_runs;
