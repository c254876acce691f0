package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
)

// CSP is the page's Content-Security-Policy: its own scripts, styles and
// API only — no inline script or style, no other origin, no framing.
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// file is one file of the page, ready to serve.
type file struct {
	body        []byte
	contentType string
	etag        string // a strong validator: the content's hash, quoted
	version     string // the ?v= an URL carries when it names this content
}

// Page is the chat page, ready to serve: index.html, and the assets it
// loads from /app/. Links from index.html to an asset carry ?v= with the
// asset's hash, so those URLs can be cached for good; any other URL of an
// asset is revalidated.
//
// devIndex is index.html saying that the development login answers (see
// devLoginMeta): the page learns it as it loads, without asking the route
// a request that fails.
type Page struct {
	index    file
	devIndex file
	assets   map[string]file
}

// devLoginMeta is how index.html says whether the development login
// answers this page; the page reads it rather than probing the route.
const devLoginMeta = `<meta name="taskchat-dev-login" content="off">`

// types are the content types of the files the page may hold; a file of
// any other kind is refused when the page is loaded.
var types = map[string]string{
	".html": "text/html; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".svg":  "image/svg+xml",
	".png":  "image/png",
}

// Load reads the page from fsys: index is the page itself, every other
// file at fsys's root an asset.
func Load(fsys fs.FS, index string) (*Page, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, err
	}
	p := &Page{assets: map[string]file{}}
	var html []byte
	for _, e := range entries {
		body, err := fs.ReadFile(fsys, e.Name())
		if err != nil {
			return nil, err
		}
		if e.Name() == index {
			html = body
			continue
		}
		f, err := newFile(e.Name(), body)
		if err != nil {
			return nil, err
		}
		p.assets[e.Name()] = f
	}
	if html == nil {
		return nil, fmt.Errorf("page: no %s", index)
	}
	for name, f := range p.assets {
		html = bytes.ReplaceAll(html, []byte(`"/app/`+name+`"`), []byte(`"/app/`+name+`?v=`+f.version+`"`))
	}
	if p.index, err = newFile(index, html); err != nil {
		return nil, err
	}
	if bytes.Count(html, []byte(devLoginMeta)) != 1 {
		// Without it the page would say, silently, that no login answers.
		return nil, fmt.Errorf("page: %s must hold %s exactly once", index, devLoginMeta)
	}
	on := strings.Replace(devLoginMeta, `"off"`, `"on"`, 1)
	p.devIndex, err = newFile(index, bytes.Replace(html, []byte(devLoginMeta), []byte(on), 1))
	return p, err
}

func newFile(name string, body []byte) (file, error) {
	ct, ok := types[path.Ext(name)]
	if !ok {
		return file{}, fmt.Errorf("page: %s: no content type for its extension", name)
	}
	sum := sha256.Sum256(body)
	version := base64.RawURLEncoding.EncodeToString(sum[:9])
	return file{body: body, contentType: ct, etag: `"` + version + `"`, version: version}, nil
}

// Embedded is the page the binary holds (Files), which is known to be
// whole: an error loading it is a programming error.
func Embedded() *Page {
	p, err := Load(Files, Index)
	if err != nil {
		panic(err)
	}
	return p
}

// ServeIndex serves the page, saying whether the development login
// answers it. The page is revalidated on every load, so a new release is
// picked up at once; its assets then come from the cache.
func (p *Page) ServeIndex(w http.ResponseWriter, r *http.Request, devLogin bool) {
	h := w.Header()
	h.Set("Content-Security-Policy", CSP)
	h.Set("Cache-Control", "no-cache")
	if devLogin {
		serve(w, r, p.devIndex)
		return
	}
	serve(w, r, p.index)
}

// ServeAsset serves the asset named, and reports false, answering
// nothing, when the page has none of that name. A URL that carries the
// asset's current version is cached for a year; any other is revalidated.
func (p *Page) ServeAsset(w http.ResponseWriter, r *http.Request, name string) bool {
	f, ok := p.assets[name]
	if !ok {
		return false
	}
	if r.URL.Query().Get("v") == f.version {
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		w.Header().Set("Cache-Control", "no-cache")
	}
	serve(w, r, f)
	return true
}

// serve answers with f; http.ServeContent answers 304 when the client's
// copy has f's ETag, and serves ranges.
func serve(w http.ResponseWriter, r *http.Request, f file) {
	h := w.Header()
	h.Set("Content-Type", f.contentType)
	h.Set("ETag", f.etag)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(f.body))
}
