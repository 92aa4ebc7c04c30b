// upstream.go lets a person sign in on the authorization page through a
// configured OpenID Connect provider instead of with a service token.
//
// The page links to UpstreamPath with the client's request; the server
// checks that request, keeps it with a fresh state, nonce and PKCE verifier
// in a sealed, short-lived cookie bound to this browser, and sends the
// person to the provider. The provider sends them back to
// UpstreamCallbackPath. There the cookie must be present, the state equal
// to it exactly, and the iss, when sent, the provider's. The code is
// redeemed with the verifier. The ID token must be signed by the provider's
// keys, issued by it, meant for the gateway and unexpired, and carry the
// nonce exactly. The person's role comes from its claims, by the
// configuration's mapping. The consent page then shows who they are and
// which role the client gets, never more than theirs. Its form carries the
// sign-in, sealed and bound to that very request.

package authserver

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/oauth2"

	"github.com/mcpgate/mcpgate/internal/auth"
	"github.com/mcpgate/mcpgate/internal/auth/oauthmeta"
	"github.com/mcpgate/mcpgate/internal/auth/seal"
	"github.com/mcpgate/mcpgate/internal/egress"
)

// The upstream sign-in's paths.
const (
	UpstreamPath         = "/oauth/upstream"
	UpstreamCallbackPath = "/oauth/upstream/callback"
)

const (
	upstreamCookie = "mcpgate_upstream"
	// upstreamFor bounds the trip to the provider and back; loginFor the
	// consent page's form after it.
	upstreamFor = 10 * time.Minute
	loginFor    = 5 * time.Minute
	idLeeway    = time.Minute
)

// Provider is an OpenID Connect provider people sign in with.
type Provider struct {
	// Issuer is its issuer identifier, exactly as its discovery document
	// states it.
	Issuer string
	// ClientID is the gateway's client there; ClientSecret its secret
	// ("": a public client, PKCE alone).
	ClientID, ClientSecret string
	// Scopes are asked for (default openid, email, profile).
	Scopes []string
	// SubjectClaim names who the person is (default "email", else "sub").
	SubjectClaim string
	// Algorithm signs its ID tokens: RS256 (default) or ES256.
	Algorithm string
	// Role is a person's role by their ID token's claims; ok false: none,
	// and they are refused.
	Role func(claims map[string]any) (role string, ok bool)
	// Name is what the page's link says (default the issuer's host).
	Name string
	// HTTPClient reaches the provider (nil: one under Outbound).
	HTTPClient *http.Client
	// Outbound is the policy of the requests to the provider (nil: the
	// default): the issuer's origin, which the operator configured, is
	// reached whatever its address; the endpoints its metadata names
	// elsewhere are checked like any other.
	Outbound *egress.Policy
}

// upstream is the provider as discovered, once it has been.
type upstream struct {
	cfg *Provider
	mu  sync.Mutex
	md  *oauthmeta.ServerMetadata
	ks  *auth.KeySet

	clientOnce sync.Once
	client     *http.Client
}

// httpClient is the client that reaches the provider.
func (u *upstream) httpClient() *http.Client {
	u.clientOnce.Do(func() {
		u.client = u.cfg.HTTPClient
		if u.client == nil {
			u.client = u.cfg.Outbound.Client(u.cfg.Issuer)
		}
	})
	return u.client
}

// discover finds the provider's endpoints and keys at the first sign-in
// (a provider down at startup does not stop the gateway), then keeps them.
func (u *upstream) discover(ctx context.Context) (*oauthmeta.ServerMetadata, *auth.KeySet, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.md != nil {
		return u.md, u.ks, nil
	}
	hc := u.httpClient()
	md, err := oauthmeta.DiscoverAuthorizationServer(ctx, hc, u.cfg.Issuer)
	if err != nil {
		return nil, nil, err
	}
	if md.AuthorizationEndpoint == "" || md.TokenEndpoint == "" || md.JWKSURI == "" {
		return nil, nil, fmt.Errorf("the provider %s names no authorization endpoint, token endpoint or jwks_uri", u.cfg.Issuer)
	}
	ks, err := auth.NewKeySet(ctx, md.JWKSURI, u.cfg.Algorithm, hc)
	if err != nil {
		return nil, nil, fmt.Errorf("the provider's keys: %w", err)
	}
	u.md, u.ks = &md, ks
	return u.md, u.ks, nil
}

