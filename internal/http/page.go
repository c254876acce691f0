package http

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/taskchat/taskchat/internal/auth"
	"github.com/taskchat/taskchat/internal/web"
)

// handlePageShow serves the page (internal/web). With the development
// login on, the page says so when it is addressed as the login would
// answer it: by a loopback name (see handleDevTokenCreate).
func handlePageShow(p *web.Page, dev DevLogin) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.ServeIndex(w, r, dev.Enabled && auth.AddressedToLoopback(r.Host))
	})
}

// handlePageAsset serves one asset of the page.
func handlePageAsset(p *web.Page) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !p.ServeAsset(w, r, chi.URLParam(r, "file")) {
			writeProblem(w, apiErr(codeNotFound, "The page has no such file."))
		}
	})
}
