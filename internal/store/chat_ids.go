package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/taskchat/taskchat/internal/tasks"
)

// ChatConversation returns the conversation a client's chat id names for
// userID: the one started under it, else the user's conversation whose id
// it spells (in canonical decimal). A chat id is looked up first, so a
// chat keeps its conversation even if the user later owns a conversation
// with the number it spells. It fails with tasks.ErrNotFound when the id
// names neither.
func (s *Turns) ChatConversation(ctx context.Context, userID, chatID string) (int64, error) {
	var number *int64
	if n, err := strconv.ParseInt(chatID, 10, 64); err == nil && n > 0 && strconv.FormatInt(n, 10) == chatID {
		number = &n
	}
	var id *int64
	err := s.pool.QueryRow(ctx, stmt.ChatConversation, userID, chatID, number).Scan(&id)
	switch {
	case err != nil:
		return 0, translate(err)
	case id == nil:
		return 0, fmt.Errorf("chat %q: %w", chatID, tasks.ErrNotFound)
	}
	return *id, nil
}

// chatIDTaken reports whether err is the refusal of a second conversation
// under one chat id.
func chatIDTaken(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505" && pgErr.ConstraintName == "chat_ids_pkey"
}
