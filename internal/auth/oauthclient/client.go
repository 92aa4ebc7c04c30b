// client.go is the gateway as an OAuth client of a backend that demands
// access tokens, by the client credentials grant (OAuth 2.1 §4.2; MCP's
// io.modelcontextprotocol/oauth-client-credentials extension). The
// backend's Protected Resource Metadata (RFC 9728) names its authorization
// server, whose metadata names the token endpoint. The token is asked for
// the backend's resource (RFC 8707), and renewed by golang.org/x/oauth2
// before it expires. The caller's own credential is never what a backend
// sees: every request carries this token only.
//
// The client authenticates with its secret (client_secret_basic or
// client_secret_post), or with a JWT it signs (private_key_jwt, RFC 7523
// §2.2 as SEP-1046 uses it). The JWT has its client_id as iss and sub, the
// authorization server's issuer as aud, a fresh jti and a minute's life. It
// is made anew for every token request.

package oauthclient

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/mcpgate/mcpgate/internal/auth/oauthmeta"
	"github.com/mcpgate/mcpgate/internal/egress"
)

// ClientCredentials is one backend's client of the client credentials
// grant, or of the JWT-bearer grant (RFC 7523 §2.1) with a workload's own
// identity token as the assertion (workload identity federation, SEP-1933).
type ClientCredentials struct {
	// Assertion, when set, makes the grant JWT-bearer: it is called at
	// each token request for the JWT to present (a projected service
	// account token is re-read from its file, which its platform renews).
	// ClientID is then optional and no client authentication is sent.
	Assertion    func() (string, error)
	ClientID     string
	ClientSecret string
	Scopes       []string
	// TokenURL is the token endpoint; "": discovered from Issuer's
	// metadata.
	TokenURL string
	// Issuer is the authorization server the credential may be sent to,
	// when TokenURL is not given: its metadata names the token endpoint.
	// A backend whose resource metadata names another authorization
	// server is refused before any credential is sent: a backend that
	// named itself received the secret, or the workload's assertion.
	Issuer string
	// AuthMethod is how the client authenticates at the token endpoint:
	// client_secret_basic (default), client_secret_post, or
	// private_key_jwt (with PrivateKey, not ClientSecret).
	AuthMethod string
	// PrivateKey signs the client's assertions for private_key_jwt: an
	// *ecdsa.PrivateKey, *rsa.PrivateKey or ed25519.PrivateKey
	// (ParsePrivateKey reads one from PEM).
	PrivateKey crypto.Signer
	// SigningAlg is the assertion's alg ("": the key's usual one, ES256
	// for P-256, ES384 for P-384, ES512 for P-521, RS256 for RSA, EdDSA
	// for Ed25519).
	SigningAlg string
	// Outbound is the policy of the discovery and token requests (nil:
	// the default, public addresses only); the resource's own origin and
	// TokenURL's are reached whatever their address.
	Outbound *egress.Policy
}

// PrivateKeyJWT is the token endpoint authentication by a signed JWT.
const PrivateKeyJWT = "private_key_jwt"

// ParsePrivateKey reads a PEM private key (PKCS #8, SEC 1 or PKCS #1)
// for private_key_jwt and checks that alg ("" for the key's usual one)
// suits it. Its errors never quote the key.
func ParsePrivateKey(pemText []byte, alg string) (crypto.Signer, error) {
	block, _ := pem.Decode(pemText)
	if block == nil {
		return nil, errors.New("oauth: the private key is not PEM")
	}
	var key any
	var err error
	if key, err = x509.ParsePKCS8PrivateKey(block.Bytes); err != nil {
		if key, err = x509.ParseECPrivateKey(block.Bytes); err != nil {
			if key, err = x509.ParsePKCS1PrivateKey(block.Bytes); err != nil {
				return nil, errors.New("oauth: the private key is neither PKCS #8, SEC 1 nor PKCS #1")
			}
		}
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("oauth: a %T cannot sign", key)
	}
	if _, err := signingMethod(signer, alg); err != nil {
		return nil, err
	}
	return signer, nil
}

// signingMethod is alg's method for key, or key's usual one.
func signingMethod(key crypto.Signer, alg string) (jwt.SigningMethod, error) {
	usual := ""
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		usual = map[int]string{256: "ES256", 384: "ES384", 521: "ES512"}[k.Curve.Params().BitSize]
	case *rsa.PrivateKey:
		usual = "RS256"
	case ed25519.PrivateKey:
		usual = "EdDSA"
	}
	if alg == "" {
		alg = usual
	}
	m := jwt.GetSigningMethod(alg)
	ok := false
	switch key.(type) {
	case *ecdsa.PrivateKey:
		ok = alg == usual // the curve fixes the alg
	case *rsa.PrivateKey:
		ok = strings.HasPrefix(alg, "RS") || strings.HasPrefix(alg, "PS")
	case ed25519.PrivateKey:
		ok = alg == "EdDSA"
	}
	if m == nil || !ok {
		return nil, fmt.Errorf("oauth: the alg %q does not suit a %T", alg, key)
	}
	return m, nil
}

