package http

import (
	"context"
	"net/http"

	"github.com/taskchat/taskchat/internal/auth"
)

// requireUser answers 401 unless v accepts the request's bearer token, and
// otherwise passes the request on with the token's user in its context,
// where handlers read it with userFrom. The access log says why a token
// was refused (auth_error), in auth.Reason's words.
func requireUser(v *auth.Verifier) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			userID, err := v.Authenticate(r)
			if err != nil {
				infoFrom(r.Context()).authError = auth.Reason(err)
				writeProblem(w, toAPIError(err))
				return
			}
			next.ServeHTTP(w, r.WithContext(withUser(r.Context(), userID)))
		})
	}
}

// requirePathUser answers 403 unless the {user_id} of the route is the
// verified user, so one user can never address another's resources. It must
// run after requireUser, inside a chi route with a {user_id} parameter; it
// fails closed when either is missing. The comparison is exact, on the
// decoded parameter (see pathUser), so handlers may rely on userFrom alone.
func requirePathUser(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		userID := userFrom(r.Context())
		if path, ok := pathUser(r); userID == "" || !ok || userID != path {
			writeProblem(w, apiErr(codeForbidden, "This token does not grant access to this user's resources."))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// userKey is the context key of the verified user id; being unexported,
// no other package can set or overwrite it.
type userKey struct{}

// withUser returns ctx carrying the verified user id.
func withUser(ctx context.Context, userID string) context.Context {
	return context.WithValue(ctx, userKey{}, userID)
}

// userFrom returns the user id requireUser verified, or "" if none.
func userFrom(ctx context.Context) string {
	userID, _ := ctx.Value(userKey{}).(string)
	return userID
}
