-- A turn claims its conversation for a short time so that a second message
-- to the same conversation is refused (409) instead of interleaving. The
-- claim expires on its own, so a crashed replica blocks nobody for long; no
-- lock or transaction is held while the model runs.
ALTER TABLE conversations
    ADD COLUMN claim_token   uuid,
    ADD COLUMN claimed_until timestamptz,
    ADD CONSTRAINT conversations_claim_check CHECK ((claim_token IS NULL) = (claimed_until IS NULL));
