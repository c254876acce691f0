DROP FUNCTION open_stream(text, text, integer, interval);
DROP TABLE stream_leases;
