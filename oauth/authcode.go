// authcode.go is the gateway as an OAuth client of a backend that
// demands access tokens, the way the MCP specification's clients get
// them (2025-11-25 and 2026-07-28 authorization): a 401 with a Bearer
// challenge names the backend's Protected Resource Metadata (RFC 9728),
// which names its authorization server, whose metadata (RFC 8414) names
// its endpoints. The gateway registers there — a pre-registered client
// from the configuration, else a Client ID Metadata Document, else
// Dynamic Client Registration (RFC 7591) — and an admin does the
// authorization code flow (PKCE S256, the backend's resource named,
// RFC 8707) once, by opening the link the gateway prints in its log and
// shows in the console. The authorization server sends the admin back to
// the gateway's callback; the gateway checks state and iss exactly (RFC
// 9207), redeems the code, and from then on sends the token and renews
// it with the refresh token. A 403 insufficient_scope asks the admin
// again, for the scopes held and the ones challenged together; a
// backend that refuses a token holding the very scope it challenges for
// is not asked for again (no loop).
//
// What the gateway holds for a backend — registrations by issuer, the
// tokens, the authorization waiting for the admin — is one record, kept
// by a Vault: sealed with AES-GCM in the store when a key is configured
// (vault.go), else in memory only. The caller's own credential is never
// what a backend sees.

package oauth

import (
	"bytes"
	"cmp"
	"context"
	"crypto/ecdsa"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/oauth2"

	"github.com/mcpgate/mcpgate/internal/egress"
)

// Registration is a client of one authorization server.
type Registration struct {
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret,omitempty"`
	// AuthMethod is client_secret_basic, client_secret_post or none.
	AuthMethod string `json:"auth_method"`
	// How is "pre-registered", "metadata document" or "dynamic".
	How string `json:"how"`
}

// ClientEnv is what every backend's Authorization shares.
type ClientEnv struct {
	// RedirectURL is the gateway's callback as the admin's browser
	// reaches it (CallbackPath on the gateway's public origin).
	RedirectURL func() string
	// ClientMetadataURL, when set, is the gateway's Client ID Metadata
	// Document URL: its client_id at an authorization server that
	// supports them.
	ClientMetadataURL string
	// ClientName is the client_name registered (default "mcpgate").
	ClientName string
	// ConsoleLink is where an admin opens a backend's waiting
	// authorization (the console), named in the log instead of the link:
	// the link carries the state, which no log line may. nil, or "": there
	// is no console (authentication off, loopback only), and the log names
	// the link itself.
	ConsoleLink func(backend string) string
	// Vault keeps each backend's record (nil: in memory).
	Vault Vault
	// Outbound is the policy of every request made on the word of the
	// backend or its authorization server — discovery, registration,
	// token, revocation (nil: the default, public addresses only); the
	// backend's own origin is reached whatever its address.
	Outbound *egress.Policy
	Logger   *slog.Logger
	Now      func() time.Time
	// StateKey signs the states the gateway sends (HMAC-SHA256), so that
	// a callback whose state this gateway did not make is refused before
	// any record is read or lock taken: the callback is anybody's to call.
	// Replicas that share a vault share it. nil: a key of this process's.
	StateKey []byte

	stateOnce sync.Once
	stateKey  []byte
}

// stateTag is the signature of a state's backend and nonce.
func (e *ClientEnv) stateTag(backend string, nonce []byte) []byte {
	e.stateOnce.Do(func() {
		e.stateKey = e.StateKey
		if len(e.stateKey) == 0 {
			e.stateKey = make([]byte, 32)
			_, _ = rand.Read(e.stateKey)
		}
	})
	m := hmac.New(sha256.New, e.stateKey)
	m.Write([]byte(backend))
	m.Write([]byte{0})
	m.Write(nonce)
	return m.Sum(nil)[:stateTagBytes]
}

// A state's nonce and tag: 16 random bytes and 16 of the signature.
const stateNonceBytes, stateTagBytes = 16, 16

// CallbackPath is where the gateway takes the authorization server's
// answer; ClientMetadataPath where it serves its Client ID Metadata
// Document.
const (
	CallbackPath       = "/oauth/callback"
	ClientMetadataPath = "/oauth/client-metadata.json"
)

// pendingFor is how long an authorization link stays good.
const pendingFor = 15 * time.Minute

// Authorization is one backend's OAuth client by the authorization code
// grant.
type Authorization struct {
	Backend  string // the backend's name
	Resource string // the backend's MCP URL
	// Pre is a client registered out of band (configuration); nil:
	// a metadata document or dynamic registration.
	Pre *Registration
	// Scopes, when set, are asked for instead of the challenge's or the
	// metadata's.
	Scopes []string
	// Issuer, when set, is the only authorization server the gateway
	// signs in at for the backend (configuration). Without it the first
	// one discovered is pinned in the record: a backend that later names
	// another is refused until an admin forgets the authorization.
	Issuer string
	Env    *ClientEnv

	// ready: the record was loaded once; engaged: the backend has asked
	// for OAuth (a challenge, or a record). A backend that never did is
	// served without the lock or the vault: most backends never do.
	ready, engaged atomic.Bool

	nonces dpopNonces // the DPoP nonces servers gave

	fetchOnce sync.Once
	fetch     *http.Client // under the outbound policy (http)

	mu      sync.Mutex
	loaded  bool
	rec     record
	logged  string // the failure or link last logged (once each)
	authzed chan struct{}
}

