package cli

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Text is s made safe to print on a terminal, keeping its lines: line
// feeds and tabs stay; every other control character (C0, DEL, C1), a
// carriage return but the one of a CRLF, the bidirectional marks,
// embeddings, overrides and isolates, and the Unicode line and paragraph
// separators become visible escapes such as \x1b or \u202e;
// invalid UTF-8 becomes U+FFFD. The server refuses such characters in what
// people write, but a reply is a model's text, and a client should not
// trust a server with its terminal anyway.
func Text(s string) string { return clean(s, false) }

// Line is Text on one line: line feeds and tabs become \n and \t too, for
// titles, summaries and whatever else is printed within a line.
func Line(s string) string { return clean(s, true) }

func clean(s string, oneLine bool) string {
	if safe(s, oneLine) {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == utf8.RuneError && isInvalid(s[i:]):
			b.WriteRune(utf8.RuneError)
		case r == '\r' && !oneLine && strings.HasPrefix(s[i+1:], "\n"):
			// a CRLF prints as the line feed it means
		case r == '\n' && oneLine:
			b.WriteString(`\n`)
		case r == '\t' && oneLine:
			b.WriteString(`\t`)
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// safe reports whether s prints as it is, which is nearly always: the
// common case costs one pass and no allocation.
func safe(s string, oneLine bool) bool {
	for _, r := range s {
		if r == utf8.RuneError || r < 0x20 && !(r == '\n' || r == '\t') || r == 0x7f || unsafeRune(r) {
			return false
		}
		if oneLine && (r == '\n' || r == '\t') {
			return false
		}
	}
	return true
}

// isInvalid reports whether s starts with a byte that is not UTF-8 (rather
// than with a U+FFFD written as such).
func isInvalid(s string) bool {
	_, size := utf8.DecodeRuneInString(s)
	return size <= 1
}

// unsafeRune is a character beyond ASCII that steers a terminal or the
// order text shows in: C1 controls (U+009B is CSI on many terminals), the
// bidirectional marks (LRM, RLM, ALM), embeddings, overrides and isolates
// ("Trojan Source"), and the line and paragraph separators, which some
// terminals and editors take as line breaks that Line would not show.
func unsafeRune(r rune) bool {
	switch r {
	case 0x200e, 0x200f, 0x061c, 0x2028, 0x2029:
		return true
	}
	return r >= 0x80 && r <= 0x9f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}

// JSON is a JSON document made safe to print as well as to parse: the
// characters Text escapes become \u escapes, which are the same string to
// a JSON reader. Valid JSON has no raw control character but whitespace
// between values, so only the characters beyond ASCII that steer a
// terminal, and DEL, can be met; they can only be inside strings.
func JSON(doc []byte) []byte {
	s := string(doc)
	if safe(s, false) {
		return doc
	}
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == utf8.RuneError && isInvalid(s[i:]):
			b.WriteString(`\ufffd`)
		case r == '\n' || r == '\t' || r == '\r' || r == ' ':
			b.WriteRune(r) // whitespace between values
		case r < 0x20 || r == 0x7f || unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return []byte(b.String())
}
