-- The rate_buckets table (migration 000015): each user's token buckets,
-- shared by every replica. A turn takes its token in StartTurn's batch or
-- ReopenTurn's (queueChecks), a request to /mcp alone (Limits).

-- name: TakeRateToken
-- Takes a token from user $1's bucket $2, which refills $3 tokens a minute
-- up to $4; fails, with SQLSTATE TCL01 and the milliseconds until a token
-- is there as its detail, and takes none, when the bucket is empty.
SELECT take_rate_token($1, $2, $3, $4)
