package store

import (
	"errors"
	"testing"
	"time"

	"github.com/taskchat/taskchat/internal/tasks"
)

// A due-date cursor reads back exactly as written, for any instant a due
// date the service takes can be due by; anything else is refused as
// invalid: another listing's cursor, a malformed one, or a position
// before 1899-12-30 or from 10000-01-02 on, which no due
// date has and PostgreSQL might not take.
func TestDecodeDueCursorRefusesWhatWeDidNotWrite(t *testing.T) {
	t.Parallel()
	first, last := time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC), time.Date(10000, 1, 2, 0, 0, 0, 0, time.UTC)
	for _, c := range []string{"x", b64("d"), b64("d1"), b64("d1."), b64("d.1"), b64("d1.0"), b64("d1.-1"), b64("d1.01"), b64("d01.1"),
		b64("d+1.1"), b64("d1.1 "), b64("d1.1.1"), b64("D1.1"), b64("t1"), b64("1.1"), b64("d1.99999999999999999999"),
		b64("d99999999999999999999.1"), b64("d-9223372036854775808.1"),
		tasks.DueCursor(first.Add(-time.Microsecond), 1), tasks.DueCursor(last, 1),
		tasks.TaskCursor(1), encodeMessageCursor(1), encodeCursor(time.Now(), 1), tasks.DueCursor(time.Now(), 1) + "A"} {
		if _, _, err := tasks.ParseDueCursor(c); !errors.Is(err, tasks.ErrInvalid) {
			t.Errorf("tasks.ParseDueCursor(%q) = %v, want invalid", c, err)
		}
	}
	for _, at := range []time.Time{first, last.Add(-time.Microsecond), time.Unix(0, 0), time.Date(2026, 11, 2, 23, 59, 59, 999999000, time.UTC)} {
		got, n, err := tasks.ParseDueCursor(tasks.DueCursor(at, 7))
		if err != nil || !got.Equal(at) || n != 7 {
			t.Errorf("round trip of %v = %v, %d, %v", at, got, n, err)
		}
	}
	if at, n, err := tasks.ParseDueCursor(""); err != nil || !at.IsZero() || n != 0 {
		t.Errorf("the first page = %v, %d, %v", at, n, err)
	}
}