// JWTBearerGrant is the JWT-bearer grant's grant_type (RFC 7523 §2.1).
const JWTBearerGrant = "urn:ietf:params:oauth:grant-type:jwt-bearer"

// clientAssertionType is a client authenticated by a JWT (RFC 7523 §2.2).
const clientAssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

// freshSource asks for a token with parameters made anew for each token
// request — an assertion of the moment — beside cfg's (a ReuseTokenSource
// around it asks only when the token expires).
type freshSource struct {
	ctx    context.Context
	cfg    clientcredentials.Config
	params func() (url.Values, error)
}

func (f *freshSource) Token() (*oauth2.Token, error) {
	params, err := f.params()
	if err != nil {
		return nil, err
	}
	cfg := f.cfg
	cfg.EndpointParams = params
	for k, v := range f.cfg.EndpointParams {
		cfg.EndpointParams[k] = v
	}
	return cfg.Token(f.ctx)
}

// bearerGrant is the JWT-bearer grant's parameters: the workload's
// assertion as it is now.
func bearerGrant(assertion func() (string, error)) func() (url.Values, error) {
	return func() (url.Values, error) {
		a, err := assertion()
		if err != nil {
			return nil, fmt.Errorf("oauth: the JWT-bearer assertion: %w", err)
		}
		return url.Values{"grant_type": {JWTBearerGrant}, "assertion": {a}}, nil
	}
}

// clientAssertion is private_key_jwt's parameters: a fresh assertion of
// clientID for audience, signed with key.
func clientAssertion(clientID, audience string, key crypto.Signer, method jwt.SigningMethod) func() (url.Values, error) {
	return func() (url.Values, error) {
		now := time.Now()
		assertion, err := jwt.NewWithClaims(method, jwt.RegisteredClaims{
			Issuer: clientID, Subject: clientID, Audience: jwt.ClaimStrings{audience},
			ID: rand.Text(), IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(time.Minute)),
		}).SignedString(key)
		if err != nil {
			return nil, fmt.Errorf("oauth: signing the client assertion: %w", err)
		}
		return url.Values{"client_assertion_type": {clientAssertionType}, "client_assertion": {assertion}}, nil
	}
}

// Client is an HTTP client that sends base's requests with an access
// token for resource (base nil: http.DefaultClient). A failure to get a
// token fails the request, naming the step, never the secret.
func (c ClientCredentials) Client(base *http.Client, resource string) *http.Client {
	if base == nil {
		base = http.DefaultClient
	}
	src := &lazySource{cfg: c, resource: resource, http: c.Outbound.Client(resource, c.TokenURL, c.Issuer)}
	out := *base
	rt := base.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	out.Transport = &ccTransport{src: src, base: rt}
	return &out
}

// ccTransport sends each request with the source's token: as a bearer
// token, or bound by DPoP with a fresh proof (and once more with the
// nonce a backend asks for).
type ccTransport struct {
	src  *lazySource
	base http.RoundTripper
}

func (t *ccTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	tok, key, err := t.src.token()
	if err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	resp, err := sendToken(t.base, req, tok.AccessToken, key, &t.src.nonces, time.Now())
	if err != nil || key == nil || resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("DPoP-Nonce") == "" {
		return resp, err
	}
	if ch, ok := oauthmeta.ParseChallenge(resp.Header.Values("WWW-Authenticate")); !ok || ch.Error != "use_dpop_nonce" {
		return resp, nil
	}
	body, ok := replayBody(req)
	if !ok {
		return resp, nil
	}
	drain(resp)
	retry := req.Clone(req.Context())
	retry.Body = body
	return sendToken(t.base, retry, tok.AccessToken, key, &t.src.nonces, time.Now())
}

