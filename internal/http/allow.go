package http

import (
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"
)

// allowCandidates are the methods a 405 may list, in the order it lists them.
var allowCandidates = []string{
	http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut,
	http.MethodPatch, http.MethodDelete, http.MethodOptions,
}

// handleMethodNotAllowed answers 405 with the Allow header RFC 9110
// §15.5.6 requires: the methods routes has for the request's path. chi
// keeps the methods it found to itself once a handler of our own answers,
// so they are looked up again; that costs a few route lookups, on an
// answer that is rare.
func handleMethodNotAllowed(routes chi.Routes) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if allow := allowedMethods(routes, r); allow != "" {
			w.Header().Set("Allow", allow)
		}
		writeProblem(w, apiErr(codeMethodNotAllowed, "This route does not take that method."))
	}
}

// allowedMethods lists the methods routes serves at r's path, the path as
// chi routes it (escaped, when the request's path was).
func allowedMethods(routes chi.Routes, r *http.Request) string {
	path := r.URL.RawPath
	if path == "" {
		path = r.URL.Path
	}
	var allow []string
	for _, m := range allowCandidates {
		switch {
		case m == http.MethodHead && len(allow) > 0 && allow[0] == http.MethodGet:
			allow = append(allow, m) // served by middleware.GetHead
		case routes.Match(chi.NewRouteContext(), m, path):
			allow = append(allow, m)
		}
	}
	return strings.Join(allow, ", ")
}