// record is what is kept for a backend, sealed.
type record struct {
	Clients map[string]Registration `json:"clients,omitempty"` // by issuer
	Token   *tokenSet               `json:"token,omitempty"`
	Pending *pending                `json:"pending,omitempty"`
	// Failure is why the last attempt did not get a token.
	Failure string `json:"failure,omitempty"`
	// Refused is a scope set a backend refused a token holding it for.
	Refused string `json:"refused,omitempty"`
	// DPoPKey is the key the backend's tokens are bound to (dpop.go),
	// made when an authorization server first offers DPoP.
	DPoPKey dpopKey `json:"dpop_key,omitempty"`
	// Issuer is the authorization server first discovered for the
	// backend, pinned until an admin forgets the authorization.
	Issuer string `json:"issuer,omitempty"`
}

type tokenSet struct {
	Issuer        string    `json:"issuer"`
	TokenEndpoint string    `json:"token_endpoint"`
	Resource      string    `json:"resource"`
	Access        string    `json:"access"`
	Refresh       string    `json:"refresh,omitempty"`
	Expiry        time.Time `json:"expiry,omitzero"`
	Scope         string    `json:"scope,omitempty"` // as asked for
	DPoP          bool      `json:"dpop,omitempty"`  // bound to DPoPKey: sent with proofs
}

type pending struct {
	State         string    `json:"state"`
	Verifier      string    `json:"verifier"`
	Issuer        string    `json:"issuer"`
	IssRequired   bool      `json:"iss_required,omitempty"`
	AuthEndpoint  string    `json:"authorization_endpoint"`
	TokenEndpoint string    `json:"token_endpoint"`
	Resource      string    `json:"resource"`
	RedirectURI   string    `json:"redirect_uri"`
	Scope         string    `json:"scope,omitempty"`
	Link          string    `json:"link"`
	Expires       time.Time `json:"expires"`
	DPoP          bool      `json:"dpop,omitempty"` // the code is redeemed with a proof
}

// Status is what the console shows of a backend's authorization.
type Status struct {
	Authorized bool
	Issuer     string
	Scope      string
	Expiry     time.Time
	// Link is the authorization an admin is asked to open ("": none).
	Link    string
	Expires time.Time
	Failure string
	// DPoP: the token is bound to the gateway's key (dpop.go).
	DPoP bool
}

func (a *Authorization) now() time.Time {
	if a.Env.Now != nil {
		return a.Env.Now()
	}
	return time.Now()
}

// http is the client of the requests made on the word of the backend or
// its authorization server: under the outbound policy, the backend's own
// origin trusted.
func (a *Authorization) http() *http.Client {
	a.fetchOnce.Do(func() { a.fetch = a.Env.Outbound.Client(a.Resource) })
	return a.fetch
}

func (a *Authorization) log() *slog.Logger {
	if a.Env.Logger != nil {
		return a.Env.Logger.With("backend", a.Backend)
	}
	return slog.Default().With("backend", a.Backend)
}

// load reads the record from the vault (under a.mu), once, and again
// when force says another replica may have changed it.
func (a *Authorization) load(ctx context.Context, force bool) {
	defer func() {
		if a.rec.Token != nil || a.rec.Pending != nil || len(a.rec.Clients) > 0 {
			a.engaged.Store(true)
		}
		a.ready.Store(a.loaded)
	}()
	if a.loaded && !force {
		return
	}
	if a.Env.Vault == nil {
		a.loaded = true
		return
	}
	b, err := a.Env.Vault.Load(ctx, a.Backend)
	if err != nil {
		a.log().Warn("backend credentials unreadable", "err", err)
		return
	}
	var r record
	if b != nil {
		if err := json.Unmarshal(b, &r); err != nil {
			a.log().Warn("backend credentials unreadable", "err", err)
			return
		}
	}
	a.rec, a.loaded = r, true
}

func (a *Authorization) save(ctx context.Context) {
	if a.Env.Vault == nil {
		return
	}
	b, _ := json.Marshal(a.rec)
	if err := a.Env.Vault.Save(ctx, a.Backend, b); err != nil {
		a.log().Error("backend credentials not saved", "err", err)
	}
}

// Authorized is closed when an admin's authorization next completes.
func (a *Authorization) Authorized() <-chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.authzed == nil {
		a.authzed = make(chan struct{})
	}
	return a.authzed
}

// Status is the backend's authorization as the console shows it.
func (a *Authorization) Status(ctx context.Context) Status {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.load(ctx, true)
	s := Status{Failure: a.rec.Failure}
	if t := a.rec.Token; t != nil {
		s.Authorized, s.Issuer, s.Scope, s.Expiry, s.DPoP = true, t.Issuer, t.Scope, t.Expiry, t.DPoP
	}
	if p := a.rec.Pending; p != nil && a.now().Before(p.Expires) {
		s.Link, s.Expires = p.Link, p.Expires
	}
	return s
}

// Wrap is base sending the backend's access token, and meeting its
// authorization challenges.
func (a *Authorization) Wrap(base http.RoundTripper) http.RoundTripper {
	return &authTransport{a: a, base: base}
}

