package web

import (
	"bytes"
	"testing"
	"testing/fstest"
)

func TestLoadRefusesUnknownFiles(t *testing.T) {
	t.Parallel()
	if _, err := Load(fstest.MapFS{"index.html": {Data: []byte("<p>")}, "notes.txt": {}}, "index.html"); err == nil {
		t.Error("a page with a .txt file was accepted")
	}
	if _, err := Load(fstest.MapFS{"app.js": {}}, "index.html"); err == nil {
		t.Error("a page without its index was accepted")
	}
	if _, err := Load(fstest.MapFS{"index.html": {Data: []byte("<p>")}}, "index.html"); err == nil {
		t.Error("an index that cannot say whether the development login answers was accepted")
	}
	p, err := Load(Files, Index)
	if err != nil {
		t.Fatalf("the embedded page: %v", err)
	}
	if bytes.Equal(p.index.body, p.devIndex.body) {
		t.Errorf("the embedded page does not hold %s, which says whether the development login answers", devLoginMeta)
	}
}
