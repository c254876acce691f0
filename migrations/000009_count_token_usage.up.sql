-- Each user's token usage per UTC day: what their turns' model calls
-- consumed, as the model reported it (the offline model estimates its own),
-- and how many turns ended that day. A turn adds its usage in the statement
-- that stores its reply. The rows belong to no conversation: deleting one
-- gives no tokens back, so the daily budget (USER_DAILY_TOKEN_BUDGET) cannot
-- be dodged that way. One row per user and day keeps the budget's check a
-- lookup by key, however many turns the day had.
CREATE TABLE token_usage (
    user_id       text   NOT NULL CHECK (char_length(user_id) BETWEEN 1 AND 255),
    day           date   NOT NULL,
    input_tokens  bigint NOT NULL CHECK (input_tokens >= 0),
    output_tokens bigint NOT NULL CHECK (output_tokens >= 0),
    turns         bigint NOT NULL CHECK (turns >= 0),
    PRIMARY KEY (user_id, day)
);

-- Refuses a turn of a user whose usage today (UTC) has reached p_budget. It
-- runs first in the batch that starts a turn: its error aborts the batch's
-- transaction, so nothing of the turn is written, and the check costs no
-- round trip of its own. SQLSTATE TCB01 is how the store tells it from any
-- other error; DETAIL holds today's usage.
CREATE FUNCTION check_token_budget(p_user_id text, p_budget bigint) RETURNS void
LANGUAGE plpgsql STABLE AS $$
DECLARE
    used bigint;
BEGIN
    SELECT input_tokens + output_tokens INTO used FROM token_usage
    WHERE user_id = p_user_id AND day = (now() AT TIME ZONE 'UTC')::date;
    IF used >= p_budget THEN
        RAISE EXCEPTION 'daily token budget of % tokens used up', p_budget
            USING ERRCODE = 'TCB01', DETAIL = used::text;
    END IF;
END
$$;