type authTransport struct {
	a    *Authorization
	base http.RoundTripper
}

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	a, ctx := t.a, req.Context()
	token, key := a.accessToken(ctx)
	sent := token
	resp, err := t.send(req, token, key)
	if err != nil || (resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden) {
		return resp, err
	}
	ch, ok := ParseChallenge(resp.Header.Values("WWW-Authenticate"))
	if !ok {
		return resp, nil
	}
	// again sends the request once more, with token; it answers false
	// when the body cannot be sent again (resp stays the refusal).
	again := func(token string, key *ecdsa.PrivateKey) (bool, error) {
		body, ok := replayBody(req)
		if !ok {
			return false, nil
		}
		drain(resp)
		retry := req.Clone(ctx)
		retry.Body = body
		if resp, err = t.send(retry, token, key); err != nil {
			return true, err
		}
		ch, _ = ParseChallenge(resp.Header.Values("WWW-Authenticate"))
		return true, nil
	}
	if resp.StatusCode == http.StatusUnauthorized && key != nil && ch.Scheme == "DPoP" && ch.Error == "use_dpop_nonce" &&
		resp.Header.Get("DPoP-Nonce") != "" {
		// RFC 9449 §9: the same request, its proof with the nonce given.
		if sentAgain, err := again(token, key); !sentAgain || err != nil {
			return resp, err
		}
		if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
			return resp, nil
		}
	}
	if resp.StatusCode == http.StatusUnauthorized && token != "" && ch.Error != "use_dpop_nonce" {
		// Expired early or revoked: a refresh, then the request once more.
		if fresh, key := a.refreshAfter(ctx, token); fresh != "" {
			if sentAgain, err := again(fresh, key); err != nil {
				return resp, err
			} else if sentAgain {
				sent = fresh
				if resp.StatusCode != http.StatusUnauthorized {
					return resp, nil
				}
			}
		}
	}
	if ch, ok = ParseChallenge(resp.Header.Values("WWW-Authenticate")); !ok {
		return resp, nil
	}
	a.challenged(ctx, resp.StatusCode, ch, sent)
	return resp, nil
}

// send sends req with token (sendToken), noting the nonce the backend
// gives.
func (t *authTransport) send(req *http.Request, token string, key *ecdsa.PrivateKey) (*http.Response, error) {
	return sendToken(t.base, req, token, key, &t.a.nonces, t.a.now())
}

// CloseIdleConnections closes the base transport's, as http.Client's
// does for a transport that offers it.
func (t *authTransport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
}

// accessToken is the token to send ("": none yet), refreshed first when
// it is about to expire, and the key it is bound to (nil: a bearer token).
func (a *Authorization) accessToken(ctx context.Context) (string, *ecdsa.PrivateKey) {
	if a.ready.Load() && !a.engaged.Load() {
		return "", nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	// With no token, look again: another replica may have finished the
	// admin's authorization.
	a.load(ctx, a.rec.Token == nil && a.engaged.Load())
	t := a.rec.Token
	if t == nil {
		return "", nil
	}
	if !t.Expiry.IsZero() && a.now().Add(30*time.Second).After(t.Expiry) {
		if t.Refresh == "" || !a.refresh(ctx) {
			return "", nil
		}
	}
	return a.current()
}

// current is the token held and its key (under a.mu).
func (a *Authorization) current() (string, *ecdsa.PrivateKey) {
	t := a.rec.Token
	if t == nil {
		return "", nil
	}
	if !t.DPoP {
		return t.Access, nil
	}
	key, err := a.rec.DPoPKey.private()
	if err != nil {
		a.fail(context.Background(), err.Error())
		return "", nil
	}
	return t.Access, key
}

// refreshAfter renews the token the backend refused (unless another
// request did already) and returns the new one ("": none) and its key.
func (a *Authorization) refreshAfter(ctx context.Context, refused string) (string, *ecdsa.PrivateKey) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.load(ctx, true)
	t := a.rec.Token
	switch {
	case t == nil:
		return "", nil
	case t.Access != refused:
		return a.current()
	case t.Refresh == "" || !a.refresh(ctx):
		return "", nil
	}
	return a.current()
}