func (u *upstream) oauth2(md *oauthmeta.ServerMetadata, issuer string) oauth2.Config {
	style := oauth2.AuthStyleInParams
	if u.cfg.ClientSecret != "" {
		style = oauth2.AuthStyleInHeader
	}
	return oauth2.Config{ClientID: u.cfg.ClientID, ClientSecret: u.cfg.ClientSecret, RedirectURL: issuer + UpstreamCallbackPath,
		Scopes: u.cfg.Scopes, Endpoint: oauth2.Endpoint{AuthURL: md.AuthorizationEndpoint, TokenURL: md.TokenEndpoint, AuthStyle: style}}
}

// name is what the page's link says.
func (u *upstream) name() string {
	if u.cfg.Name != "" {
		return u.cfg.Name
	}
	if p, err := url.Parse(u.cfg.Issuer); err == nil {
		return p.Host
	}
	return u.cfg.Issuer
}

// newUpstream checks c and fills its defaults.
func newUpstream(c *Provider) (*upstream, error) {
	if c == nil {
		return nil, nil
	}
	cc := *c
	switch {
	case cc.Issuer == "" || cc.ClientID == "" || cc.Role == nil:
		return nil, errors.New("authserver: an upstream provider needs an issuer, a client id and a role mapping")
	case oauthmeta.CheckFetchURL(cc.Issuer) != nil:
		return nil, fmt.Errorf("authserver: upstream issuer: %w", oauthmeta.CheckFetchURL(cc.Issuer))
	}
	if len(cc.Scopes) == 0 {
		cc.Scopes = []string{"openid", "email", "profile"}
	}
	if !slices.Contains(cc.Scopes, "openid") {
		cc.Scopes = append([]string{"openid"}, cc.Scopes...)
	}
	if cc.SubjectClaim == "" {
		cc.SubjectClaim = "email"
	}
	if cc.Algorithm == "" {
		cc.Algorithm = "RS256"
	}
	if cc.Algorithm != "RS256" && cc.Algorithm != "ES256" {
		return nil, fmt.Errorf("authserver: upstream algorithm %q is not RS256 or ES256", cc.Algorithm)
	}
	return &upstream{cfg: &cc}, nil
}

// pendingLogin is what the cookie keeps while the person is away.
type pendingLogin struct {
	State, Nonce, Verifier string
	Request                url.Values
	Expires                time.Time
}

// signedIn is what the consent form carries after the provider: who the
// person is, bound to the request it was made for.
type signedIn struct {
	Subject, Role, Provider string
	Request                 []byte // requestHash of the authorization request
	Expires                 time.Time
}

// authorizeParams are the parameters of an authorization request.
var authorizeParams = []string{"client_id", "redirect_uri", "response_type", "state", "code_challenge", "code_challenge_method", "resource", "scope"}

// requestHash is a digest of the request's parameters, in one order.
func requestHash(q url.Values) []byte {
	h := sha256.New()
	keys := slices.Clone(authorizeParams)
	sort.Strings(keys)
	for _, k := range keys {
		for _, v := range q[k] {
			fmt.Fprintf(h, "%d:%s=%d:%s;", len(k), k, len(v), v)
		}
	}
	return h.Sum(nil)
}

func onlyAuthorizeParams(q url.Values) url.Values {
	out := url.Values{}
	for _, k := range authorizeParams {
		if v, ok := q[k]; ok {
			out[k] = slices.Clone(v)
		}
	}
	return out
}

// seal and unseal keep a value for the browser to carry back, encrypted
// and authenticated under a key derived from the server's, purpose bound
// in (a sealed value of one purpose does not open as another).
func (s *Server) seal(purpose string, v any) string {
	b, _ := json.Marshal(v)
	aead := s.sealer()
	nonce := make([]byte, aead.NonceSize())
	_, _ = rand.Read(nonce)
	return base64.RawURLEncoding.EncodeToString(aead.Seal(nonce, nonce, b, []byte(purpose)))
}

