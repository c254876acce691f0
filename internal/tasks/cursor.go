package tasks

import (
	"encoding/base64"
	"strconv"
	"strings"
	"time"
)

// The cursors of a task listing, opaque to clients, as every store writes
// and reads them, so that a client can never tell one store from another:
// base64url of "t" and the number of a page's last task, in number order;
// of "d", its due-by instant in Unix microseconds, "." and its number, in
// due-date order. Only a cursor one of them could have written is read;
// anything else is the client's mistake (ErrInvalid on "cursor").

// TaskCursor is the cursor of a page in number order that ends at task
// number.
func TaskCursor(number int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte("t" + strconv.FormatInt(number, 10)))
}

// ParseTaskCursor reads a TaskCursor: the number the page starts after, 0
// for "" (the first page).
func ParseTaskCursor(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return 0, errBadCursor()
	}
	key, ok := strings.CutPrefix(string(b), "t")
	n, err := strconv.ParseInt(key, 10, 64)
	if !ok || err != nil || n < 1 || TaskCursor(n) != s { // "+1", "007", trailing bits: not ours
		return 0, errBadCursor()
	}
	return n, nil
}

// DueCursor is the cursor of a page in due-date order that ends at task
// number, due by by.
func DueCursor(by time.Time, number int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte("d" + strconv.FormatInt(by.UnixMicro(), 10) + "." + strconv.FormatInt(number, 10)))
}

// ParseDueCursor reads a DueCursor: the due-by instant and the number of
// the task the page starts after; the zero time and 0 for "".
func ParseDueCursor(s string) (time.Time, int64, error) {
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
	if DueCursor(t, n) != s {
		return time.Time{}, 0, errBadCursor()
	}
	return t, n, nil
}

// minDueMicros and maxDueMicros bound the due-by instant a cursor may hold:
// the due dates of the years 1900 to 9998 are due by instants from
// 1899-12-30 in UTC (1900-01-01T00:00+24:59, the furthest ahead an offset
// Go reads may be) to 9999-01-01 (9998-12-31 in a zone 12 hours behind
// UTC), well within them; a cursor written after any such task reads back.
var (
	minDueMicros = time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC).UnixMicro()
	maxDueMicros = time.Date(10000, 1, 2, 0, 0, 0, 0, time.UTC).UnixMicro()
)

func errBadCursor() error { return Invalid("cursor", "is not a cursor this service returned") }
