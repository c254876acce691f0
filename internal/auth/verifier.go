package http

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/golang-jwt/jwt/v5"
)

// The limits of the bearer tokens taskchat accepts.
const (
	// minSecretBytes is the shortest HS256 secret we accept: RFC 7518
	// §3.2 asks for a key at least as long as the hash output.
	minSecretBytes = 32
	// defaultAuthLeeway absorbs clock skew between the issuer and us.
	defaultAuthLeeway = 30 * time.Second
	// maxBearerTokenBytes bounds the work an unauthenticated request can
	// cause; our own tokens are a few hundred bytes.
	maxBearerTokenBytes = 8 << 10
	// maxUserIDBytes matches the user_id columns of the store.
	maxUserIDBytes = 255
)

// bearerChallenge is the WWW-Authenticate value of every 401 (RFC 6750 §3).
const bearerChallenge = `Bearer realm="taskchat"`

// ErrWeakSecret is returned when the signing secret is too short to be safe
// for HS256, so the server refuses to start rather than accept forgeable
// tokens.
var ErrWeakSecret = fmt.Errorf("JWT_SECRET must be at least %d bytes", minSecretBytes)

// ErrInvalidToken wraps every reason Verify rejects a token, so callers can
// test for it with errors.Is while the cause stays available for logs.
var ErrInvalidToken = errors.New("invalid bearer token")

// AuthConfig says which tokens the API trusts: HS256 tokens signed with
// Secret, the EdDSA, RS256 and ES256 tokens of an identity provider whose
// keys JWKS names, or both. Issuer and Audience are checked when set, and
// must be set with a JWKS: a provider signs tokens for many services, and
// only those two claims say a token is for this one. A zero Leeway means
// 30 seconds.
type AuthConfig struct {
	Secret   []byte // nil when only the JWKS is trusted
	Issuer   string
	Audience string
	Leeway   time.Duration
	JWKS     JWKSConfig
	// Log receives the JWKS's loads and failed fetches; nil for none.
	Log *slog.Logger
}

// Authenticator verifies the bearer tokens that identify a user. It holds
// no per-request state and is safe for concurrent use. Close stops its
// JWKS refreshes.
type Authenticator struct {
	secret   []byte // nil when HS256 is not accepted
	issuer   string // for the tokens the development login mints
	audience string
	methods  []string  // the algorithms accepted, each pinned to one key source
	jwks     *jwksKeys // nil without a JWKS
	parser   *jwt.Parser
}

// NewAuthenticator checks cfg once, at start-up, so a weak secret or a
// negative leeway stops the server instead of weakening every request.
// With a JWKS it fetches the key set once, for at most JWKS.Timeout; a
// provider that does not answer yet is no error (see newJWKSKeys).
func NewAuthenticator(cfg AuthConfig) (*Authenticator, error) {
	if err := checkAuthConfig(cfg); err != nil {
		return nil, err
	}
	a := &Authenticator{issuer: cfg.Issuer, audience: cfg.Audience}
	if len(cfg.Secret) > 0 {
		a.secret = append([]byte(nil), cfg.Secret...)
		a.methods = append(a.methods, jwt.SigningMethodHS256.Alg())
	}
	if cfg.JWKS.URL != "" {
		keys, err := newJWKSKeys(cfg.JWKS, cfg.Log)
		if err != nil {
			return nil, err
		}
		a.jwks = keys
		a.methods = append(a.methods, jwksMethods...)
	}
	a.parser = jwt.NewParser(parserOptions(cfg, a.methods)...)
	return a, nil
}

// checkAuthConfig refuses a configuration that would accept forgeable
// tokens, or tokens meant for another service.
func checkAuthConfig(cfg AuthConfig) error {
	if (cfg.JWKS.URL == "" || len(cfg.Secret) > 0) && len(cfg.Secret) < minSecretBytes {
		return fmt.Errorf("%w (got %d)", ErrWeakSecret, len(cfg.Secret))
	}
	if cfg.Leeway < 0 {
		return fmt.Errorf("JWT leeway must not be negative (got %s)", cfg.Leeway)
	}
	if cfg.JWKS.URL != "" && (cfg.Issuer == "" || cfg.Audience == "") {
		return errors.New("JWT_JWKS_URL needs JWT_ISSUER and JWT_AUDIENCE: an identity provider signs tokens for many services, and only iss and aud say a token is for this one")
	}
	return nil
}

// Close stops the JWKS's refreshes: the keys loaded still verify, and no
// fetch happens any more. It is safe to call more than once.
func (a *Authenticator) Close() {
	if a.jwks != nil {
		a.jwks.close()
	}
}

// parserOptions pins the algorithms and the claims we require. Issuer and
// audience are added only when set: jwt.WithAudience("") would demand an
// empty audience rather than none.
func parserOptions(cfg AuthConfig, methods []string) []jwt.ParserOption {
	leeway := cfg.Leeway
	if leeway == 0 {
		leeway = defaultAuthLeeway
	}
	opts := []jwt.ParserOption{
		jwt.WithValidMethods(methods),
		jwt.WithExpirationRequired(),
		jwt.WithLeeway(leeway),
		jwt.WithStrictDecoding(),
	}
	if cfg.Issuer != "" {
		opts = append(opts, jwt.WithIssuer(cfg.Issuer))
	}
	if cfg.Audience != "" {
		opts = append(opts, jwt.WithAudience(cfg.Audience))
	}
	return opts
}