func (s *Server) unseal(purpose, text string, v any) error {
	raw, err := base64.RawURLEncoding.DecodeString(text)
	aead := s.sealer()
	if err != nil || len(raw) < aead.NonceSize()+aead.Overhead() {
		return errors.New("not a sealed value")
	}
	n := aead.NonceSize()
	b, err := aead.Open(nil, raw[:n], raw[n:], []byte(purpose))
	if err != nil {
		return errors.New("not a sealed value of this server")
	}
	return json.Unmarshal(b, v)
}

func (s *Server) sealer() cipher.AEAD {
	block, _ := aes.NewCipher(seal.Derive(s.cfg.Key, "mcpgate authserver sealed values"))
	aead, _ := cipher.NewGCM(block)
	return aead
}

// upstreamLink is the page's link to the provider, for req's parameters.
func (s *Server) upstreamLink(q url.Values) string {
	if s.up == nil {
		return ""
	}
	return UpstreamPath + "?" + onlyAuthorizeParams(q).Encode()
}

// serveUpstream sends the person to the provider.
func (s *Server) serveUpstream(w http.ResponseWriter, r *http.Request) {
	if s.up == nil {
		http.NotFound(w, r)
		return
	}
	q := r.URL.Query()
	req, ok := s.checkedRequest(w, r, q)
	if !ok {
		return
	}
	md, _, err := s.up.discover(r.Context())
	if err != nil {
		s.log.Error("authserver: upstream provider", "err", err)
		s.page(w, http.StatusBadGateway, s.consentData(req, q, "the sign-in provider could not be reached; sign in with a service token, or try again"))
		return
	}
	p := pendingLogin{State: secret(""), Nonce: secret(""), Verifier: oauth2.GenerateVerifier(), Request: onlyAuthorizeParams(q),
		Expires: s.cfg.Now().Add(upstreamFor)}
	http.SetCookie(w, &http.Cookie{Name: upstreamCookie, Value: s.seal(upstreamCookie, p), Path: UpstreamCallbackPath,
		MaxAge: int(upstreamFor / time.Second), HttpOnly: true, Secure: strings.HasPrefix(s.cfg.Issuer, "https://"), SameSite: http.SameSiteLaxMode})
	cfg := s.up.oauth2(md, s.cfg.Issuer)
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, cfg.AuthCodeURL(p.State, oauth2.S256ChallengeOption(p.Verifier), oauth2.SetAuthURLParam("nonce", p.Nonce)), http.StatusSeeOther)
}

// serveUpstreamCallback takes the provider's answer and shows the
// consent page for the person it names.
func (s *Server) serveUpstreamCallback(w http.ResponseWriter, r *http.Request) {
	start := s.cfg.Now()
	if s.up == nil {
		http.NotFound(w, r)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: upstreamCookie, Value: "", Path: UpstreamCallbackPath, MaxAge: -1, HttpOnly: true,
		Secure: strings.HasPrefix(s.cfg.Issuer, "https://"), SameSite: http.SameSiteLaxMode}) // one use
	fail := func(why string) {
		s.audit("authorize", "", "", "", "forbidden", start)
		s.page(w, http.StatusBadRequest, pageData{Error: why})
	}
	var p pendingLogin
	c, err := r.Cookie(upstreamCookie)
	if err != nil || s.unseal(upstreamCookie, c.Value, &p) != nil || !start.Before(p.Expires) {
		fail("this sign-in was begun in another browser, or too long ago; start again from the client")
		return
	}
	q := r.URL.Query()
	switch iss, has := q.Get("iss"), q.Has("iss"); {
	case subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(p.State)) != 1:
		fail("the provider's answer does not carry this sign-in's state")
		return
	case q.Get("error") != "":
		fail("the provider answered " + q.Get("error") + " " + q.Get("error_description"))
		return
	case has && iss != s.up.cfg.Issuer:
		fail("the answer's issuer is not the provider's")
		return
	}
	req, ok := s.checkedRequest(w, r, p.Request)
	if !ok {
		return
	}
	subject, role, err := s.upstreamPerson(r.Context(), q.Get("code"), p, start)
	if err != nil {
		s.log.Warn("authserver: upstream sign-in refused", "err", err)
		fail("the sign-in was refused: " + err.Error())
		return
	}
	if _, _, ok := s.roleFor(req.Scopes, role); !ok {
		s.audit("authorize", subject, "", role, "forbidden", start)
		s.page(w, http.StatusForbidden, s.consentData(req, p.Request, "your role, "+role+", is granted by no scope here"))
		return
	}
	d := s.consentData(req, p.Request, "")
	d.SignedInAs, d.Provider, d.PersonRole = subject, s.up.name(), role
	d.Login = s.seal("consent", signedIn{Subject: subject, Role: role, Provider: s.up.cfg.Issuer, Request: requestHash(p.Request),
		Expires: start.Add(loginFor)})
	d.UpstreamLink = ""
	s.page(w, http.StatusOK, d)
}

