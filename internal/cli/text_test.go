package cli

import (
	"encoding/json"
	"testing"
)

func TestTextKeepsLinesAndShowsWhatWouldSteerATerminal(t *testing.T) {
	for _, c := range []struct{ in, text, line string }{
		{"Buy milk", "Buy milk", "Buy milk"},
		{"two\nlines\tand a tab", "two\nlines\tand a tab", `two\nlines\tand a tab`},
		{"crlf\r\nend", "crlf\nend", `crlf\x0d\nend`},
		{"over\rwrite", `over\x0dwrite`, `over\x0dwrite`},
		{"\x1b]0;pwned\x07title", `\x1b]0;pwned\x07title`, `\x1b]0;pwned\x07title`},
		{"\x1b[2J", `\x1b[2J`, `\x1b[2J`},
		{"c1 \u009b31m", `c1 \u009b31m`, `c1 \u009b31m`},
		{"del\x7f", `del\x7f`, `del\x7f`},
		{"evil\u202eexe.txt", `evil\u202eexe.txt`, `evil\u202eexe.txt`},
		{"isolate \u2066x\u2069", `isolate \u2066x\u2069`, `isolate \u2066x\u2069`},
		{"bad \xff utf-8", "bad \uFFFD utf-8", "bad \uFFFD utf-8"},
		{"marks \u200e\u200f\u061c", `marks \u200e\u200f\u061c`, `marks \u200e\u200f\u061c`},
		{"separators \u2028\u2029", `separators \u2028\u2029`, `separators \u2028\u2029`},
		{"kept: \uFFFD é 👩🏽‍🍳 \u200d", "kept: \uFFFD é 👩🏽‍🍳 \u200d", "kept: \uFFFD é 👩🏽‍🍳 \u200d"},
	} {
		if got := Text(c.in); got != c.text {
			t.Errorf("Text(%q) = %q; want %q", c.in, got, c.text)
		}
		if got := Line(c.in); got != c.line {
			t.Errorf("Line(%q) = %q; want %q", c.in, got, c.line)
		}
	}
}

func TestJSONStaysTheSameDocument(t *testing.T) {
	in := []byte("{\"response\":\"a \u202e b \u009b c\x7f\",\n \"n\": 1}")
	out := JSON(in)
	if string(out) != "{\"response\":\"a \\u202e b \\u009b c\\u007f\",\n \"n\": 1}" {
		t.Fatalf("JSON = %s", out)
	}
	var a, b any
	if json.Unmarshal(in, &a) != nil || json.Unmarshal(out, &b) != nil {
		t.Fatal("does not parse")
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Fatalf("%s != %s", ja, jb)
	}
}

func TestReadClaimsDoesNotVerify(t *testing.T) {
	// {"sub":"alice","exp":1}
	c, err := readClaims("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSIsImV4cCI6MX0.c2ln")
	if err != nil || c.Sub != "alice" || c.Exp != 1 {
		t.Fatalf("claims = %+v, %v", c, err)
	}
	for _, bad := range []string{"", "a.b", "a.!!!.c", "a.e30.c"} {
		if _, err := readClaims(bad); err == nil {
			t.Errorf("readClaims(%q) accepted", bad)
		}
	}
}
