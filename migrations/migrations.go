// Package migrations embeds taskchat's golang-migrate SQL files so the
// server binary carries its schema; store.Migrate applies them.
package migrations

import "embed"

// FS holds every NNNNNN_verb_noun.{up,down}.sql file of this directory.
//
//go:embed *.sql
var FS embed.FS
