package store

import (
	"encoding/base64"
	"errors"
	"testing"
	"time"

	"github.com/taskchat/taskchat/internal/tasks"
)

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// Every cursor a client could make up is refused as invalid (400), whatever
// its shape; only what encodeCursor wrote is read back.
func TestDecodeCursorRefusesWhatWeDidNotWrite(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"the tampered cursor of issue 10":  "LTMwMDAwMDAwMDAwMDAwMDAwMC4x",
		"not base64":                       "not a cursor!",
		"padded base64":                    b64("1700000000000000.1") + "==",
		"standard base64 alphabet":         "MTcwMDAwMDAwMDAwMDAwMC4x+/",
		"no separator":                     b64("1700000000000000"),
		"two separators":                   b64("1700000000000000.1.2"),
		"empty time":                       b64(".1"),
		"empty id":                         b64("1700000000000000."),
		"letters":                          b64("abc.def"),
		"a time before 1970":               b64("-1.1"),
		"a time past year 9999":            b64("253402300800000000.1"),
		"the largest int64 time":           b64("9223372036854775807.1"),
		"an overflowing time":              b64("99999999999999999999.1"),
		"id zero":                          b64("1700000000000000.0"),
		"a negative id":                    b64("1700000000000000.-5"),
		"an overflowing id":                b64("1700000000000000.99999999999999999999"),
		"a plus sign":                      b64("+1700000000000000.1"),
		"leading zeros":                    b64("01700000000000000.1"),
		"spaces":                           b64(" 1700000000000000.1"),
		"a message cursor":                 encodeMessageCursor(1),
		"a task cursor":                    tasks.TaskCursor(1),
		"stray bits in the last character": "MS4yMB", // "1.20", which is written "MS4yMA"
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if _, _, err := decodeCursor(c); !errors.Is(err, tasks.ErrInvalid) {
				t.Fatalf("decodeCursor(%q) = %v, want invalid", c, err)
			}
		})
	}
	t.Run("what we write reads back", func(t *testing.T) {
		t.Parallel()
		at := time.Date(2026, 11, 23, 10, 0, 0, 123456000, time.UTC)
		got, id, err := decodeCursor(encodeCursor(at, 42))
		if err != nil || !got.Equal(at) || id != 42 {
			t.Fatalf("round trip = %v, %d, %v", got, id, err)
		}
	})
}

func TestDecodeMessageCursorRefusesWhatWeDidNotWrite(t *testing.T) {
	t.Parallel()
	for _, c := range []string{"x", b64("m"), b64("m0"), b64("m-1"), b64("m01"), b64("m+1"), b64("1"),
		b64("m99999999999999999999"), b64("m1 "), encodeCursor(time.Now(), 1), tasks.TaskCursor(1)} {
		if _, err := decodeMessageCursor(c); !errors.Is(err, tasks.ErrInvalid) {
			t.Errorf("decodeMessageCursor(%q) = %v, want invalid", c, err)
		}
	}
	if id, err := decodeMessageCursor(encodeMessageCursor(7)); err != nil || id != 7 {
		t.Fatalf("round trip = %d, %v", id, err)
	}
}

func TestDecodeTaskCursorRefusesWhatWeDidNotWrite(t *testing.T) {
	t.Parallel()
	for _, c := range []string{"x", "dDE=", b64("t"), b64("t0"), b64("t-1"), b64("t01"), b64("t+1"), b64("1"), b64("T1"),
		b64("t99999999999999999999"), b64("t1 "), encodeCursor(time.Now(), 1), encodeMessageCursor(1)} {
		if _, err := tasks.ParseTaskCursor(c); !errors.Is(err, tasks.ErrInvalid) {
			t.Errorf("tasks.ParseTaskCursor(%q) = %v, want invalid", c, err)
		}
	}
	if n, err := tasks.ParseTaskCursor(tasks.TaskCursor(7)); err != nil || n != 7 {
		t.Fatalf("round trip = %d, %v", n, err)
	}
}

// FuzzDecodeCursor holds the decoders to their promise: a cursor is either
// refused as invalid, or it is exactly one that the encoder writes, for a
// position PostgreSQL can compare with.
func FuzzDecodeCursor(f *testing.F) {
	for _, s := range []string{"", "LTMwMDAwMDAwMDAwMDAwMDAwMC4x", encodeCursor(time.Now(), 3), encodeMessageCursor(9), tasks.TaskCursor(9), b64("1.1"), "@@",
		tasks.DueCursor(time.Now(), 4), b64("d-2208988800000000.1")} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		at, id, err := decodeCursor(s)
		switch {
		case err != nil && !errors.Is(err, tasks.ErrInvalid):
			t.Fatalf("decodeCursor(%q): %v is not invalid", s, err)
		case err == nil && s != "" && (encodeCursor(*at, id) != s || id < 1 || at.Before(time.Unix(0, 0)) || !at.Before(maxCursorTime)):
			t.Fatalf("decodeCursor(%q) accepted %v, %d", s, at, id)
		}
		n, err := decodeMessageCursor(s)
		switch {
		case err != nil && !errors.Is(err, tasks.ErrInvalid):
			t.Fatalf("decodeMessageCursor(%q): %v is not invalid", s, err)
		case err == nil && s != "" && (encodeMessageCursor(n) != s || n < 1):
			t.Fatalf("decodeMessageCursor(%q) accepted %d", s, n)
		}
		number, err := tasks.ParseTaskCursor(s)
		switch {
		case err != nil && !errors.Is(err, tasks.ErrInvalid):
			t.Fatalf("tasks.ParseTaskCursor(%q): %v is not invalid", s, err)
		case err == nil && s != "" && (tasks.TaskCursor(number) != s || number < 1):
			t.Fatalf("tasks.ParseTaskCursor(%q) accepted %d", s, number)
		}
		by, dueNumber, err := tasks.ParseDueCursor(s)
		switch {
		case err != nil && !errors.Is(err, tasks.ErrInvalid):
			t.Fatalf("tasks.ParseDueCursor(%q): %v is not invalid", s, err)
		case err == nil && s != "" && (tasks.DueCursor(by, dueNumber) != s || dueNumber < 1 || by.Year() < 1899 || by.Year() > 10000):
			t.Fatalf("tasks.ParseDueCursor(%q) accepted %v, %d", s, by, dueNumber)
		}
	})
}
