package tasks_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/taskchat/taskchat/internal/tasks"
)

// What a model writes as tool arguments is kept as it is when jsonb takes
// it, and as its text in a JSON string when jsonb would refuse it.
// internal/store's tests put every output into real PostgreSQL.
func TestStorableJSON(t *testing.T) {
	t.Parallel()
	const kept = "" // want: the input itself
	cases := []struct {
		name, raw string
		want      string // the JSON returned, or kept
		ok        bool   // whether the input counts as storable
	}{
		{"valid object", `{"title":"Buy milk","n":1.5,"done":false,"tags":["a",null],"e":-2E+3}`, kept, true},
		{"escaped NUL", `{"title":"a\u0000b"}`, `{"title":"a\ufffdb"}`, true},
		{"surrogate pair", `{"title":"\ud83d\ude00"}`, kept, true},
		{"surrogate pair in capitals", `["\uD83D\uDE00"]`, kept, true},
		{"escaped backslash before u0000", `{"path":"C:\\u0000"}`, kept, true},
		{"escaped backslash before a surrogate", `{"path":"\\ud83d"}`, kept, true},
		{"escaped backslash then escaped NUL", `{"path":"\\\u0000"}`, `{"path":"\\\ufffd"}`, true},
		{"number inside a string", `{"title":"1e999999 \" 1e999999"}`, kept, true},
		{"lone high surrogate", `{"title":"\ud83d"}`, `"{\"title\":\"\\ud83d\"}"`, false},
		{"lone low surrogate", `{"title":"\ude00"}`, `"{\"title\":\"\\ude00\"}"`, false},
		{"high surrogate then not a low one", `{"title":"\ud83d\u0041"}`, `"{\"title\":\"\\ud83d\\u0041\"}"`, false},
		{"high surrogate then text", `"\ud83dx"`, `"\"\\ud83dx\""`, false},
		{"two high surrogates", `"\ud83d\ud83d"`, `"\"\\ud83d\\ud83d\""`, false},
		{"largest integer part", `{"n":1e131071}`, kept, true},
		{"integer part too long", `{"n":1e131072}`, `"{\"n\":1e131072}"`, false},
		{"longest fraction", `{"n":1e-16383}`, kept, true},
		{"fraction too long", `{"n":1e-16384}`, `"{\"n\":1e-16384}"`, false},
		{"huge exponent", `{"n":1e999999}`, `"{\"n\":1e999999}"`, false},
		{"tiny exponent", `{"n":-1e-999999}`, `"{\"n\":-1e-999999}"`, false},
		{"exponent past int", `[1e99999999999999999999]`, `"[1e99999999999999999999]"`, false},
		{"invalid UTF-8", "{\"title\":\"a\xffb\"}", `"{\"title\":\"a` + "\uFFFD" + `b\"}"`, false},
		{"UTF-8 encoded surrogate", "\"\xed\xa0\xbd\"", `"\"` + "\uFFFD" + `\""`, false},
		{"not JSON", `add_task(title="milk")`, `"add_task(title=\"milk\")"`, false},
		{"not JSON with a NUL", "milk\x00", `"milk"`, false},
		{"truncated", `{"title":`, `"{\"title\":"`, false},
		{"empty", ``, `""`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			want := c.want
			if want == kept {
				want = c.raw
			}
			got, ok := tasks.StorableJSON(json.RawMessage(c.raw))
			if string(got) != want || ok != c.ok {
				t.Errorf("StorableJSON(%q) = %s, %v; want %s, %v", c.raw, got, ok, want, c.ok)
			}
			if !json.Valid(got) || !utf8.Valid(got) || holdsNUL(t, got) {
				t.Errorf("StorableJSON(%q) = %q, not JSON that jsonb takes", c.raw, got)
			}
		})
	}
}

// holdsNUL reports whether a string in raw, a key or a value, holds a NUL.
func holdsNUL(tb testing.TB, raw json.RawMessage) bool {
	tb.Helper()
	d := json.NewDecoder(strings.NewReader(string(raw)))
	d.UseNumber() // numbers past float64's range are fine here
	for {
		tok, err := d.Token()
		if err != nil {
			return false
		}
		if s, ok := tok.(string); ok && strings.ContainsRune(s, 0) {
			return true
		}
	}
}

func TestStorableText(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Buy milk":       "Buy milk",
		"a\x00b":         "ab",
		"a\xffb":         "a\uFFFDb",
		"\xed\xa0\xbd 😀": "\uFFFD 😀",
		"":               "",
	} {
		if got := tasks.StorableText(in); got != want {
			t.Errorf("StorableText(%q) = %q, want %q", in, got, want)
		}
	}
}