// Verify checks token's signature and claims and returns the user it names.
// Every failure wraps ErrInvalidToken; no error ever contains the token.
func (a *Authenticator) Verify(token string) (userID string, err error) {
	if token == "" {
		return "", fmt.Errorf("%w: %w", ErrInvalidToken, errTokenEmpty)
	}
	if len(token) > maxBearerTokenBytes {
		return "", fmt.Errorf("%w: %w", ErrInvalidToken, errTokenOversized)
	}
	var claims jwt.RegisteredClaims
	if _, err := a.parser.ParseWithClaims(token, &claims, a.key); err != nil {
		return "", fmt.Errorf("%w: %w", ErrInvalidToken, err)
	}
	if err := checkUserID(claims.Subject); err != nil {
		return "", fmt.Errorf("%w: %w %w", ErrInvalidToken, errBadSubject, err)
	}
	return claims.Subject, nil
}

// key hands the parser the key of the token's algorithm, each algorithm
// pinned to one source: HS256 to our secret and nothing else, EdDSA, RS256
// and ES256 to the JWKS key the token's kid names and nothing else. The
// parser pins the algorithms already, but a key function that trusts the
// header's alg is how "alg confusion" attacks start: a public key must
// never serve as an HMAC secret.
func (a *Authenticator) key(t *jwt.Token) (any, error) {
	switch {
	case t.Method == jwt.SigningMethodHS256 && a.secret != nil:
		return a.secret, nil
	case a.jwks != nil && isJWKSMethod(t.Method.Alg()):
		return a.jwks.key(t)
	}
	return nil, fmt.Errorf("unexpected signing method %q", t.Method.Alg())
}

// checkUserID enforces what the store and the logs can hold safely.
func checkUserID(id string) error {
	switch {
	case id == "":
		return errors.New("is missing or empty")
	case len(id) > maxUserIDBytes:
		return fmt.Errorf("is longer than %d bytes", maxUserIDBytes)
	case !utf8.ValidString(id):
		return errors.New("is not valid UTF-8")
	case strings.ContainsFunc(id, unicode.IsControl):
		return errors.New("contains control characters")
	}
	return nil
}

// RequireUser answers 401 unless the request carries a valid bearer token,
// and otherwise passes it on with the token's user in its context, where
// handlers read it with userFrom.
func (a *Authenticator) RequireUser(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, presented := bearerToken(r.Header)
		if !presented {
			rejectRequest(w, r, reasonMissing)
			return
		}
		userID, err := a.Verify(token)
		if err != nil {
			rejectRequest(w, r, a.rejectionReason(err, token))
			return
		}
		next.ServeHTTP(w, r.WithContext(withUser(r.Context(), userID)))
	})
}

// bearerToken returns the token of the request's one Authorization header.
// presented is false when there is no Bearer credential at all (no header,
// or another scheme such as Basic), which RFC 6750 §3.1 answers without an
// error code; an empty token or several headers count as presented, so
// Verify rejects them as invalid.
func bearerToken(h http.Header) (token string, presented bool) {
	values := h.Values("Authorization")
	if len(values) == 0 {
		return "", false
	}
	if len(values) > 1 {
		return "", true
	}
	scheme, token, _ := strings.Cut(strings.TrimSpace(values[0]), " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimSpace(token), true
}

// writeUnauthorized answers 401 with the challenge RFC 6750 asks for. The
// detail stays vague on purpose: telling an expired token from a forged
// one helps attackers more than clients.
func writeUnauthorized(w http.ResponseWriter, invalidToken bool, detail string) {
	challenge := bearerChallenge
	if invalidToken {
		challenge += `, error="invalid_token"`
	}
	w.Header().Set("WWW-Authenticate", challenge)
	writeProblem(w, apiErr(codeUnauthorized, detail))
}

// RequirePathUser answers 403 unless the {user_id} of the route is the
// verified user, so one user can never address another's resources. It must
// run after RequireUser, inside a chi route with a {user_id} parameter; it
// fails closed when either is missing. The comparison is exact, on the
// decoded parameter (see pathUser), so handlers may rely on userFrom alone.
func RequirePathUser(next http.Handler) http.Handler {
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

// userFrom returns the user id RequireUser verified, or "" if none.
func userFrom(ctx context.Context) string {
	userID, _ := ctx.Value(userKey{}).(string)
	return userID
}

// MintToken signs an HS256 token for userID, valid from now for ttl, with
// iss and aud when they are not empty. It serves the dev "token" command
// and tests, and holds itself to the rules Verify applies.
func MintToken(secret []byte, userID string, ttl time.Duration, issuer, audience string, now time.Time) (string, error) {
	if len(secret) < minSecretBytes {
		return "", fmt.Errorf("%w (got %d)", ErrWeakSecret, len(secret))
	}
	if err := checkUserID(userID); err != nil {
		return "", fmt.Errorf("user id %w", err)
	}
	if ttl <= 0 {
		return "", fmt.Errorf("token lifetime must be positive (got %s)", ttl)
	}
	claims := jwt.RegisteredClaims{
		Issuer:    issuer,
		Subject:   userID,
		IssuedAt:  jwt.NewNumericDate(now),
		NotBefore: jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(now.Add(ttl)),
	}
	if audience != "" {
		claims.Audience = jwt.ClaimStrings{audience}
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(secret)
}