// refresh renews the token with its refresh token (under a.mu); a
// refusal drops the token set, so that the admin is asked again. It runs
// inside the vault's Update: a replica that comes second finds the token
// the first one got, and uses it, instead of presenting a refresh token
// the authorization server has rotated away (which a server that detects
// reuse answers by revoking the grant).
func (a *Authorization) refresh(ctx context.Context) bool {
	stale := a.rec.Token.Access
	refreshed := false
	update := func(raw []byte) ([]byte, error) {
		var rec record
		if raw != nil {
			if err := json.Unmarshal(raw, &rec); err != nil {
				return nil, err
			}
		} else if a.Env.Vault == nil {
			rec = a.rec
		}
		a.rec = rec
		t := rec.Token
		switch {
		case t == nil:
			return nil, nil // dropped meanwhile: the admin is asked again
		case t.Access != stale:
			refreshed = true // another request or replica did it
			return nil, nil
		}
		reg, ok := rec.Clients[t.Issuer]
		if !ok {
			a.rec.Token = nil
			return json.Marshal(a.rec)
		}
		form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {t.Refresh}, "resource": {t.Resource}}
		var key *ecdsa.PrivateKey
		if t.DPoP {
			k, err := rec.DPoPKey.private()
			if err != nil {
				a.fail(ctx, err.Error())
				a.rec.Token = nil
				return json.Marshal(a.rec)
			}
			key = k // RFC 9449 §5: a bound token is refreshed with a proof of the same key
		}
		tok, err := a.tokenRequest(ctx, reg, t.TokenEndpoint, form, key)
		if err != nil {
			a.fail(ctx, fmt.Sprintf("refreshing the token at %s failed: %v", t.Issuer, err))
			a.rec.Token = nil
			return json.Marshal(a.rec)
		}
		next := *t
		next.Access, next.Expiry, next.DPoP = tok.AccessToken, tok.Expiry, strings.EqualFold(tok.TokenType, "DPoP")
		if tok.RefreshToken != "" {
			next.Refresh = tok.RefreshToken // rotated
		}
		a.rec.Token, refreshed = &next, true
		a.log().Info("backend token refreshed", "issuer", egress.Summary(t.Issuer))
		return json.Marshal(a.rec)
	}
	var err error
	if a.Env.Vault == nil {
		_, err = update(nil)
	} else {
		err = a.Env.Vault.Update(ctx, a.Backend, update)
	}
	if err != nil {
		a.log().Error("backend credentials not updated", "err", err)
		return false
	}
	return refreshed && a.rec.Token != nil
}

// challenged meets a 401 or a 403 the backend answered to a request that
// carried sent: the admin is asked (again) to authorize, unless a link
// is waiting for the scopes already, the backend refused a token that
// holds the very scopes it challenges for, or there is a token now that
// the refused request did not carry.
func (a *Authorization) challenged(ctx context.Context, status int, ch Challenge, sent string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.engaged.Store(true)
	a.load(ctx, true)
	loaded := a.rec.Token // what the store held: a token other than it, when this link is stored, is another replica's
	if t := a.rec.Token; status == http.StatusUnauthorized && t != nil && t.Access != sent {
		return // a token this request did not carry (another replica's, or a refresh's): the next one sends it
	}
	var held []string
	if t := a.rec.Token; t != nil {
		held = strings.Fields(t.Scope)
	}
	want := ch.Scope
	if status == http.StatusForbidden {
		if ch.Error != "insufficient_scope" {
			return
		}
		if len(want) > 0 && containsAll(held, want) || a.rec.Refused != "" && a.rec.Refused == strings.Join(union(held, want), " ") {
			msg := fmt.Sprintf("the backend refuses a token holding the scope %q it asks for; not asking the admin again", strings.Join(want, " "))
			a.rec.Refused = strings.Join(union(held, want), " ")
			a.fail(ctx, msg)
			a.save(ctx)
			return
		}
		want = union(held, want) // SEP-2350: keep what was granted
	} else {
		a.rec.Token = nil // refused: ask again
	}
	if a.linkServes(a.rec.Pending, want) {
		return // the admin has a link for this already
	}
	if err := a.begin(ctx, ch, want); err != nil {
		a.rec.Pending = nil
		a.fail(ctx, err.Error())
		a.save(ctx)
		return
	}
	a.saveLink(ctx, want, loaded)
	a.announce()
}

// linkServes reports whether p is a link, still good, for the scopes want.
func (a *Authorization) linkServes(p *pending, want []string) bool {
	return p != nil && a.now().Before(p.Expires) && containsAll(strings.Fields(p.Scope), want)
}

// saveLink stores the link begin just made (under a.mu) unless, while
// begin asked the authorization server, another replica stored a link
// that serves as well or a token this one has not seen: then that record
// is taken and this link dropped, so that every replica shows one link
// and the callback, wherever it lands, completes it (a link overwritten
// by another would fail, and a token overwritten would be lost).
func (a *Authorization) saveLink(ctx context.Context, want []string, loaded *tokenSet) {
	if a.Env.Vault == nil {
		return
	}
	mine, _ := json.Marshal(a.rec)
	var theirs *record
	err := a.Env.Vault.Update(ctx, a.Backend, func(old []byte) ([]byte, error) {
		var cur record
		if old != nil && json.Unmarshal(old, &cur) == nil {
			newToken := cur.Token != nil && (loaded == nil || cur.Token.Access != loaded.Access)
			if newToken || a.linkServes(cur.Pending, want) {
				theirs = &cur
				return nil, nil // keep the record as it is
			}
		}
		return mine, nil
	})
	switch {
	case err != nil:
		a.log().Error("backend credentials not saved", "err", err)
	case theirs != nil:
		a.rec = *theirs
	}
}

// fail records why the backend has no token, logging each reason once.
func (a *Authorization) fail(_ context.Context, msg string) {
	a.rec.Failure = msg
	if a.logged != msg {
		a.logged = msg
		a.log().Error("backend authorization failed", "err", msg)
	}
}