// upstreamPerson redeems the code and checks the ID token: who the person
// is and their role.
func (s *Server) upstreamPerson(ctx context.Context, code string, p pendingLogin, now time.Time) (subject, role string, err error) {
	if code == "" {
		return "", "", errors.New("the answer carries no code")
	}
	md, ks, err := s.up.discover(ctx)
	if err != nil {
		return "", "", err
	}
	hc := s.up.httpClient()
	cfg := s.up.oauth2(md, s.cfg.Issuer)
	tok, err := cfg.Exchange(context.WithValue(ctx, oauth2.HTTPClient, hc), code, oauth2.VerifierOption(p.Verifier))
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) {
			return "", "", fmt.Errorf("the provider's token endpoint answered %d %s", re.Response.StatusCode, re.ErrorCode)
		}
		return "", "", fmt.Errorf("the provider's token endpoint: %w", err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return "", "", errors.New("the provider sent no ID token")
	}
	claims := jwt.MapClaims{}
	_, err = jwt.ParseWithClaims(raw, claims, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		return ks.Key(ctx, kid, now)
	}, jwt.WithValidMethods([]string{s.up.cfg.Algorithm}), jwt.WithIssuer(s.up.cfg.Issuer), jwt.WithAudience(s.up.cfg.ClientID),
		jwt.WithExpirationRequired(), jwt.WithIssuedAt(), jwt.WithLeeway(idLeeway), jwt.WithTimeFunc(func() time.Time { return now }))
	if err != nil {
		return "", "", fmt.Errorf("the ID token: %w", err)
	}
	if aud, _ := claims.GetAudience(); len(aud) > 1 {
		if azp, _ := claims["azp"].(string); azp != s.up.cfg.ClientID {
			return "", "", errors.New("the ID token is meant for several parties and names another as its authorized party (azp)")
		}
	}
	if nonce, _ := claims["nonce"].(string); subtle.ConstantTimeCompare([]byte(nonce), []byte(p.Nonce)) != 1 {
		return "", "", errors.New("the ID token's nonce is not this sign-in's")
	}
	subject, _ = claims[s.up.cfg.SubjectClaim].(string)
	if subject == "" {
		subject, _ = claims["sub"].(string)
	}
	if subject == "" {
		return "", "", errors.New("the ID token names nobody (no " + s.up.cfg.SubjectClaim + " nor sub)")
	}
	role, ok := s.up.cfg.Role(claims)
	if !ok {
		return "", "", errors.New(subject + " has no role on this gateway")
	}
	return subject, role, nil
}

// consentSignIn opens the sealed sign-in a consent form carries, for the
// request q it comes with.
func (s *Server) consentSignIn(login string, q url.Values, now time.Time) (signedIn, error) {
	var in signedIn
	if err := s.unseal("consent", login, &in); err != nil {
		return in, errors.New("the sign-in is not this server's")
	}
	switch {
	case !now.Before(in.Expires):
		return in, errors.New("the sign-in is too old; sign in again")
	case subtle.ConstantTimeCompare(in.Request, requestHash(q)) != 1:
		return in, errors.New("the sign-in was made for another request")
	}
	return in, nil
}
