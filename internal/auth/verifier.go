package auth

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/golang-jwt/jwt/v5"

	"github.com/taskchat/taskchat/internal/setting"
)

// The limits of the bearer tokens taskchat accepts.
const (
	// MinSecretBytes is the shortest HS256 secret we accept: RFC 7518
	// §3.2 asks for a key at least as long as the hash output.
	MinSecretBytes = 32
	// MaxTokenBytes bounds the work an unauthenticated request can
	// cause; our own tokens are a few hundred bytes.
	MaxTokenBytes = 8 << 10
	// defaultLeeway absorbs clock skew between the issuer and us.
	defaultLeeway = 30 * time.Second
	// maxUserIDBytes matches the user_id columns of the store.
	maxUserIDBytes = 255
)

// ErrWeakSecret is what is wrong with a signing secret too short to be
// safe for HS256, so the server refuses to start rather than accept
// forgeable tokens. It follows the name of the secret: Config's errors say
// "Secret must be at least 32 bytes (got 5)".
var ErrWeakSecret = fmt.Errorf("must be at least %d bytes", MinSecretBytes)

// ErrInvalidToken wraps every reason Verify rejects a token, so callers can
// test for it with errors.Is while the cause stays available for logs.
var ErrInvalidToken = errors.New("invalid bearer token")

// ErrNoToken is Authenticate's error for a request with no bearer token at
// all: no Authorization header, or one of another scheme, such as Basic.
var ErrNoToken = errors.New("no bearer token")

// Config says which tokens the API trusts: HS256 tokens signed with
// Secret, the EdDSA, RS256 and ES256 tokens of an identity provider whose
// keys JWKS names, or both. Issuer and Audience are checked when set, and
// must be set with a JWKS: a provider signs tokens for many services, and
// only those two claims say a token is for this one. A zero Leeway means
// 30 seconds. Its errors name its fields (see setting.Error).
type Config struct {
	Secret   []byte // nil when only the JWKS is trusted
	Issuer   string
	Audience string
	Leeway   time.Duration
	JWKS     JWKSConfig
	// Log receives the JWKS's loads and failed fetches; nil for none.
	Log *slog.Logger
}

// Verifier turns the bearer token of a request into the user it names. It
// holds no per-request state and is safe for concurrent use. Close stops
// its JWKS refreshes.
type Verifier struct {
	secret   []byte // nil when HS256 is not accepted
	issuer   string // for the tokens the development login mints
	audience string
	methods  []string  // the algorithms accepted, each pinned to one key source
	jwks     *jwksKeys // nil without a JWKS
	parser   *jwt.Parser
}

// NewVerifier checks cfg once, at start-up, so a weak secret or a
// negative leeway stops the server instead of weakening every request.
// With a JWKS it fetches the key set once, for at most JWKS.Timeout; a
// provider that does not answer yet is no error (see newJWKSKeys).
func NewVerifier(cfg Config) (*Verifier, error) {
	if err := checkConfig(cfg); err != nil {
		return nil, err
	}
	v := &Verifier{issuer: cfg.Issuer, audience: cfg.Audience}
	if len(cfg.Secret) > 0 {
		v.secret = append([]byte(nil), cfg.Secret...)
		v.methods = append(v.methods, jwt.SigningMethodHS256.Alg())
	}
	if cfg.JWKS.URL != "" {
		keys, err := newJWKSKeys(cfg.JWKS, cfg.Log)
		if err != nil {
			return nil, err
		}
		v.jwks = keys
		v.methods = append(v.methods, jwksMethods...)
	}
	v.parser = jwt.NewParser(parserOptions(cfg, v.methods)...)
	return v, nil
}

