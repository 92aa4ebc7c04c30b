// authcode.go is the gateway as an OAuth client of a backend that demands
// access tokens, the way the MCP specification's clients get them
// (2025-11-25 and 2026-07-28 authorization). A 401 with a Bearer challenge
// names the backend's Protected Resource Metadata (RFC 9728). That names
// its authorization server, whose metadata (RFC 8414) names its endpoints.
// The gateway registers there: a pre-registered client from the
// configuration, else a Client ID Metadata Document, else Dynamic Client
// Registration (RFC 7591). An admin does the authorization code flow once,
// from the console, which the log names: PKCE S256, the backend's resource
// named (RFC 8707). The link itself, with its state, is never logged. The
// authorization server sends the admin back to the gateway's callback; the
// gateway checks state and iss exactly (RFC 9207), redeems the code, and
// from then on sends the token and renews it with the refresh token. A 403
// insufficient_scope asks the admin again, for the scopes held and the ones
// challenged together; a backend that refuses a token holding the very
// scope it challenges for is not asked for again (no loop).
//
// What the gateway holds for a backend is one record, kept by a Vault:
// registrations by issuer, the tokens, the authorization waiting for the
// admin. It is sealed with AES-GCM in the store when a key is configured
// (vault.go), else kept in memory only. The caller's own credential is
// never what a backend sees.
//
// This file holds the types and the record; the stages are beside it.
// authcode_transport.go sends and renews the token, authcode_link.go goes
// from a challenge to the admin's link, and authcode_register.go registers
// the client at the authorization server. authcode_callback.go takes the
// answer and the code, and authcode_forget.go an admin's Forget.

package oauthclient

import (
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

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
	// Owner is the principal whose authorization this is, at their own
	// word (identity: per_user, people.go); "" for the gateway's own,
	// which an admin gives. Its record is kept in Vault, not Env's.
	Owner string
	Vault Vault
	// people, for an owner's, share one dynamic registration at each
	// authorization server among the backend's people (people.go).
	people *People

	// ready: the record was loaded once; engaged: the backend has asked
	// for OAuth (a challenge, or a record). A backend that never did is
	// served without the lock or the vault: most backends never do.
	ready, engaged atomic.Bool

	nonces dpopNonces // the DPoP nonces servers gave

	fetchOnce sync.Once
	fetch     *http.Client // under the outbound policy (http)

	mu     sync.Mutex
	loaded bool
	rec    record
	// heldRaw is a person's record as held last read, and heldAccess its
	// access token (people.go).
	heldRaw    []byte
	heldAccess string
	logged     string // the failure or link last logged (once each)
	authzed    chan struct{}
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

// AuthorizationStatus is what the console shows of a backend's authorization.
type AuthorizationStatus struct {
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
	l := cmp.Or(a.Env.Logger, slog.Default()).With("backend", a.Backend)
	if a.Owner != "" {
		l = l.With("for", a.Owner)
	}
	return l
}

// vault keeps the record: the owner's, else the gateway's (nil: none, in
// memory).
func (a *Authorization) vault() Vault {
	if a.Owner != "" {
		return a.Vault
	}
	return a.Env.Vault
}

// stateName is what a state is signed for: the backend, and the owner
// when there is one, so that a state made for one person's authorization
// completes no one else's.
func (a *Authorization) stateName() string {
	if a.Owner == "" {
		return a.Backend
	}
	return a.Backend + "\x00" + a.Owner
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
	if a.vault() == nil {
		a.loaded = true
		return
	}
	b, err := a.vault().Load(ctx, a.Backend)
	if err != nil {
		a.log().Warn("backend credentials unreadable", "err", err)
		return
	}
	a.take(b)
}

// take decodes b, the record as the vault holds it, into a.rec (under
// a.mu); false when it does not decode.
func (a *Authorization) take(b []byte) bool {
	var r record
	if b != nil {
		if err := json.Unmarshal(b, &r); err != nil {
			a.log().Warn("backend credentials unreadable", "err", err)
			return false
		}
	}
	a.rec, a.loaded = r, true
	return true
}

func (a *Authorization) save(ctx context.Context) {
	if a.vault() == nil {
		return
	}
	b, _ := json.Marshal(a.rec)
	if err := a.vault().Save(ctx, a.Backend, b); err != nil {
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
func (a *Authorization) Status(ctx context.Context) AuthorizationStatus {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.load(ctx, true)
	s := AuthorizationStatus{Failure: a.rec.Failure}
	if t := a.rec.Token; t != nil {
		s.Authorized, s.Issuer, s.Scope, s.Expiry, s.DPoP = true, t.Issuer, t.Scope, t.Expiry, t.DPoP
	}
	if p := a.rec.Pending; p != nil && a.now().Before(p.Expires) {
		s.Link, s.Expires = p.Link, p.Expires
	}
	return s
}
