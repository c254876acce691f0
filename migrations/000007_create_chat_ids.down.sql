DROP TABLE chat_ids;
