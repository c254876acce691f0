package auth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/time/rate"

	"github.com/taskchat/taskchat/internal/setting"
)

// JWKSConfig names an identity provider's JSON Web Key Set (RFC 7517) and
// how it is kept fresh. Every duration must be positive; cmd/server holds
// their defaults. Its errors name its fields as Config's: JWKS.URL.
type JWKSConfig struct {
	// URL is where the set is fetched: https, or http to a loopback host.
	URL string
	// Refresh is how often the set is fetched again, so that a key the
	// provider withdraws stops verifying tokens.
	Refresh time.Duration
	// UnknownKeyRefresh is the least time between the fetches that tokens
	// naming an unknown kid cause: a key the provider rotates in works at
	// once, and a flood of made-up kids costs the provider one request
	// per UnknownKeyRefresh.
	UnknownKeyRefresh time.Duration
	// Timeout bounds one fetch, and so the wait of the request whose
	// unknown kid caused it.
	Timeout time.Duration
}

// maxJWKSBytes bounds the key set we read: providers publish a few keys in
// a few kilobytes (Keycloak's, with certificates, some tens), and a
// misbehaving endpoint must not fill our memory.
const maxJWKSBytes = 1 << 20

// maxJWKSRedirects is how many redirects a fetch follows, each to a URL
// CheckJWKSURL accepts.
const maxJWKSRedirects = 3

// minRSABits is the smallest RSA modulus we verify with (NIST SP 800-131A).
const minRSABits = 2048

// jwksMethods are the algorithms a JWKS key may verify. Each takes one
// kind of key only (see fitsMethod), and none is HS256, which only our
// own secret verifies.
var jwksMethods = []string{
	jwt.SigningMethodEdDSA.Alg(),
	jwt.SigningMethodRS256.Alg(),
	jwt.SigningMethodES256.Alg(),
}

func isJWKSMethod(alg string) bool { return slices.Contains(jwksMethods, alg) }

// jwksKeys is a provider's key set, kept by jwkset: fetched at start,
// every Refresh, and when a token names a kid the set lacks, at most once
// per UnknownKeyRefresh. A failed fetch keeps the keys already loaded.
type jwksKeys struct {
	ctx  context.Context // ends the refreshes
	stop context.CancelFunc
	set  jwkset.Storage
}

// newJWKSKeys fetches cfg's key set once and starts its refreshes. A
// provider that does not answer is no error: the server starts, logs why,
// refuses the provider's tokens (401 keys_unavailable) and keeps trying,
// at each such token (at most once per UnknownKeyRefresh) and every
// Refresh. An identity provider is often deployed with or after us (Better
// Auth lives in the web app), and a server that exits instead would turn
// one unreachable dependency into a crash loop of the whole API.
//
// cfg has passed checkJWKSConfig.
func newJWKSKeys(cfg JWKSConfig, log *slog.Logger) (*jwksKeys, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	where := redactedURL(cfg.URL)
	ctx, stop := context.WithCancel(context.Background())
	fetched, err := jwkset.NewStorageFromHTTP(cfg.URL, jwkset.HTTPClientStorageOptions{
		Client:                    jwksClient(cfg.Timeout),
		Ctx:                       ctx,
		HTTPTimeout:               cfg.Timeout,
		NoErrorReturnFirstHTTPReq: true,
		RefreshErrorHandler: func(_ context.Context, err error) {
			log.Error("JWKS fetch failed; the keys already loaded stay in use", "url", where, "err", err)
		},
		RefreshInterval: cfg.Refresh,
		Storage:         &loggedKeySet{MemoryJWKSet: jwkset.NewMemoryStorage(), log: log, url: where},
	})
	if err != nil {
		stop()
		return nil, setting.Invalid("JWKS.URL", "is not usable: %w", err)
	}
	set, err := jwkset.NewHTTPClient(jwkset.HTTPClientOptions{
		HTTPURLs: map[string]jwkset.Storage{cfg.URL: fetched},
		// A kid that is not in the set waits for a fetch only when one is
		// allowed within Timeout; the rest are refused at once.
		RateLimitWaitMax:  cfg.Timeout,
		RefreshUnknownKID: rate.NewLimiter(rate.Every(cfg.UnknownKeyRefresh), 1),
	})
	if err != nil {
		stop()
		return nil, setting.Invalid("JWKS.URL", "is not usable: %w", err)
	}
	k := &jwksKeys{ctx: ctx, stop: stop, set: set}
	if k.empty() {
		log.Warn("no JWKS keys yet: tokens signed by the identity provider are refused (auth_error keys_unavailable) until it answers; trying again at such a token and at every refresh",
			"url", where, "unknown_kid_refresh", cfg.UnknownKeyRefresh.String(), "refresh", cfg.Refresh.String())
	}
	return k, nil
}