// begin discovers the backend's authorization server, registers there
// if need be and makes the link the admin is to open (under a.mu).
func (a *Authorization) begin(ctx context.Context, ch Challenge, challenged []string) error {
	var issuer string
	var as ServerMetadata
	prm, err := DiscoverResource(ctx, a.http(), a.Resource, ch.ResourceMetadata)
	switch {
	case errors.Is(err, ErrNoResourceMetadata) && ch.ResourceMetadata == "":
		// A server of 2025-03-26: its authorization server is at its
		// origin. The token is asked for it as for any (resource).
		if issuer, as, err = LegacyAuthorizationServer(ctx, a.http(), a.Resource); err != nil {
			return err
		}
		prm = ResourceMetadata{Resource: a.Resource}
		a.log().Info("backend serves no protected resource metadata: its authorization server is taken at its origin (2025-03-26)", "issuer", egress.Summary(issuer))
	case err != nil:
		return err
	case len(prm.AuthorizationServers) == 0:
		return fmt.Errorf("the resource metadata of %s names no authorization server", a.Resource)
	default:
		issuer = prm.AuthorizationServers[0]
		if want := cmp.Or(a.Issuer, a.rec.Issuer); want != "" && slices.Contains(prm.AuthorizationServers, want) {
			issuer = want // the one signed in at, among those the backend names
		}
		if err := a.pin(issuer); err != nil {
			return err // before anything is asked of it
		}
		if as, err = DiscoverAuthorizationServer(ctx, a.http(), issuer); err != nil {
			return err
		}
	}
	if err := a.pin(issuer); err != nil {
		return err
	}
	switch {
	case !slices.Contains(as.CodeChallengeMethodsSupported, "S256"):
		return fmt.Errorf("the authorization server %s does not say it supports PKCE with S256 (code_challenge_methods_supported)", egress.Summary(issuer))
	case as.AuthorizationEndpoint == "" || as.TokenEndpoint == "":
		return fmt.Errorf("the authorization server %s names no authorization or token endpoint", egress.Summary(issuer))
	}
	for _, e := range []string{as.AuthorizationEndpoint, as.TokenEndpoint} {
		if err := CheckFetchURL(e); err != nil {
			return fmt.Errorf("the authorization server %s: %w", egress.Summary(issuer), err)
		}
	}
	redirect := a.Env.RedirectURL()
	reg, err := a.registration(ctx, issuer, as, redirect)
	if err != nil {
		return err
	}
	scope := a.Scopes
	switch {
	case len(scope) > 0:
	case len(challenged) > 0:
		scope = challenged
	default:
		scope = prm.ScopesSupported
	}
	if len(scope) > 0 && slices.Contains(as.ScopesSupported, "offline_access") && !slices.Contains(scope, "offline_access") {
		scope = append(slices.Clone(scope), "offline_access") // SEP-2207: a refresh token, please
	}
	dpop := offersDPoP(as)
	if dpop && a.rec.DPoPKey == "" {
		if a.rec.DPoPKey, err = newDPoPKey(); err != nil {
			return err
		}
	}
	p := &pending{State: a.newState(), Verifier: oauth2.GenerateVerifier(), Issuer: issuer, DPoP: dpop,
		IssRequired: as.AuthorizationResponseIssParameterSupported, AuthEndpoint: as.AuthorizationEndpoint,
		TokenEndpoint: as.TokenEndpoint, Resource: prm.Resource, RedirectURI: redirect,
		Scope: strings.Join(scope, " "), Expires: a.now().Add(pendingFor)}
	cfg := oauth2.Config{ClientID: reg.ClientID, RedirectURL: redirect, Scopes: scope,
		Endpoint: oauth2.Endpoint{AuthURL: as.AuthorizationEndpoint, TokenURL: as.TokenEndpoint}}
	p.Link = cfg.AuthCodeURL(p.State, oauth2.S256ChallengeOption(p.Verifier), oauth2.SetAuthURLParam("resource", prm.Resource))
	a.rec.Pending, a.rec.Failure = p, ""
	return nil
}

// ErrIssuerChanged: the backend names an authorization server other than
// the one the gateway signs in at for it.
var ErrIssuerChanged = errors.New("the backend names another authorization server")

// pin admits the issuer discovered for the backend: the configured one,
// else the one first discovered, which it pins. A backend that comes to
// name another (a server that changed hands, or one naming itself to
// collect a refresh) is refused until an admin forgets the authorization.
func (a *Authorization) pin(issuer string) error {
	want := cmp.Or(a.Issuer, a.rec.Issuer)
	switch {
	case want == "":
		a.rec.Issuer = issuer
		return nil
	case issuer == want:
		a.rec.Issuer = issuer
		return nil
	case a.Issuer != "":
		return fmt.Errorf("%w: it names %s, and its configuration says %s", ErrIssuerChanged, egress.Summary(issuer), a.Issuer)
	}
	return fmt.Errorf("%w: it names %s, and it was first authorized at %s; an admin must forget the authorization (console, Forget authorization) before the gateway signs in at another",
		ErrIssuerChanged, egress.Summary(issuer), egress.Summary(want))
}

// announce logs the link waiting for the admin, once.
func (a *Authorization) announce() {
	if p := a.rec.Pending; p != nil && a.logged != p.Link {
		a.logged = p.Link
		open := p.Link // no console (authentication off, loopback only): the log is the only place
		if a.Env.ConsoleLink != nil {
			if l := a.Env.ConsoleLink(a.Backend); l != "" {
				open = l
			}
		}
		a.log().Warn("backend needs an admin to authorize the gateway at its authorization server: open it from the console (Backends, Authorize the gateway)",
			"issuer", egress.Summary(p.Issuer), "scope", egress.Summary(p.Scope), "open", open)
	}
}

