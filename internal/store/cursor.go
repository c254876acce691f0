package store

import (
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"github.com/taskchat/taskchat/internal/tasks"
)

// Cursors are opaque to clients: base64url of a position. Only a cursor
// this service could have written is accepted; anything else, whatever
// its shape, is the client's mistake (400), never a query that fails.
//
// A conversation cursor is "<updated_at in Unix microseconds>.<number>" of the
// last conversation of a page; a message cursor is "m<id>" of the last
// message; a task cursor is tasks.TaskCursor or tasks.DueCursor ("t…",
// "d…"), so none is mistaken for another.

// maxCursorTime bounds the times a conversation cursor may hold: every
// updated_at is written by now(), and PostgreSQL refuses times far outside
// this range (the tampered cursor "-300000000000000000.1" once answered 500).
var maxCursorTime = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)

func errBadCursor() error { return tasks.Invalid("cursor", "is not a cursor this service returned") }

func encodeCursor(t time.Time, id int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(t.UnixMicro(), 10) + "." + strconv.FormatInt(id, 10)))
}

// decodeCursor reads a conversation cursor; "" is the first page (nil).
func decodeCursor(s string) (*time.Time, int64, error) {
	if s == "" {
		return nil, 0, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, 0, errBadCursor()
	}
	us, id, _ := strings.Cut(string(b), ".")
	micros, err1 := strconv.ParseInt(us, 10, 64)
	n, err2 := strconv.ParseInt(id, 10, 64)
	if err1 != nil || err2 != nil || n < 1 || micros < 0 || micros >= maxCursorTime.UnixMicro() {
		return nil, 0, errBadCursor()
	}
	t := time.UnixMicro(micros)
	if encodeCursor(t, n) != s { // "+1", "007", trailing bits: not ours
		return nil, 0, errBadCursor()
	}
	return &t, n, nil
}

func encodeMessageCursor(id int64) string { return encodeKeyCursor("m", id) }

// decodeMessageCursor reads a message cursor: the id the page starts
// after, 0 for the first page.
func decodeMessageCursor(s string) (int64, error) { return decodeKeyCursor("m", s) }

// encodeKeyCursor writes the cursor of a list kept in the order of one
// positive key: kind, a letter of its own, then the key.
func encodeKeyCursor(kind string, key int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(kind + strconv.FormatInt(key, 10)))
}

// decodeKeyCursor reads a cursor encodeKeyCursor wrote for kind; "" is
// the first page (0).
func decodeKeyCursor(kind, s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return 0, errBadCursor()
	}
	key, ok := strings.CutPrefix(string(b), kind)
	n, err := strconv.ParseInt(key, 10, 64)
	if !ok || err != nil || n < 1 || encodeKeyCursor(kind, n) != s {
		return 0, errBadCursor()
	}
	return n, nil
}
