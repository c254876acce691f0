-- The turn_runs and turn_events tables (migration 000013): each turn's run,
-- the log of its events, a batch of them a row, and the stops asked of it.
-- A run starts with its turn, in StartConversation, AddUserMessage or
-- ReopenTurn, and FinishTurn writes its last events (turns.sql, reopen.sql).
-- A run's columns, as scanRun reads them, are those of turn_runs r and of
-- its newest batch of events e, joined by
--   LEFT JOIN LATERAL (SELECT last_seq, last FROM turn_events WHERE run_id = r.id ORDER BY last_seq DESC LIMIT 1) e ON true

-- name: CheckRunningTurns
-- Fails, with SQLSTATE TCR01, when user $1 has $2 turns running or more.
SELECT check_running_turns($1, $2)

-- name: AppendRunEvents
-- Writes the batch $5 of $4 events of user $2's run $1, from number $3, $6
-- saying whether the run ends with them; answers whether the run was asked
-- to stop, and wakes its followers on the channel $7 || run id when it has
-- any. The run's row is locked FOR SHARE, not updated, so the common turn
-- writes it once; the lock orders this write with a follower marking the
-- run watched (WatchRun): either this write sees the mark and NOTIFYs, or
-- the follower's read, after its mark, sees the events. A batch written
-- again (its first write committed, but its answer was lost) is written
-- once; one written again with more events after it overlaps it, and
-- readers skip what they have read (ReadRunEvents).
WITH r AS (
    SELECT id, watched, stop_requested_at IS NOT NULL AS stop FROM turn_runs
    WHERE id = $1 AND user_id = $2 FOR SHARE
), e AS (
    INSERT INTO turn_events (run_id, first_seq, last_seq, events, last)
    SELECT id, $3::int, $3::int + $4::int - 1, $5, $6
    FROM r WHERE $5::text IS NOT NULL
    ON CONFLICT (run_id, last_seq) DO NOTHING
), n AS (
    SELECT pg_notify($7::text || id, '') FROM r WHERE watched
)
SELECT stop, (SELECT count(*) FROM n) FROM r

-- name: LatestRun
-- User $2's conversation $1 and its newest run, if it has one.
SELECT c.number, r.id, c.number, r.turn_id, coalesce(e.last_seq, 0), r.lease_until, coalesce(e.last, false),
       r.stop_requested_at IS NOT NULL, now()
FROM conversations c LEFT JOIN LATERAL (
    SELECT * FROM turn_runs WHERE conversation_id = c.id AND user_id = c.user_id ORDER BY id DESC LIMIT 1
) r ON true LEFT JOIN LATERAL (
    SELECT last_seq, last FROM turn_events WHERE run_id = r.id ORDER BY last_seq DESC LIMIT 1
) e ON true
WHERE c.number = $1 AND c.user_id = $2

-- name: WatchRun
-- Marks user $2's run $1 followed, so that its next write wakes its
-- followers.
UPDATE turn_runs SET watched = true WHERE id = $1 AND user_id = $2 AND NOT watched

-- name: ReadRun
-- User $2's run $1.
SELECT c.number, r.id, c.number, r.turn_id, coalesce(e.last_seq, 0), r.lease_until, coalesce(e.last, false),
       r.stop_requested_at IS NOT NULL, now()
FROM turn_runs r JOIN conversations c ON c.id = r.conversation_id LEFT JOIN LATERAL (
    SELECT last_seq, last FROM turn_events WHERE run_id = r.id ORDER BY last_seq DESC LIMIT 1
) e ON true
WHERE r.id = $1 AND r.user_id = $2

-- name: ReadRunEvents
-- At most $4 batches of the events of user $2's run $1 that end after
-- number $3, in order.
SELECT e.first_seq, e.events FROM turn_events e JOIN turn_runs r ON r.id = e.run_id
WHERE e.run_id = $1 AND r.user_id = $2 AND e.last_seq > $3
ORDER BY e.last_seq LIMIT $4

-- name: RequestStop
-- Marks the running turn of user $2's conversation $1 as asked to stop and
-- notifies the replicas on the channel $3 with its run's id; answers the
-- conversation and its newest run as LatestRun does.
WITH r AS (
    UPDATE turn_runs r SET stop_requested_at = coalesce(stop_requested_at, now())
    WHERE id = (SELECT id FROM turn_runs WHERE conversation_id = (SELECT id FROM conversations WHERE user_id = $2 AND number = $1) AND user_id = $2 ORDER BY id DESC LIMIT 1)
      AND user_id = $2 AND lease_until > now()
      AND NOT EXISTS (SELECT 1 FROM turn_events e WHERE e.run_id = r.id AND e.last)
    RETURNING *
), n AS (
    SELECT pg_notify($3, id::text) FROM r
)
SELECT c.number, r.id, c.number, r.turn_id, coalesce(e.last_seq, 0), r.lease_until, coalesce(e.last, false),
       r.stop_requested_at IS NOT NULL, now()
FROM conversations c LEFT JOIN r ON (SELECT count(*) FROM n) >= 0 LEFT JOIN LATERAL (
    SELECT last_seq, last FROM turn_events WHERE run_id = r.id ORDER BY last_seq DESC LIMIT 1
) e ON true
WHERE c.number = $1 AND c.user_id = $2

-- name: StopsRequested
-- Which of the runs $1 were asked to stop. The one statement here not
-- scoped to a user: a replica asks it of the runs it runs itself, whoever's
-- they are, when it cannot hear stops by NOTIFY.
SELECT id FROM turn_runs WHERE id = ANY($1) AND stop_requested_at IS NOT NULL