// newState is the authorization's state: the backend's name (for the
// callback to find it), 16 random bytes, and their signature.
func (a *Authorization) newState() string {
	b := make([]byte, stateNonceBytes, stateNonceBytes+stateTagBytes)
	_, _ = rand.Read(b)
	b = append(b, a.Env.stateTag(a.Backend, b)...)
	return base64.RawURLEncoding.EncodeToString([]byte(a.Backend)) + "." + base64.RawURLEncoding.EncodeToString(b)
}

// signedState reports whether state is one this gateway made for the
// backend: its signature checks out.
func (a *Authorization) signedState(state string) bool {
	name, rest, ok := strings.Cut(state, ".")
	if !ok || name != base64.RawURLEncoding.EncodeToString([]byte(a.Backend)) {
		return false
	}
	b, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil || len(b) != stateNonceBytes+stateTagBytes {
		return false
	}
	return hmac.Equal(b[stateNonceBytes:], a.Env.stateTag(a.Backend, b[:stateNonceBytes]))
}

// StateBackend is the backend a callback's state names ("": none).
func StateBackend(state string) string {
	name, _, ok := strings.Cut(state, ".")
	if !ok {
		return ""
	}
	b, err := base64.RawURLEncoding.DecodeString(name)
	if err != nil {
		return ""
	}
	return string(b)
}

// registration is the gateway's client at issuer: the one it has, the
// configured one, a metadata document, or a dynamic registration — never
// one made at another authorization server (SEP-2352).
func (a *Authorization) registration(ctx context.Context, issuer string, as ServerMetadata, redirect string) (Registration, error) {
	if reg, ok := a.rec.Clients[issuer]; ok {
		return reg, nil
	}
	var reg Registration
	switch {
	case a.Pre != nil:
		reg = *a.Pre
		if reg.AuthMethod == "" {
			reg.AuthMethod = "none"
			if reg.ClientSecret != "" {
				reg.AuthMethod = pickAuthMethod(as.TokenEndpointAuthMethodsSupported, true)
			}
		}
		reg.How = "pre-registered"
	case as.ClientIDMetadataDocumentSupported && a.Env.ClientMetadataURL != "":
		reg = Registration{ClientID: a.Env.ClientMetadataURL, AuthMethod: "none", How: "metadata document"}
	case as.RegistrationEndpoint != "":
		var err error
		if reg, err = a.register(ctx, as, redirect); err != nil {
			return reg, err
		}
	default:
		return reg, fmt.Errorf("the authorization server %s offers neither Client ID Metadata Documents (or none is configured: oauth_client.client_metadata_url) nor dynamic registration; register a client there and name it in the backend's oauth.client_id", egress.Summary(issuer))
	}
	if a.rec.Clients == nil {
		a.rec.Clients = map[string]Registration{}
	}
	a.rec.Clients[issuer] = reg
	a.log().Info("backend client registered", "issuer", egress.Summary(issuer), "how", reg.How, "client_id", egress.Summary(reg.ClientID))
	return reg, nil
}

// pickAuthMethod is the token endpoint authentication to use among the
// server's (RFC 8414's default: client_secret_basic).
func pickAuthMethod(supported []string, secret bool) string {
	if len(supported) == 0 {
		supported = []string{"client_secret_basic"}
	}
	for _, m := range []string{"client_secret_basic", "client_secret_post"} {
		if secret && slices.Contains(supported, m) {
			return m
		}
	}
	if slices.Contains(supported, "none") {
		return "none"
	}
	return supported[0]
}

// ClientMetadata is the gateway's client metadata: what it registers
// dynamically, and its Client ID Metadata Document.
func (e *ClientEnv) ClientMetadata(clientID, method string) map[string]any {
	redirect := e.RedirectURL()
	m := map[string]any{
		"client_name":                e.name(),
		"redirect_uris":              []string{redirect},
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"response_types":             []string{"code"},
		"token_endpoint_auth_method": method,
		// SEP-837: a loopback redirect is a native client's, else web.
		"application_type": "web",
	}
	if u, err := url.Parse(redirect); err == nil && u.Scheme == "http" {
		if ip := net.ParseIP(u.Hostname()); (ip != nil && ip.IsLoopback()) || u.Hostname() == "localhost" {
			m["application_type"] = "native"
		}
	}
	if clientID != "" {
		m["client_id"] = clientID
	}
	return m
}

func (e *ClientEnv) name() string {
	if e.ClientName != "" {
		return e.ClientName
	}
	return "mcpgate"
}