func (k *jwksKeys) close() { k.stop() }

// checkJWKSConfig names each field of cfg, a JWKS's, that is wrong.
func checkJWKSConfig(cfg JWKSConfig) error {
	errs := []error{CheckJWKSURL(cfg.URL)}
	for _, d := range []struct {
		field string
		value time.Duration
	}{{"JWKS.Refresh", cfg.Refresh}, {"JWKS.UnknownKeyRefresh", cfg.UnknownKeyRefresh}, {"JWKS.Timeout", cfg.Timeout}} {
		if d.value <= 0 {
			errs = append(errs, setting.Invalid(d.field, "must be positive (got %s)", d.value))
		}
	}
	return errors.Join(errs...)
}

// key returns the public key that the kid of t names, if it is one for
// t's algorithm. An unknown kid fetches the set again when the rate limit
// allows, within the request.
func (k *jwksKeys) key(t *jwt.Token) (any, error) {
	kid, _ := t.Header[jwkset.HeaderKID].(string)
	if kid == "" {
		return nil, fmt.Errorf("%w: the token has none", errUnknownKey)
	}
	jwk, err := k.set.KeyRead(k.ctx, kid)
	if err != nil {
		if k.empty() {
			return nil, errKeysUnavailable
		}
		return nil, errUnknownKey
	}
	return fitKey(jwk, t.Method.Alg())
}

func (k *jwksKeys) empty() bool {
	keys, err := k.set.KeyReadAll(k.ctx)
	return err != nil || len(keys) == 0
}

// fitKey returns jwk's public key if the key may verify a signature made
// with alg: its use, key_ops and alg, when present, must say so, its type
// (and curve or size) must be alg's, and it must not be a private key. A
// private key in a published set is a provider's leak: anyone who reads
// the set can sign with it, so its tokens prove nothing. golang-jwt checks
// the Go type too; the curve, the size and the leak only we do.
func fitKey(jwk jwkset.JWK, alg string) (any, error) {
	m := jwk.Marshal()
	switch {
	case m.USE != "" && m.USE != jwkset.UseSig:
		return nil, fmt.Errorf("%w: its use is %q", errWrongKey, m.USE)
	case len(m.KEYOPS) > 0 && !slices.Contains(m.KEYOPS, jwkset.KeyOpsVerify):
		return nil, fmt.Errorf("%w: its key_ops lack verify", errWrongKey)
	case m.ALG != "" && string(m.ALG) != alg:
		return nil, fmt.Errorf("%w: it is for %s, the token says %s", errWrongKey, m.ALG, alg)
	}
	key := jwk.Key()
	if isPrivateKey(key) {
		return nil, fmt.Errorf("%w: the set publishes its private key", errWrongKey)
	}
	if !fitsMethod(key, alg) {
		return nil, fmt.Errorf("%w: a %s key (%T) cannot verify %s", errWrongKey, m.KTY, key, alg)
	}
	return key, nil
}

// isPrivateKey reports whether key is a private key: jwkset loads a JWK
// that carries its private members ("d") as one.
func isPrivateKey(key any) bool {
	_, ok := key.(interface{ Public() crypto.PublicKey })
	return ok
}

