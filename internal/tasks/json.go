package tasks

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// PostgreSQL's numeric type, which jsonb numbers are, holds at most this
// many digits before the decimal point and after it.
const (
	maxIntegerDigits  = 131072
	maxFractionDigits = 16383
)

// StorableJSON returns raw as JSON that PostgreSQL's jsonb accepts, and
// whether raw was that already. What a model writes as tool arguments ends
// up in the audit, and jsonb refuses some JSON that is valid elsewhere: an
// escaped NUL, a lone UTF-16 surrogate ("\ud83d"), a number past numeric's
// range (1e999999), invalid UTF-8. An escaped NUL becomes U+FFFD (the value
// is still read the same way by everything else); anything else that jsonb
// would refuse, and anything that is not JSON at all, is kept as the
// model's text in a JSON string, so the record never loses what was asked.
func StorableJSON(raw json.RawMessage) (json.RawMessage, bool) {
	if len(raw) > 0 && utf8.Valid(raw) && json.Valid(raw) {
		if nuls, ok := jsonbAccepts(raw); ok {
			return replaceNULs(raw, nuls), true
		}
	}
	b, _ := json.Marshal(StorableText(string(raw)))
	return b, false
}

// StorableText drops NUL characters and replaces invalid UTF-8, which
// PostgreSQL text cannot hold, keeping every other character.
func StorableText(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "")
}

// replaceNULs returns raw with the escaped NULs at nuls (the offsets of
// their backslashes) written as U+FFFD.
func replaceNULs(raw []byte, nuls []int) []byte {
	if len(nuls) == 0 {
		return raw
	}
	out := bytes.Clone(raw)
	for _, i := range nuls {
		copy(out[i:], `\ufffd`)
	}
	return out
}

// JSONBAccepts reports whether valid JSON holds nothing jsonb refuses but
// escaped NULs (which StorableJSON rewrites): no lone surrogate, no number
// past numeric's range.
func JSONBAccepts(valid []byte) bool {
	_, ok := jsonbAccepts(valid)
	return ok
}

// jsonbAccepts reports whether valid JSON raw has only surrogates that pair
// up and numbers within numeric's range, and where it escapes a NUL.
func jsonbAccepts(raw []byte) (nuls []int, ok bool) {
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case c == '"':
			end, ok := stringAccepted(raw, i+1, &nuls)
			if !ok {
				return nil, false
			}
			i = end
		case c == '-' || (c >= '0' && c <= '9'):
			end := i + 1
			for end < len(raw) && strings.IndexByte("0123456789.eE+-", raw[end]) >= 0 {
				end++
			}
			if !numberAccepted(raw[i:end]) {
				return nil, false
			}
			i = end - 1
		}
	}
	return nuls, true
}

// stringAccepted scans the JSON string whose body starts at raw[i] and
// returns the index of its closing quote; ok is false when it escapes a
// surrogate that does not pair up. It adds the offsets of escaped NULs to
// nuls.
func stringAccepted(raw []byte, i int, nuls *[]int) (end int, ok bool) {
	for ; i < len(raw); i++ {
		switch raw[i] {
		case '"':
			return i, true
		case '\\':
			if raw[i+1] != 'u' {
				i++
				continue
			}
			r := hex4(raw[i+2 : i+6])
			if r == 0 {
				*nuls = append(*nuls, i)
			}
			i += 5
			switch {
			case utf16.IsSurrogate(r) && r < 0xdc00: // a high surrogate needs a low one next
				if i+6 >= len(raw) || raw[i+1] != '\\' || raw[i+2] != 'u' {
					return 0, false
				}
				if low := hex4(raw[i+3 : i+7]); low < 0xdc00 || low > 0xdfff {
					return 0, false
				}
				i += 6
			case utf16.IsSurrogate(r): // a low surrogate with no high one
				return 0, false
			}
		}
	}
	return i, true
}

func hex4(b []byte) rune {
	n, _ := strconv.ParseUint(string(b), 16, 32)
	return rune(n)
}

// numberAccepted reports whether a JSON number fits PostgreSQL's numeric:
// at most maxIntegerDigits before the point and maxFractionDigits after
// it, once the exponent is applied. It errs on the side of refusing.
func numberAccepted(num []byte) bool {
	mantissa, exp, _ := strings.Cut(strings.ToLower(string(num)), "e")
	mantissa = strings.TrimPrefix(mantissa, "-")
	intPart, fracPart, _ := strings.Cut(mantissa, ".")
	e := 0
	if exp != "" {
		n, err := strconv.Atoi(exp)
		if err != nil || n > 1<<24 || n < -(1<<24) {
			return false
		}
		e = n
	}
	return len(intPart)+e <= maxIntegerDigits && len(fracPart)-e <= maxFractionDigits
}