// register is RFC 7591 Dynamic Client Registration.
func (a *Authorization) register(ctx context.Context, as ServerMetadata, redirect string) (Registration, error) {
	if err := CheckFetchURL(as.RegistrationEndpoint); err != nil {
		return Registration{}, fmt.Errorf("registration endpoint: %w", err)
	}
	method := pickAuthMethod(as.TokenEndpointAuthMethodsSupported, true)
	body, _ := json.Marshal(a.Env.ClientMetadata("", method))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, as.RegistrationEndpoint, bytes.NewReader(body))
	if err != nil {
		return Registration{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := a.http().Do(req)
	err = egress.Err(err)
	if err != nil {
		return Registration{}, fmt.Errorf("registration at %s: %w", egress.Summary(as.Issuer), err)
	}
	defer resp.Body.Close()
	var out struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
		AuthMethod   string `json:"token_endpoint_auth_method"`
		Error        string `json:"error"`
		Description  string `json:"error_description"`
	}
	err = json.NewDecoder(resp.Body).Decode(&out)
	switch {
	case resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK:
		return Registration{}, fmt.Errorf("registration at %s answered %d %s %s", egress.Summary(as.Issuer), resp.StatusCode, egress.Summary(out.Error), egress.Summary(out.Description))
	case err != nil || out.ClientID == "":
		return Registration{}, fmt.Errorf("registration at %s answered no client_id", egress.Summary(as.Issuer))
	}
	reg := Registration{ClientID: out.ClientID, ClientSecret: out.ClientSecret, AuthMethod: cmp.Or(out.AuthMethod, method), How: "dynamic"}
	if reg.ClientSecret == "" {
		reg.AuthMethod = "none"
	}
	return reg, nil
}

// Callback completes the authorization the state names, with the
// authorization server's answer q: state compared exactly and used once,
// iss compared exactly (RFC 9207), the code redeemed with the PKCE
// verifier. The error says why not, without a secret.
func (a *Authorization) Callback(ctx context.Context, q url.Values) error {
	if !a.signedState(q.Get("state")) {
		return errors.New("the state is not one this gateway made for this backend")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.load(ctx, true)
	p := a.rec.Pending
	switch {
	case p == nil:
		return errors.New("no authorization is waiting for this backend (it finished, or it was never begun)")
	case subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(p.State)) != 1:
		return errors.New("the state does not match the authorization waiting")
	}
	a.rec.Pending = nil // one use, whatever follows
	err := a.complete(ctx, p, q)
	if err != nil {
		a.fail(ctx, err.Error())
	} else {
		a.rec.Failure, a.rec.Refused, a.logged = "", "", ""
		if a.authzed != nil {
			close(a.authzed)
			a.authzed = nil
		}
	}
	a.save(ctx)
	return err
}

func (a *Authorization) complete(ctx context.Context, p *pending, q url.Values) error {
	switch iss, has := q.Get("iss"), q.Has("iss"); {
	case !a.now().Before(p.Expires):
		return errors.New("the authorization link expired; a new one is made at the backend's next refusal")
	case q.Get("error") != "":
		return fmt.Errorf("the authorization server answered %s %s", egress.Summary(q.Get("error")), egress.Summary(q.Get("error_description")))
	case has && iss != p.Issuer:
		return fmt.Errorf("the answer's iss %s is not the authorization server's issuer %s (RFC 9207)", egress.Summary(iss), egress.Summary(p.Issuer))
	case !has && p.IssRequired:
		return fmt.Errorf("the answer carries no iss, though %s says it sends one (RFC 9207)", egress.Summary(p.Issuer))
	case q.Get("code") == "":
		return errors.New("the answer carries no code")
	}
	reg := a.rec.Clients[p.Issuer]
	cfg := oauth2.Config{ClientID: reg.ClientID, ClientSecret: reg.ClientSecret, RedirectURL: p.RedirectURI,
		Endpoint: oauth2.Endpoint{AuthURL: p.AuthEndpoint, TokenURL: p.TokenEndpoint, AuthStyle: authStyle(reg.AuthMethod)}}
	if reg.AuthMethod == "none" {
		cfg.ClientSecret = ""
	}
	client := a.http()
	if p.DPoP {
		key, err := a.rec.DPoPKey.private()
		if err != nil {
			return err
		}
		client = a.dpopClient(key)
	}
	tok, err := cfg.Exchange(context.WithValue(ctx, oauth2.HTTPClient, client), q.Get("code"),
		oauth2.VerifierOption(p.Verifier), oauth2.SetAuthURLParam("resource", p.Resource))
	if err != nil {
		return fmt.Errorf("redeeming the code at %s: %w", egress.Summary(p.Issuer), redactRetrieve(err))
	}
	if tok.AccessToken == "" {
		return fmt.Errorf("the token endpoint of %s answered no access token", egress.Summary(p.Issuer))
	}
	a.rec.Token = &tokenSet{Issuer: p.Issuer, TokenEndpoint: p.TokenEndpoint, Resource: p.Resource,
		Access: tok.AccessToken, Refresh: tok.RefreshToken, Expiry: tok.Expiry, Scope: p.Scope,
		DPoP: p.DPoP && strings.EqualFold(tok.TokenType, "DPoP")}
	a.log().Info("backend authorized", "issuer", egress.Summary(p.Issuer), "scope", egress.Summary(p.Scope), "refresh_token", tok.RefreshToken != "")
	return nil
}

func authStyle(method string) oauth2.AuthStyle {
	if method == "client_secret_basic" {
		return oauth2.AuthStyleInHeader
	}
	return oauth2.AuthStyleInParams
}

