package http

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

	"github.com/go-chi/chi/v5"

	"github.com/taskchat/taskchat/internal/auth"
)

// pageCSP is the page's Content-Security-Policy: its own scripts, styles
// and API only — no inline script or style, no other origin, no framing.
const pageCSP = "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// pageFile is one file of the page, ready to serve.
type pageFile struct {
	body        []byte
	contentType string
	etag        string // a strong validator: the content's hash, quoted
	version     string // the ?v= an URL carries when it names this content
}

// page is the chat page: index.html, and the assets it loads from /app/.
// Links from index.html to an asset carry ?v= with the asset's hash, so
// those URLs can be cached for good; any other URL of an asset is
// revalidated.
//
// devIndex is index.html saying that the development login answers (see
// devLoginMeta): the page learns it as it loads, without asking the route
// a request that fails.
type page struct {
	index    pageFile
	devIndex pageFile
	assets   map[string]pageFile
}

// devLoginMeta is how index.html says whether the development login
// answers this page; the page reads it rather than probing the route.
const devLoginMeta = `<meta name="taskchat-dev-login" content="off">`

// pageTypes are the content types of the files the page may hold; a file
// of any other kind is refused when the page is loaded.
var pageTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".svg":  "image/svg+xml",
	".png":  "image/png",
}

// newPage reads the page from fsys: index is the page itself, every other
// file at fsys's root an asset.
func newPage(fsys fs.FS, index string) (*page, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, err
	}
	p := &page{assets: map[string]pageFile{}}
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
		f, err := newPageFile(e.Name(), body)
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
	if p.index, err = newPageFile(index, html); err != nil {
		return nil, err
	}
	if bytes.Count(html, []byte(devLoginMeta)) != 1 {
		// Without it the page would say, silently, that no login answers.
		return nil, fmt.Errorf("page: %s must hold %s exactly once", index, devLoginMeta)
	}
	on := strings.Replace(devLoginMeta, `"off"`, `"on"`, 1)
	p.devIndex, err = newPageFile(index, bytes.Replace(html, []byte(devLoginMeta), []byte(on), 1))
	return p, err
}

func newPageFile(name string, body []byte) (pageFile, error) {
	ct, ok := pageTypes[path.Ext(name)]
	if !ok {
		return pageFile{}, fmt.Errorf("page: %s: no content type for its extension", name)
	}
	sum := sha256.Sum256(body)
	version := base64.RawURLEncoding.EncodeToString(sum[:9])
	return pageFile{body: body, contentType: ct, etag: `"` + version + `"`, version: version}, nil
}

// mustPage is newPage for the embedded page, which is known to be whole:
// an error is a programming error.
func mustPage(fsys fs.FS, index string) *page {
	p, err := newPage(fsys, index)
	if err != nil {
		panic(err)
	}
	return p
}

// handlePageShow serves the page. It is revalidated on every load, so a
// new release is picked up at once; its assets then come from the cache.
// With the development login on, the page says so when it is addressed
// as the login would answer it: by a loopback name (see
// handleDevTokenCreate).
func handlePageShow(p *page, dev DevLogin) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", pageCSP)
		h.Set("Cache-Control", "no-cache")
		if dev.Enabled && auth.AddressedToLoopback(r.Host) {
			serveFile(w, r, p.devIndex)
			return
		}
		serveFile(w, r, p.index)
	})
}

// handlePageAsset serves one asset of the page. A URL that carries the
// asset's current version is cached for a year; any other is revalidated.
func handlePageAsset(p *page) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, ok := p.assets[chi.URLParam(r, "file")]
		if !ok {
			writeProblem(w, apiErr(codeNotFound, "The page has no such file."))
			return
		}
		if r.URL.Query().Get("v") == f.version {
			w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		} else {
			w.Header().Set("Cache-Control", "no-cache")
		}
		serveFile(w, r, f)
	})
}

// serveFile answers with f; http.ServeContent answers 304 when the
// client's copy has f's ETag, and serves ranges.
func serveFile(w http.ResponseWriter, r *http.Request, f pageFile) {
	h := w.Header()
	h.Set("Content-Type", f.contentType)
	h.Set("ETag", f.etag)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(f.body))
}
