DROP FUNCTION check_token_budget(text, bigint);
DROP TABLE token_usage;
