ALTER TABLE conversations
    DROP CONSTRAINT conversations_claim_check,
    DROP COLUMN claimed_until,
    DROP COLUMN claim_token;
