package http

import (
	"net/http"
	"net/url"

	"github.com/go-chi/chi/v5"
)

// pathUser returns the {user_id} of the route, decoded. chi routes on the
// request's escaped path whenever the client's escaping differs from Go's
// own (r.URL.RawPath is set): a user id holding "/" can only be sent as
// "%2F", and "%c3%a9" in lower case is not how Go would write "é". Then
// the parameter is still escaped, and is decoded here; otherwise chi
// routed on the decoded path and the parameter is the id itself, which
// must not be decoded twice (the id "a%2Fb", sent as "a%252Fb", stays "a%2Fb").
// ok is false when an escaped parameter does not decode.
func pathUser(r *http.Request) (userID string, ok bool) {
	param := chi.URLParam(r, "user_id")
	if r.URL.RawPath == "" {
		return param, true
	}
	userID, err := url.PathUnescape(param)
	return userID, err == nil
}
