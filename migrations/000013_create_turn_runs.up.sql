-- A turn's run: the log of what a turn streams, so that it outlives the
-- connection that started it. Any replica can follow a run from this table
-- (GET …/stream), and anyone can stop it (POST …/stop); the messages stay
-- the record, and a run is kept only while its turn runs and for a grace
-- period after it (retention deletes it, its events with it).
--
-- lease_until is when a run that never ended counts as cut short: the
-- turn's claim on its conversation ends then too, so no writer is left to
-- end it; retention deletes a run some time after it. watched says a
-- follower waits on the run somewhere: only then does a write of its events
-- NOTIFY (channel taskchat_run_<id>), which carries nothing that is not in
-- these tables. stop_requested_at is set by a stop; the replica running the
-- turn hears it by NOTIFY on taskchat_stop, or reads it with its next write.
CREATE TABLE turn_runs (
    id                bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    conversation_id   bigint      NOT NULL,
    user_id           text        NOT NULL,
    -- The turn's id: its user message's (not a reference: a regenerated
    -- reply runs the same turn again).
    turn_id           bigint      NOT NULL,
    lease_until       timestamptz NOT NULL,
    watched           boolean     NOT NULL DEFAULT false,
    stop_requested_at timestamptz,
    created_at        timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (conversation_id, user_id) REFERENCES conversations (id, user_id) ON DELETE CASCADE
);
-- A run's row is written once, when its turn starts: its events and its end
-- are rows of turn_events, so that the common turn updates no row here
-- (only a follower, marking it watched, and a stop do).

-- A conversation's newest run, for its stream and its stop.
CREATE INDEX turn_runs_conversation_id_id_idx ON turn_runs (conversation_id, id DESC);
-- A user's runs still within their lease, counted by the statement that
-- starts a turn.
CREATE INDEX turn_runs_user_id_lease_until_idx ON turn_runs (user_id, lease_until);
-- What retention deletes: runs whose lease ended a while ago.
CREATE INDEX turn_runs_lease_until_idx ON turn_runs (lease_until);

-- A run's events, written in batches: one row a write, holding the events
-- numbered first_seq to last_seq as a JSON array of their encodings. The
-- row with last holds the run's last event: the run has ended.
CREATE TABLE turn_events (
    run_id    bigint  NOT NULL REFERENCES turn_runs (id) ON DELETE CASCADE,
    first_seq integer NOT NULL CHECK (first_seq >= 1),
    last_seq  integer NOT NULL CHECK (last_seq >= first_seq),
    events    text    NOT NULL,
    last      boolean NOT NULL DEFAULT false,
    PRIMARY KEY (run_id, last_seq)
);

-- Refuses a turn of a user who already runs p_max turns (SQLSTATE TCR01,
-- DETAIL the count), across every replica: runs within their lease that
-- have not ended. It runs in the batch that starts a turn, before the run
-- is inserted: its error aborts the batch, so the check costs no round trip
-- of its own. The advisory lock, held to the end of that transaction,
-- makes two turns of one user starting at once count each other.
CREATE FUNCTION check_running_turns(p_user_id text, p_max integer) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    running integer;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended('taskchat_runs:' || p_user_id, 0));
    SELECT count(*) INTO running FROM turn_runs r
    WHERE r.user_id = p_user_id AND r.lease_until > now()
      AND NOT EXISTS (SELECT 1 FROM turn_events e WHERE e.run_id = r.id AND e.last);
    IF running >= p_max THEN
        RAISE EXCEPTION 'user runs % turns already', running
            USING ERRCODE = 'TCR01', DETAIL = running::text;
    END IF;
END
$$;
