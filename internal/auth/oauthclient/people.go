// people.go is the second way of identity: per_user. Each person
// authorizes the backend themselves, at its authorization server, and the
// gateway keeps their tokens apart from everyone else's. Each gets an
// Authorization whose Owner is them, its record sealed with them bound in.
// A person's first call without a token is sent to a page of theirs that
// begins (Link); the gateway completes the callback only from the browser
// that began it. The tokens are sent and renewed as the gateway's own are
// (authcode_transport.go), and nothing is retried on a person's behalf.

package oauthclient

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgate/mcpgate/internal/auth/oauthmeta"
)

// People is each person's Authorization of one backend.
type People struct {
	Backend  string // the backend's name
	Resource string // its MCP URL
	Pre      *Registration
	Scopes   []string
	Issuer   string
	Env      *ClientEnv
	// Vault is where owner's record is kept.
	Vault func(owner string) Vault

	mu      sync.Mutex
	byOwner map[string]*Authorization
	// clients are the dynamic registrations the people share, by issuer,
	// kept in the backend's own record (Env's vault) for every replica.
	clientsMu sync.Mutex
	clients   map[string]Registration
	// latest is the Authorization that last completed, or was last found
	// holding a token: the backend's own connection (its catalogue)
	// carries its token (Wrap).
	latest atomic.Pointer[Authorization]
}

// peopleKept is how many people's Authorizations are kept in memory before
// they are dropped (their records stay in the vault; the next call of each
// reads theirs again).
const peopleKept = 1024

// Same reports whether p serves the backend at resource with this client,
// scopes and issuer (a reload then keeps it).
func (p *People) Same(resource string, pre *Registration, scopes []string, issuer string) bool {
	return p.Resource == resource && reflect.DeepEqual(p.Pre, pre) && slices.Equal(p.Scopes, scopes) && p.Issuer == issuer
}

// For is owner's Authorization of the backend.
func (p *People) For(owner string) *Authorization {
	p.mu.Lock()
	defer p.mu.Unlock()
	if a := p.byOwner[owner]; a != nil {
		return a
	}
	if p.byOwner == nil || len(p.byOwner) >= peopleKept {
		p.byOwner = map[string]*Authorization{}
	}
	a := &Authorization{Backend: p.Backend, Resource: p.Resource, Pre: p.Pre, Scopes: p.Scopes, Issuer: p.Issuer,
		Env: p.Env, Owner: owner, Vault: p.Vault(owner), people: p}
	a.engaged.Store(true) // the backend asks every person for OAuth
	p.byOwner[owner] = a
	return a
}

// Holds is the access token owner holds for the backend, if any, their
// record read anew: one forgotten on another replica counts at once. It
// names whom the backend sees; the transport sends it, renewed as due.
func (p *People) Holds(ctx context.Context, owner string) (token string, ok bool) {
	a := p.For(owner)
	if token = a.held(ctx); token == "" {
		return "", false
	}
	p.latest.CompareAndSwap(nil, a)
	return token, true
}

// Reaches reports whether the backend's own connection has a person's
// token to carry (Wrap).
func (p *People) Reaches() bool { return p.latest.Load() != nil }

// Link is the link owner opens to authorize the backend: the one waiting
// while it serves, else a new one. "" with no error: they hold a token
// and no more scope is asked for.
func (p *People) Link(ctx context.Context, owner string) (string, error) {
	return p.For(owner).link(ctx)
}

// Callback completes owner's authorization with the authorization
// server's answer q (Authorization.Callback).
func (p *People) Callback(ctx context.Context, owner string, q url.Values) error {
	a := p.For(owner)
	if err := a.Callback(ctx, q); err != nil {
		return err
	}
	p.latest.Store(a)
	return nil
}

// Forget drops owner's authorization, its refresh token revoked at the
// authorization server (Authorization.Forget).
func (p *People) Forget(ctx context.Context, owner string) (hadToken bool, revokeErr error) {
	a := p.For(owner)
	if p.latest.Load() == a {
		p.latest.Store(nil)
	}
	return a.Forget(ctx)
}

// Status is owner's authorization as their page shows it.
func (p *People) Status(ctx context.Context, owner string) AuthorizationStatus {
	return p.For(owner).Status(ctx)
}

