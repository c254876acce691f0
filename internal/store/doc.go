// Package store is taskchat's PostgreSQL storage on pgx/v5: one file per
// table, its statements in sql/<table>.sql, each under a name the Go code
// reads it by (stmt.CreateTask; see statements.go), plain SQL with explicit
// columns, and user_id in every statement so another user's rows behave
// exactly like missing ones.
package store
