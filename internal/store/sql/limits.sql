-- The rate_buckets table (migration 000015): each user's token buckets,
-- shared by every replica. A turn takes its token in StartTurn's batch or
-- ReopenTurn's (queueChecks), a request to /mcp alone (Limits). The
-- stream_leases table (migration 000016): every replica's open streams,
-- each user's counted against their cap; a streamed turn takes its lease in
-- its starting batch, any other stream alone.

-- name: TakeRateToken
-- Takes a token from user $1's bucket $2, which refills $3 tokens a minute
-- up to $4; fails, with SQLSTATE TCL01 and the milliseconds until a token
-- is there as its detail, and takes none, when the bucket is empty.
SELECT take_rate_token($1, $2, $3, $4)

-- name: OpenStream
-- Takes the lease $1 of a stream of user $2, who may hold $3, for $4;
-- fails, with SQLSTATE TCS01 and the user's count as its detail, and takes
-- none, when the user holds $3 leases already.
SELECT open_stream($1, $2, $3, $4)

-- name: CloseStream
-- Gives back the lease $1 of a stream of user $2.
DELETE FROM stream_leases WHERE id = $1 AND user_id = $2

-- name: RenewStreams
-- Extends the leases $1, a replica's open streams, to $2 from now.
UPDATE stream_leases SET lease_until = now() + $2::interval WHERE id = ANY($1::text[])