// Wrap is base sending, on the backend's own connection (its catalogue,
// its pings), the token of the person who last authorized it here, or
// none before anyone has. Every call of a person carries their own.
func (p *People) Wrap(base http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		if a := p.latest.Load(); a != nil {
			return a.Wrap(base).RoundTrip(req)
		}
		return base.RoundTrip(req)
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// held is the access token held ("": none), the record read anew. A
// record read as it was last time is not decoded again: a person's is
// read at every call.
func (a *Authorization) held(ctx context.Context) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.vault() == nil {
		a.load(ctx, false)
	} else if b, err := a.vault().Load(ctx, a.Backend); err != nil {
		a.log().Warn("backend credentials unreadable", "err", err)
		return ""
	} else if a.loaded && b != nil && bytes.Equal(b, a.heldRaw) {
		return a.heldAccess
	} else if !a.take(b) {
		return ""
	} else {
		a.heldRaw = b
	}
	a.heldAccess = ""
	if a.rec.Token != nil {
		a.heldAccess = a.rec.Token.Access
	}
	return a.heldAccess
}

// link is the link to open now: the one waiting while it serves, else,
// with no token, a new one. The backend is asked first, without a token,
// so that its challenge names the scope to ask for (a 401's, as for the
// gateway's own); one that does not challenge gets a link from its
// resource metadata alone. "" with no error: a token is held.
func (a *Authorization) link(ctx context.Context) (string, error) {
	if l, done := a.waiting(ctx); done {
		return l, nil
	}
	a.probe(ctx)
	if l, done := a.waiting(ctx); done {
		return l, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.begin(ctx, oauthmeta.Challenge{}, nil); err != nil {
		a.rec.Pending = nil
		a.fail(ctx, err.Error())
		a.save(ctx)
		return "", err
	}
	a.saveLink(ctx, a.Scopes, nil)
	a.announce()
	if p := a.rec.Pending; p != nil && a.rec.Token == nil {
		return p.Link, nil
	}
	return "", nil
}

// waiting is the link waiting while it serves, or "" when a token is
// held; done is false when there is neither.
func (a *Authorization) waiting(ctx context.Context) (link string, done bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.load(ctx, true)
	if p := a.rec.Pending; a.linkServes(p, a.Scopes) {
		return p.Link, true
	}
	return "", a.rec.Token != nil
}

// probe asks the backend, without a token, for its challenge: a ping,
// which a server that wants a token refuses with a 401 naming the scope.
// The transport meets the challenge (challenged), which makes the link.
func (a *Authorization) probe(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, probeWithin)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.Resource, strings.NewReader(`{"jsonrpc":"2.0","id":"mcpgate-authorize","method":"ping"}`))
	if err != nil {
		return
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	base := a.http().Transport
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := a.Wrap(base).RoundTrip(req)
	if err == nil {
		drain(resp)
	}
}

// probeWithin bounds the probe.
const probeWithin = 10 * time.Second

// client is the registration the backend's people share at issuer, from
// memory or the backend's record (nil p: none).
func (p *People) client(ctx context.Context, issuer string) (Registration, bool) {
	if p == nil {
		return Registration{}, false
	}
	p.clientsMu.Lock()
	defer p.clientsMu.Unlock()
	if reg, ok := p.clients[issuer]; ok {
		return reg, true
	}
	if p.Env.Vault == nil {
		return Registration{}, false
	}
	raw, err := p.Env.Vault.Load(ctx, p.Backend)
	var rec record
	if err != nil || raw == nil || json.Unmarshal(raw, &rec) != nil {
		return Registration{}, false
	}
	reg, ok := rec.Clients[issuer]
	if ok {
		p.remember(issuer, reg)
	}
	return reg, ok
}

// keepClient shares reg, registered at issuer for one person, with the
// backend's other people, on every replica.
func (p *People) keepClient(ctx context.Context, issuer string, reg Registration) {
	if p == nil {
		return
	}
	p.clientsMu.Lock()
	defer p.clientsMu.Unlock()
	p.remember(issuer, reg)
	if p.Env.Vault == nil {
		return
	}
	_ = p.Env.Vault.Update(ctx, p.Backend, func(raw []byte) ([]byte, error) {
		var rec record
		if raw != nil {
			if err := json.Unmarshal(raw, &rec); err != nil {
				return nil, err
			}
		}
		if _, ok := rec.Clients[issuer]; ok {
			return nil, nil // another replica's came first: each keeps its own
		}
		if rec.Clients == nil {
			rec.Clients = map[string]Registration{}
		}
		rec.Clients[issuer] = reg
		return json.Marshal(rec)
	})
}

// remember keeps reg in memory (under p.clientsMu).
func (p *People) remember(issuer string, reg Registration) {
	if p.clients == nil {
		p.clients = map[string]Registration{}
	}
	p.clients[issuer] = reg
}
