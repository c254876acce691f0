package http

import (
	"net/http"
	"net/url"

	"github.com/go-chi/chi/v5"
)

// pathUser returns the {user_id} of the route, decoded as pathParam explains.
func pathUser(r *http.Request) (userID string, ok bool) {
	return pathParam(r, "user_id")
}

// pathParam returns the route's parameter name, decoded. chi routes on the
// request's escaped path whenever the client's escaping differs from Go's
// own (r.URL.RawPath is set): a user id holding "/" can only be sent as
// "%2F", and "%c3%a9" in lower case is not how Go would write "é". Then
// every parameter is still escaped, and is decoded here; otherwise chi
// routed on the decoded path and the parameter is the value itself, which
// must not be decoded twice (the id "a%2Fb", sent as "a%252Fb", stays "a%2Fb").
// ok is false, with the parameter as sent, when an escaped parameter does
// not decode.
func pathParam(r *http.Request, name string) (value string, ok bool) {
	param := chi.URLParam(r, name)
	if r.URL.RawPath == "" {
		return param, true
	}
	value, err := url.PathUnescape(param)
	if err != nil {
		return param, false
	}
	return value, true
}
