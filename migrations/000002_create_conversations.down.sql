DROP TABLE tool_calls;
DROP TABLE messages;
DROP TABLE conversations;
