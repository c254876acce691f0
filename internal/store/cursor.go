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
// message; a task cursor is "t<number>" of the last task (in due-date
// order, "d<due_by in Unix microseconds>.<number>"), so none is
// mistaken for another.

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

func encodeDueCursor(by time.Time, number int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte("d" + strconv.FormatInt(by.UnixMicro(), 10) + "." + strconv.FormatInt(number, 10)))
}

// decodeDueCursor reads the cursor of a listing in due-date order: the
// due_by and the number of the task the page starts after; the zero time
// and 0 for the first page.
func decodeDueCursor(s string) (time.Time, int64, error) {
	if s == "" {
		return time.Time{}, 0, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return time.Time{}, 0, errBadCursor()
	}
	rest, ok := strings.CutPrefix(string(b), "d")
	us, id, _ := strings.Cut(rest, ".")
	micros, err1 := strconv.ParseInt(us, 10, 64)
	n, err2 := strconv.ParseInt(id, 10, 64)
	if !ok || err1 != nil || err2 != nil || n < 1 || micros < minDueMicros || micros >= maxDueMicros {
		return time.Time{}, 0, errBadCursor()
	}
	t := time.UnixMicro(micros)
	if encodeDueCursor(t, n) != s {
		return time.Time{}, 0, errBadCursor()
	}
	return t, n, nil
}

// minDueMicros and maxDueMicros bound the due_by a cursor may hold, as
// maxCursorTime bounds a conversation cursor's time: the service takes
// due dates of the years 1900 to 9998 as they are written, so due by an
// instant from 1899-12-30 in UTC (1900-01-01T00:00+24:59, the furthest
// ahead an offset Go reads may be) to 9999-01-01 (9998-12-31 in a zone
// 12 hours behind UTC), well within these bounds. A cursor the store wrote after any of them reads
// back (TestDueCursorsAtTheEndsOfTime).
var (
	minDueMicros = time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC).UnixMicro()
	maxDueMicros = time.Date(10000, 1, 2, 0, 0, 0, 0, time.UTC).UnixMicro()
)

func encodeMessageCursor(id int64) string { return encodeKeyCursor("m", id) }

// decodeMessageCursor reads a message cursor: the id the page starts
// after, 0 for the first page.
func decodeMessageCursor(s string) (int64, error) { return decodeKeyCursor("m", s) }

func encodeTaskCursor(number int64) string { return encodeKeyCursor("t", number) }

// decodeTaskCursor reads a task cursor: the number the page starts after,
// 0 for the first page (task numbers start at 1).
func decodeTaskCursor(s string) (int64, error) { return decodeKeyCursor("t", s) }

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