// tokenRequest is a refresh at the token endpoint, with the client's
// authentication and the resource named (RFC 8707 §2.2), which
// golang.org/x/oauth2's refresh does not send.
func (a *Authorization) tokenRequest(ctx context.Context, reg Registration, endpoint string, form url.Values, key *ecdsa.PrivateKey) (*oauth2.Token, error) {
	req, err := clientRequest(ctx, reg, endpoint, form)
	if err != nil {
		return nil, err
	}
	client := a.http()
	if key != nil {
		client = a.dpopClient(key)
	}
	resp, err := client.Do(req)
	err = egress.Err(err)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out struct {
		AccessToken  string `json:"access_token"`
		TokenType    string `json:"token_type"`
		RefreshToken string `json:"refresh_token"`
		ExpiresIn    int64  `json:"expires_in"`
		Error        string `json:"error"`
		Description  string `json:"error_description"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil && resp.StatusCode == http.StatusOK {
		return nil, errors.New("the token endpoint answered no JSON")
	}
	if resp.StatusCode != http.StatusOK || out.AccessToken == "" {
		return nil, fmt.Errorf("the token endpoint answered %d %s %s", resp.StatusCode, egress.Summary(out.Error), egress.Summary(out.Description))
	}
	tok := &oauth2.Token{AccessToken: out.AccessToken, TokenType: out.TokenType, RefreshToken: out.RefreshToken}
	if out.ExpiresIn > 0 {
		tok.Expiry = a.now().Add(time.Duration(out.ExpiresIn) * time.Second)
	}
	return tok, nil
}

// clientRequest is a POST of form to an authorization server's endpoint
// with reg's client authentication (RFC 6749 §2.3.1; none: its client_id).
func clientRequest(ctx context.Context, reg Registration, endpoint string, form url.Values) (*http.Request, error) {
	switch reg.AuthMethod {
	case "client_secret_post":
		form.Set("client_id", reg.ClientID)
		form.Set("client_secret", reg.ClientSecret)
	case "none":
		form.Set("client_id", reg.ClientID)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if reg.AuthMethod == "client_secret_basic" {
		req.SetBasicAuth(url.QueryEscape(reg.ClientID), url.QueryEscape(reg.ClientSecret))
	}
	return req, nil
}

// Forget drops the backend's authorization: its tokens (the refresh
// token revoked first at the authorization server, RFC 7009, when it
// names a revocation endpoint), the link waiting and the DPoP key, so
// that the backend's next refusal asks an admin to authorize anew. The
// client registrations are kept. It answers whether there was a token,
// and, when the revocation failed, why (the record is dropped anyway).
func (a *Authorization) Forget(ctx context.Context) (hadToken bool, revokeErr error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.load(ctx, true)
	var dropped *tokenSet
	drop := func(rec *record) {
		dropped = rec.Token
		rec.Token, rec.Pending, rec.Failure, rec.Refused, rec.DPoPKey, rec.Issuer = nil, nil, "", "", "", ""
	}
	if a.Env.Vault == nil {
		drop(&a.rec)
	} else if err := a.Env.Vault.Update(ctx, a.Backend, func(old []byte) ([]byte, error) {
		var rec record
		if old != nil {
			if err := json.Unmarshal(old, &rec); err != nil {
				return nil, err
			}
		}
		drop(&rec)
		a.rec = rec
		return json.Marshal(rec)
	}); err != nil {
		return false, err
	}
	a.logged = ""
	a.log().Warn("backend authorization forgotten: its next refusal asks an admin again", "had_token", dropped != nil)
	if dropped == nil {
		return false, nil
	}
	return true, a.revoke(ctx, dropped)
}

// revoke asks t's authorization server to revoke t's refresh token (or,
// without one, its access token), if it names a revocation endpoint.
func (a *Authorization) revoke(ctx context.Context, t *tokenSet) error {
	as, err := DiscoverAuthorizationServer(ctx, a.http(), t.Issuer)
	if err != nil || as.RevocationEndpoint == "" {
		return err
	}
	if err := CheckFetchURL(as.RevocationEndpoint); err != nil {
		return fmt.Errorf("the revocation endpoint of %s: %w", egress.Summary(t.Issuer), err)
	}
	form := url.Values{"token": {t.Access}, "token_type_hint": {"access_token"}}
	if t.Refresh != "" {
		form = url.Values{"token": {t.Refresh}, "token_type_hint": {"refresh_token"}}
	}
	req, err := clientRequest(ctx, a.rec.Clients[t.Issuer], as.RevocationEndpoint, form)
	if err != nil {
		return err
	}
	resp, err := a.http().Do(req)
	err = egress.Err(err)
	if err != nil {
		return fmt.Errorf("revoking at %s: %w", egress.Summary(t.Issuer), err)
	}
	drain(resp)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("revoking at %s: the revocation endpoint answered %d", egress.Summary(t.Issuer), resp.StatusCode)
	}
	return nil
}

// dpopClient is the gateway's client for token requests with proofs of key.
func (a *Authorization) dpopClient(key *ecdsa.PrivateKey) *http.Client {
	base := a.http()
	c := *base
	rt := base.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	c.Transport = &dpopTokenTransport{base: rt, key: key, nonces: &a.nonces, now: a.now}
	return &c
}

func containsAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
