DROP FUNCTION take_rate_token(text, text, double precision, integer);
DROP TABLE rate_buckets;
