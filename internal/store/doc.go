// Package store is taskchat's PostgreSQL storage on pgx/v5: one file per
// table, plain SQL with explicit columns, and user_id in every statement so
// another user's rows behave exactly like missing ones.
package store