// checkConfig refuses a configuration that would accept forgeable
// tokens, or tokens meant for another service, naming every problem.
func checkConfig(cfg Config) error {
	var errs []error
	if (cfg.JWKS.URL == "" || len(cfg.Secret) > 0) && len(cfg.Secret) < MinSecretBytes {
		errs = append(errs, setting.Invalid("Secret", "%w (got %d)", ErrWeakSecret, len(cfg.Secret)))
	}
	if cfg.Leeway < 0 {
		errs = append(errs, setting.Invalid("Leeway", "must not be negative (got %s)", cfg.Leeway))
	}
	if cfg.JWKS.URL != "" {
		errs = append(errs, checkJWKSConfig(cfg.JWKS))
		const why = "an identity provider signs tokens for many services, and only iss and aud say a token is for this one"
		if cfg.Issuer == "" {
			errs = append(errs, setting.Invalid("Issuer", "is required with a JWKS: %s", why))
		}
		if cfg.Audience == "" {
			errs = append(errs, setting.Invalid("Audience", "is required with a JWKS: %s", why))
		}
	}
	return errors.Join(errs...)
}

// Close stops the JWKS's refreshes: the keys loaded still verify, and no
// fetch happens any more. It is safe to call more than once.
func (v *Verifier) Close() {
	if v.jwks != nil {
		v.jwks.close()
	}
}

// parserOptions pins the algorithms and the claims we require. Issuer and
// audience are added only when set: jwt.WithAudience("") would demand an
// empty audience rather than none.
func parserOptions(cfg Config, methods []string) []jwt.ParserOption {
	leeway := cfg.Leeway
	if leeway == 0 {
		leeway = defaultLeeway
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

// Authenticate returns the user that r's bearer token names. Its error is
// ErrNoToken when r presents no bearer token, and otherwise one Verify
// returns; Reason names either for the access log.
func (v *Verifier) Authenticate(r *http.Request) (userID string, err error) {
	token, presented := bearerToken(r.Header)
	if !presented {
		return "", &rejection{reason: ReasonMissing, err: ErrNoToken}
	}
	return v.Verify(token)
}

// Verify checks token's signature and claims and returns the user it names.
// Every failure wraps ErrInvalidToken, and Reason names it; no error ever
// contains the token.
func (v *Verifier) Verify(token string) (userID string, err error) {
	if userID, err = v.verify(token); err != nil {
		return "", &rejection{reason: v.rejectionReason(err, token), err: err}
	}
	return userID, nil
}

func (v *Verifier) verify(token string) (userID string, err error) {
	if token == "" {
		return "", fmt.Errorf("%w: %w", ErrInvalidToken, errTokenEmpty)
	}
	if len(token) > MaxTokenBytes {
		return "", fmt.Errorf("%w: %w", ErrInvalidToken, errTokenOversized)
	}
	var claims jwt.RegisteredClaims
	if _, err := v.parser.ParseWithClaims(token, &claims, v.key); err != nil {
		return "", fmt.Errorf("%w: %w", ErrInvalidToken, err)
	}
	if err := CheckUserID(claims.Subject); err != nil {
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
func (v *Verifier) key(t *jwt.Token) (any, error) {
	switch {
	case t.Method == jwt.SigningMethodHS256 && v.secret != nil:
		return v.secret, nil
	case v.jwks != nil && isJWKSMethod(t.Method.Alg()):
		return v.jwks.key(t)
	}
	return nil, fmt.Errorf("unexpected signing method %q", t.Method.Alg())
}

// CheckUserID enforces what the store and the logs can hold safely, of the
// user id a token names or the development login is asked for.
func CheckUserID(id string) error {
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

// MintToken signs an HS256 token for userID, valid from now for ttl, with
// iss and aud when they are not empty. It serves the dev "token" command
// and tests, and holds itself to the rules Verify applies.
func MintToken(secret []byte, userID string, ttl time.Duration, issuer, audience string, now time.Time) (string, error) {
	if len(secret) < MinSecretBytes {
		return "", fmt.Errorf("the secret %w (got %d)", ErrWeakSecret, len(secret))
	}
	if err := CheckUserID(userID); err != nil {
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
