-- Each open stream's lease: a turn's stream, or a follower's, on any
-- replica. MAX_STREAMS_PER_USER counts a user's leases, so the cap holds
-- whatever the number of replicas. A replica renews the leases of its open
-- streams in one statement every few seconds and deletes a stream's lease
-- when the stream closes; a replica that dies leaves its leases to run out
-- by lease_until, and open_stream, or retention, deletes them after that.
-- The id is the replica's own, made when the stream opens, so that the
-- statement that starts a streamed turn can take its lease with it.
CREATE TABLE stream_leases (
    id          text        PRIMARY KEY,
    user_id     text        NOT NULL,
    lease_until timestamptz NOT NULL
);
-- A user's leases, counted by open_stream.
CREATE INDEX stream_leases_user_id_lease_until_idx ON stream_leases (user_id, lease_until);
-- What retention deletes: leases that ran out.
CREATE INDEX stream_leases_lease_until_idx ON stream_leases (lease_until);

-- Takes the lease p_id for a stream of user p_user_id, for p_lease, or
-- refuses (SQLSTATE TCS01, DETAIL the count) when the user holds p_max
-- leases already, across every replica. Taking a lease it already holds
-- renews it, so a turn that waits for its conversation and starts again
-- (a decision's continuation) takes it once. The user's leases that ran
-- out go first. The advisory lock, held to the end of the transaction,
-- makes two streams of one user opening at once count each other. It runs
-- alone for a follower, and in the batch that starts a streamed turn, whose
-- error then aborts the batch: such a turn pays no round trip for it.
CREATE FUNCTION open_stream(p_id text, p_user_id text, p_max integer, p_lease interval) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    open_now integer;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended('taskchat_streams:' || p_user_id, 0));
    DELETE FROM stream_leases WHERE user_id = p_user_id AND lease_until <= now();
    SELECT count(*) INTO open_now FROM stream_leases WHERE user_id = p_user_id AND id <> p_id;
    IF open_now >= p_max THEN
        RAISE EXCEPTION 'user holds % streams already', open_now
            USING ERRCODE = 'TCS01', DETAIL = open_now::text;
    END IF;
    INSERT INTO stream_leases (id, user_id, lease_until) VALUES (p_id, p_user_id, now() + p_lease)
    ON CONFLICT (id) DO UPDATE SET lease_until = excluded.lease_until WHERE stream_leases.user_id = excluded.user_id;
END
$$;
