-- A long conversation's compacted past (issue 26): once its history passes
-- the window a turn loads (HISTORY_LIMIT, HISTORY_TOKENS), its older part
-- is summarised once and the summary kept here, with the last message it
-- covers, so that it is never redone and the model is given it ahead of the
-- messages after it. summary_through only moves forward (SaveSummary's
-- compare-and-set): two compactions of one span never both write. The
-- three are set together or are all NULL.
ALTER TABLE conversations
    ADD COLUMN summary         text,
    ADD COLUMN summary_through bigint,
    ADD COLUMN summary_at      timestamptz,
    ADD CONSTRAINT conversations_summary_whole CHECK (
        (summary IS NULL) = (summary_through IS NULL) AND (summary IS NULL) = (summary_at IS NULL));