// fitsMethod reports whether key is the one kind of key alg takes.
func fitsMethod(key any, alg string) bool {
	switch k := key.(type) {
	case ed25519.PublicKey:
		return alg == jwt.SigningMethodEdDSA.Alg() && len(k) == ed25519.PublicKeySize
	case *rsa.PublicKey:
		return alg == jwt.SigningMethodRS256.Alg() && k.N.BitLen() >= minRSABits
	case *ecdsa.PublicKey:
		return alg == jwt.SigningMethodES256.Alg() && k.Curve == elliptic.P256()
	}
	return false
}

// loggedKeySet is the key set's storage, which logs each load that
// changes the key ids: the first load, a rotation, a withdrawn key.
type loggedKeySet struct {
	*jwkset.MemoryJWKSet
	log *slog.Logger
	url string
}

func (s *loggedKeySet) KeyReplaceAll(ctx context.Context, keys []jwkset.JWK) error {
	before, _ := s.KeyReadAll(ctx)
	if err := s.MemoryJWKSet.KeyReplaceAll(ctx, keys); err != nil {
		return err
	}
	if was, now := keyIDs(before), keyIDs(keys); !slices.Equal(was, now) {
		s.log.Info("JWKS loaded", "url", s.url, "keys", len(keys), "kids", now)
		for _, k := range keys {
			if isPrivateKey(k.Key()) {
				s.log.Error("the JWKS publishes a private key: tokens naming it are refused (auth_error wrong_key); withdraw it from the provider and rotate",
					"url", s.url, "kid", k.Marshal().KID)
			}
		}
	}
	return nil
}

func keyIDs(keys []jwkset.JWK) []string {
	ids := make([]string, len(keys))
	for i, k := range keys {
		ids[i] = k.Marshal().KID
	}
	slices.Sort(ids)
	return ids
}

// CheckJWKSURL says whether raw may serve as the JWKS URL: https, or http
// to a loopback host (a provider on this machine, in development). Keys
// fetched over plain http across a network can be swapped on the way, and
// whoever swaps them signs in as anyone. Its error names the field
// JWKS.URL, for the URL of a redirect too: it is where JWKS.URL led.
func CheckJWKSURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return setting.Invalid("JWKS.URL", "must be an https URL such as https://app.example.com/api/auth/jwks, got %q", raw)
	}
	if u.Scheme == "http" && !isLoopbackHost(u.Hostname()) {
		return setting.Invalid("JWKS.URL", "must use https unless its host is loopback (localhost, 127.0.0.1, ::1): keys fetched over plain http can be replaced on the way; got %q", redactedURL(raw))
	}
	return nil
}

// redactedURL is raw without a password, for logs and errors.
func redactedURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// jwksClient fetches key sets: within timeout, at most maxJWKSBytes, and
// following only redirects to URLs CheckJWKSURL accepts, so a redirect
// cannot downgrade the fetch to plain http.
func jwksClient(timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout:   timeout,
		Transport: cappedTransport{next: http.DefaultTransport, limit: maxJWKSBytes},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > maxJWKSRedirects {
				return fmt.Errorf("stopped after %d redirects", maxJWKSRedirects)
			}
			return CheckJWKSURL(req.URL.String())
		},
	}
}

// cappedTransport makes every response body fail past limit bytes.
type cappedTransport struct {
	next  http.RoundTripper
	limit int64
}

func (t cappedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.ContentLength > t.limit {
		resp.Body.Close()
		return nil, fmt.Errorf("%w (Content-Length %d)", errJWKSTooLarge, resp.ContentLength)
	}
	resp.Body = &cappedBody{ReadCloser: resp.Body, left: t.limit}
	return resp, nil
}

var errJWKSTooLarge = fmt.Errorf("the JWKS is larger than %d bytes", maxJWKSBytes)

// cappedBody reads up to left bytes, and fails if there are more.
type cappedBody struct {
	io.ReadCloser
	left int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.ReadCloser.Read(p)
	if int64(n) > b.left {
		return 0, errJWKSTooLarge
	}
	b.left -= int64(n)
	return n, err
}

// The logging storage must stay a jwkset.Storage.
var _ jwkset.Storage = (*loggedKeySet)(nil)
