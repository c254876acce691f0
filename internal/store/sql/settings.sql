-- The user_settings table (migration 000019): each user's settings, for
-- now the time zone dates are read in. No row: the defaults (UTC).

-- name: UserTimeZone
-- User $1's time zone, '' when unset: read in the batch that starts a
-- turn, for the dates the model reads and writes.
SELECT coalesce((SELECT time_zone FROM user_settings WHERE user_id = $1), '')

-- name: SaveSettings
-- Sets user $1's time zone to $2, and returns when.
INSERT INTO user_settings AS s (user_id, time_zone) VALUES ($1, $2)
ON CONFLICT (user_id) DO UPDATE SET time_zone = excluded.time_zone, updated_at = now()
RETURNING updated_at

-- name: ShowSettings
-- User $1's settings and when they were last set; no row when never.
SELECT time_zone, updated_at FROM user_settings WHERE user_id = $1
