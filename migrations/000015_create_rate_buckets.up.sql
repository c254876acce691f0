-- Each user's token buckets, one row per kind of request a bucket counts
-- ('turns', 'mcp'): the per-user rates hold across every replica, since
-- every replica takes its tokens from these rows. tokens is what the bucket
-- held at updated_at; it refills at the rate the caller gives, up to the
-- burst, so a row need not be written while it refills. A row left alone
-- long enough is full, as if it were not there; there are at most two a
-- user, so they are kept.
CREATE TABLE rate_buckets (
    user_id    text             NOT NULL,
    kind       text             NOT NULL,
    tokens     double precision NOT NULL,
    updated_at timestamptz      NOT NULL,
    PRIMARY KEY (user_id, kind)
);

-- Takes a token from user p_user_id's bucket p_kind, which refills
-- p_per_minute tokens a minute up to p_burst, or refuses (SQLSTATE TCL01,
-- DETAIL the milliseconds until a token is there) and takes none: the
-- error aborts the transaction, the row's update with it. It runs in the
-- batch that starts a turn, so a turn's check costs no round trip of its
-- own, and alone for a request to /mcp. The row's lock, held to the end of
-- the transaction, orders two requests of one user: the second reads what
-- the first left. clock_timestamp, not now: the second's transaction may
-- have begun before the first wrote.
CREATE FUNCTION take_rate_token(p_user_id text, p_kind text, p_per_minute double precision, p_burst integer)
RETURNS void LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    left_over double precision;
BEGIN
    INSERT INTO rate_buckets AS b (user_id, kind, tokens, updated_at)
    VALUES (p_user_id, p_kind, p_burst - 1, clock_timestamp())
    ON CONFLICT (user_id, kind) DO UPDATE SET
        tokens = least(p_burst, b.tokens
            + greatest(0, extract(epoch FROM clock_timestamp() - b.updated_at)) * p_per_minute / 60) - 1,
        updated_at = clock_timestamp()
    RETURNING tokens INTO left_over;
    IF left_over < 0 THEN
        RAISE EXCEPTION 'user % has no % token left', p_user_id, p_kind
            USING ERRCODE = 'TCL01', DETAIL = ceil(-left_over * 60000 / p_per_minute)::bigint::text;
    END IF;
END
$$;
