// Package store is taskchat's PostgreSQL storage on pgx/v5: one file per
// table, its statements in sql/<table>.sql, each under a name the Go code
// reads it by (stmt.CreateTask; see statements.go), plain SQL with explicit
// columns, and user_id in every statement so another user's rows behave
// exactly like missing ones.
//
// Tasks and conversations are known outside the database by their number
// among their user's (tasks.number, conversations.number, migrations 000006
// and 000018); the tables' own keys, which the rows that belong to them
// reference, never leave it. A statement given a conversation's number
// finds its key in the same statement:
//
//	(SELECT id FROM conversations WHERE user_id = $2 AND number = $1)
package store
