package cli

import (
	"strings"
	"testing"
)

func TestPrinterKeepsACRLFSplitBetweenChunks(t *testing.T) {
	for _, c := range []struct {
		chunks []string
		want   string
	}{
		{[]string{"one\r", "\ntwo"}, "one\ntwo\n"},
		{[]string{"one\r", "", "\ntwo"}, "one\ntwo\n"},
		{[]string{"one\r", "two"}, `one\x0dtwo` + "\n"},
		{[]string{"one\r"}, `one\x0d` + "\n"},
		{[]string{"\r", "\n"}, "\n"},
	} {
		var out strings.Builder
		p := &printer{w: &out, col0: true}
		for _, s := range c.chunks {
			p.text(s)
		}
		p.endLine()
		if out.String() != c.want {
			t.Errorf("chunks %q print %q; want %q", c.chunks, out.String(), c.want)
		}
	}
}
