ALTER TABLE conversations
    DROP CONSTRAINT conversations_summary_whole,
    DROP COLUMN summary,
    DROP COLUMN summary_through,
    DROP COLUMN summary_at;