// CloseIdleConnections closes the base transport's.
func (t *ccTransport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// lazySource discovers the token endpoint at the first request, then
// hands tokens out of a ReuseTokenSource.
type lazySource struct {
	cfg      ClientCredentials
	resource string
	http     *http.Client
	nonces   dpopNonces

	mu  sync.Mutex
	src oauth2.TokenSource
	key *ecdsa.PrivateKey // the DPoP key, once a server offered DPoP (in memory: the tokens are too)
}

// token is the token to send and the key it is bound to (nil: a bearer
// token), discovering the token endpoint at the first call.
func (l *lazySource) token() (*oauth2.Token, *ecdsa.PrivateKey, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.src == nil {
		ctx := context.WithValue(context.Background(), oauth2.HTTPClient, l.http)
		// Without discovery the assertion's audience is the token endpoint
		// (RFC 7523 §3 allows it; RFC 7523bis prefers the issuer, which
		// only discovery names).
		tokenURL, issuer := l.cfg.TokenURL, l.cfg.TokenURL
		if tokenURL == "" {
			var as oauthmeta.ServerMetadata
			var err error
			if tokenURL, issuer, as, err = discoverTokenEndpoint(ctx, l.http, l.resource, l.cfg.Issuer); err != nil {
				return nil, nil, err
			}
			if offersDPoP(as) {
				// Its tokens bound to a key of the gateway's (RFC 9449): each
				// token request carries a proof of it.
				if l.key == nil {
					k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
					if err != nil {
						return nil, nil, err
					}
					l.key = k
				}
				base := l.http.Transport
				if base == nil {
					base = http.DefaultTransport
				}
				c := *l.http
				c.Transport = &dpopTokenTransport{base: base, key: l.key, nonces: &l.nonces, now: time.Now}
				ctx = context.WithValue(context.Background(), oauth2.HTTPClient, &c)
			}
		}
		style := oauth2.AuthStyleInHeader
		if l.cfg.AuthMethod == "client_secret_post" || l.cfg.AuthMethod == PrivateKeyJWT {
			style = oauth2.AuthStyleInParams
		}
		cc := clientcredentials.Config{ClientID: l.cfg.ClientID, ClientSecret: l.cfg.ClientSecret, TokenURL: tokenURL,
			Scopes: l.cfg.Scopes, AuthStyle: style, EndpointParams: url.Values{"resource": {l.resource}}}
		switch {
		case l.cfg.Assertion != nil:
			cc.ClientSecret, cc.AuthStyle = "", oauth2.AuthStyleInParams
			l.src = oauth2.ReuseTokenSource(nil, &freshSource{ctx: ctx, cfg: cc, params: bearerGrant(l.cfg.Assertion)})
		case l.cfg.AuthMethod == PrivateKeyJWT:
			m, err := signingMethod(l.cfg.PrivateKey, l.cfg.SigningAlg)
			if err != nil {
				return nil, nil, err
			}
			cc.ClientSecret = ""
			l.src = oauth2.ReuseTokenSource(nil, &freshSource{ctx: ctx, cfg: cc, params: clientAssertion(cc.ClientID, issuer, l.cfg.PrivateKey, m)})
		default:
			l.src = cc.TokenSource(ctx)
		}
	}
	t, err := l.src.Token()
	if err != nil {
		l.src = nil // discover again next time: the server may have moved
		return nil, nil, fmt.Errorf("oauth: client credentials token for %s: %w", l.resource, redactRetrieve(err))
	}
	if l.key == nil || !strings.EqualFold(t.TokenType, "DPoP") {
		return t, nil, nil
	}
	return t, l.key, nil
}

// redactRetrieve keeps a token endpoint's refusal to its error code and
// description (its body may echo what was sent).
func redactRetrieve(err error) error {
	if re, ok := err.(*oauth2.RetrieveError); ok {
		if re.ErrorCode != "" {
			return fmt.Errorf("the token endpoint answered %d %s %s", re.Response.StatusCode, re.ErrorCode, re.ErrorDescription)
		}
		return fmt.Errorf("the token endpoint answered %d", re.Response.StatusCode)
	}
	return err
}

// ErrIssuerNotConfigured: a backend names an authorization server other
// than the one its configuration says its credential may be sent to.
var ErrIssuerNotConfigured = errors.New("oauth: not the configured authorization server")

// ErrNoResourceMetadata: every place a resource's metadata may be
// answered 404 — a server of the 2025-03-26 revision, which had none.
var ErrNoResourceMetadata = errors.New("the server serves no protected resource metadata")

// ResourceMetadata is the part of RFC 9728's document a client reads.
type ResourceMetadata struct {
	Resource             string   `json:"resource"`
	AuthorizationServers []string `json:"authorization_servers"`
	ScopesSupported      []string `json:"scopes_supported,omitempty"`
}

// DiscoverTokenEndpoint finds resource's token endpoint: its resource
// metadata (DiscoverResource) names its authorization server, whose
// metadata names the endpoint. With want, that server must be want.
func DiscoverTokenEndpoint(ctx context.Context, client *http.Client, resource, want string) (string, error) {
	endpoint, _, _, err := discoverTokenEndpoint(ctx, client, resource, want)
	return endpoint, err
}

// discoverTokenEndpoint is DiscoverTokenEndpoint, and the issuer and its
// metadata.
func discoverTokenEndpoint(ctx context.Context, client *http.Client, resource, want string) (endpoint, issuer string, as oauthmeta.ServerMetadata, _ error) {
	md, err := DiscoverResource(ctx, client, resource, "")
	switch {
	case want != "" && errors.Is(err, ErrNoResourceMetadata):
		issuer = want // a server of 2025-03-26: the configured one
	case err != nil:
		return "", "", as, err
	case len(md.AuthorizationServers) == 0 && want == "":
		return "", "", as, fmt.Errorf("oauth: the resource metadata of %s names no authorization server", resource)
	case want != "" && len(md.AuthorizationServers) > 0 && !slices.Contains(md.AuthorizationServers, want):
		return "", "", as, fmt.Errorf("%w: the resource metadata of %s names the authorization server %s, not the configured issuer %s; no credential was sent",
			ErrIssuerNotConfigured, resource, egress.Summary(md.AuthorizationServers[0]), want)
	case want != "":
		issuer = want
	default:
		issuer = md.AuthorizationServers[0]
	}
	if as, err = oauthmeta.DiscoverAuthorizationServer(ctx, client, issuer); err != nil {
		return "", "", as, err
	}
	if err := oauthmeta.CheckFetchURL(as.TokenEndpoint); err != nil {
		return "", "", as, fmt.Errorf("oauth: token endpoint of %s: %w", egress.Summary(issuer), err)
	}
	return as.TokenEndpoint, issuer, as, nil
}

// DiscoverResource fetches the Protected Resource Metadata of the server
// at serverURL: at metadataURL when a challenge named it, else at the
// path-suffixed well-known URL, then the root one (RFC 9728 §3.1). The
// resource it names must be serverURL or a path prefix of it on the same
// origin (RFC 9728 §3.3); a document naming another is refused, since a
// token asked for it would be meant for someone else.
func DiscoverResource(ctx context.Context, client *http.Client, serverURL, metadataURL string) (ResourceMetadata, error) {
	var md ResourceMetadata
	if err := oauthmeta.CheckFetchURL(serverURL); err != nil {
		return md, fmt.Errorf("oauth: resource: %w", err)
	}
	u, _ := url.Parse(serverURL)
	origin := u.Scheme + "://" + u.Host
	urls := []string{origin + "/.well-known/oauth-protected-resource"}
	if p := strings.TrimSuffix(u.EscapedPath(), "/"); p != "" {
		urls = append([]string{urls[0] + p}, urls...)
	}
	if metadataURL != "" {
		if err := oauthmeta.CheckFetchURL(metadataURL); err != nil {
			return md, fmt.Errorf("oauth: resource_metadata: %w", err)
		}
		urls = []string{metadataURL}
	}
	found, all404 := false, true
	for _, mu := range urls {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, mu, nil)
		if err != nil {
			return md, err
		}
		req.Header.Set("Accept", "application/json")
		resp, err := client.Do(req)
		err = egress.Err(err)
		if err != nil {
			return md, fmt.Errorf("oauth: resource metadata of %s: %w", serverURL, err)
		}
		if resp.StatusCode == http.StatusOK {
			err = json.NewDecoder(resp.Body).Decode(&md)
			resp.Body.Close()
			if err != nil {
				return md, fmt.Errorf("oauth: resource metadata at %s is not JSON: %w", egress.Summary(mu), err)
			}
			found = true
			break
		}
		all404 = all404 && resp.StatusCode == http.StatusNotFound
		resp.Body.Close()
	}
	switch {
	case !found && all404:
		return md, fmt.Errorf("oauth: no resource metadata for %s at its %d well-known places: %w", serverURL, len(urls), ErrNoResourceMetadata)
	case !found:
		return md, fmt.Errorf("oauth: no resource metadata for %s at %s", serverURL, egress.Summary(urls[0]))
	case !ResourceCovers(md.Resource, serverURL):
		return md, fmt.Errorf("oauth: the resource metadata of %s names the resource %s, which is not it (RFC 9728 §3.3)", serverURL, egress.Summary(md.Resource))
	}
	return md, nil
}

// ResourceCovers reports whether a token for resource may be sent to
// serverURL: the same scheme and host, and resource's path equal to
// serverURL's or a prefix of it ending at a "/".
func ResourceCovers(resource, serverURL string) bool {
	r, err1 := url.Parse(resource)
	s, err2 := url.Parse(serverURL)
	if err1 != nil || err2 != nil || r.Host == "" || r.Fragment != "" || r.RawQuery != "" {
		return false
	}
	if !strings.EqualFold(r.Scheme, s.Scheme) || !strings.EqualFold(r.Host, s.Host) {
		return false
	}
	rp, sp := strings.TrimSuffix(r.EscapedPath(), "/"), strings.TrimSuffix(s.EscapedPath(), "/")
	return rp == sp || strings.HasPrefix(sp, rp+"/")
}
