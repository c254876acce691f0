-- The token_usage table: each user's tokens per UTC day. A turn adds its
-- usage in FinishTurn's statement (turns.sql), and StartTurn checks the
-- daily budget in its batch, so neither costs a round trip of its own; the
-- rows outlive conversations, so deleting one gives no tokens back.

-- name: CheckTokenBudget
-- Fails, with SQLSTATE TCB01 and the tokens used today as its detail, when
-- user $1 has used $2 tokens today or more (migration 000009).
SELECT check_token_budget($1, $2)

-- name: RecordUsage
-- Adds a turn's $2 input and $3 output tokens to user $1's day.
INSERT INTO token_usage AS u (user_id, day, input_tokens, output_tokens, turns)
VALUES ($1, (now() AT TIME ZONE 'UTC')::date, $2, $3, 1)
ON CONFLICT (user_id, day) DO UPDATE SET input_tokens = u.input_tokens + excluded.input_tokens,
    output_tokens = u.output_tokens + excluded.output_tokens, turns = u.turns + 1

-- name: DailyUsage
-- User $1's days from $2 to $3 that have usage, oldest first.
SELECT day, input_tokens, output_tokens, turns FROM token_usage
WHERE user_id = $1 AND day BETWEEN $2 AND $3
ORDER BY day
