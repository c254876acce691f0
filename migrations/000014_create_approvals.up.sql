-- A tool call that waits for its person's approval (APPROVAL_TOOLS). The
-- call did not run: the turn recorded it, as a call whose result says it
-- waits (its placeholder), and this row holds it until it is decided.
--
-- A decision is a compare-and-set on state ('pending' to 'approved' or
-- 'denied'), so exactly one decision wins. The turn is then continued: it
-- is reopened, the approved call runs (or the declined one is told to the
-- model) as a new call of the same turn with the same call_id — its
-- resolution — and the model answers. An approval is live only while it is
-- pending, before expires_at, and while its turn is its conversation's
-- last: a new message supersedes it without a write (approval_state,
-- below), so starting a turn pays nothing for approvals.
--
-- The row is the audit of the decision: who decided, when, which way and
-- why, for the call (turn_id, call_id). It goes with its conversation.
CREATE TABLE approvals (
    id              bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id         text        NOT NULL,
    conversation_id bigint      NOT NULL,
    -- The turn whose model asked for the call (its user message's id), and
    -- the call: its id, its position in the turn, what it asked.
    turn_id         bigint      NOT NULL,
    call_id         text        NOT NULL,
    seq             integer     NOT NULL,
    round           integer     NOT NULL,
    tool            text        NOT NULL,
    arguments       jsonb       NOT NULL,
    summary         text        NOT NULL,
    -- The title of the task the call names, as the summary showed it: an
    -- approved call whose task changed since does not run.
    title           text        NOT NULL DEFAULT '',
    state           text        NOT NULL DEFAULT 'pending'
                    CHECK (state IN ('pending', 'approved', 'denied')),
    reason          text,
    decided_by      text,
    decided_at      timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now(),
    expires_at      timestamptz NOT NULL,
    UNIQUE (turn_id, seq),
    FOREIGN KEY (conversation_id, user_id) REFERENCES conversations (id, user_id) ON DELETE CASCADE
);

-- GET /api/{user_id}/approvals: a user's pending approvals, newest first.
-- (A turn's approvals, for its continuation and the history's
-- placeholders, are found by UNIQUE (turn_id, seq).)
CREATE INDEX approvals_user_id_id_idx ON approvals (user_id, id DESC) WHERE state = 'pending';

-- The state of an approval now: its stored state, unless it is no longer
-- live — a pending one expired past expires_at, or superseded by a newer
-- user message in its conversation (its turn is no longer the last); and a
-- decided one whose call the turn never resolved before that message came
-- (its resolution: a later call of its turn with its call id) is
-- superseded too: its call did not run, whatever was decided.
CREATE FUNCTION approval_state(a approvals) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT CASE
        WHEN a.state = 'pending' AND a.expires_at <= now() THEN 'expired'
        WHEN NOT EXISTS (SELECT 1 FROM messages m
                         WHERE m.conversation_id = a.conversation_id AND m.id > a.turn_id AND m.role = 'user') THEN a.state
        WHEN a.state = 'pending' THEN 'superseded'
        WHEN EXISTS (SELECT 1 FROM tool_calls c
                     WHERE c.turn_id = a.turn_id AND c.call_id = a.call_id AND c.seq > a.seq) THEN a.state
        ELSE 'superseded'
    END
$$;

-- Whether an approval's call still waits: to be decided (its approval is
-- live), or, decided, for its turn to go on (which it does once its last
-- approval is decided), while the turn is its conversation's last. A
-- call that no longer waits and has no resolution did not run.
CREATE FUNCTION approval_waits(a approvals) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT (a.state <> 'pending' OR a.expires_at > now()) AND NOT EXISTS (
        SELECT 1 FROM messages m
        WHERE m.conversation_id = a.conversation_id AND m.id > a.turn_id AND m.role = 'user')
$$;

-- A chat turn's calls as they are read back (the history, a reopened
-- turn's calls, the messages page): each placeholder with its approval's
-- id and whether its call still waits. The approval is looked for only for
-- a result that says it waits.
CREATE VIEW tool_calls_read AS
SELECT c.message_id, c.conversation_id, c.user_id, c.turn_id, c.call_id, c.tool, c.arguments, c.result, c.is_error,
       c.round, c.seq, c.duration_ms, c.created_at, w.approval_id, w.approval_live
FROM tool_calls c LEFT JOIN LATERAL (
    SELECT a.id AS approval_id, approval_waits(a) AS approval_live FROM approvals a
    WHERE c.result->>'status' = 'awaiting_approval' AND a.turn_id = c.turn_id AND a.seq = c.seq
      AND a.user_id = c.user_id) w ON true;
