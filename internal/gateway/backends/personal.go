// personal.go gives a per_user backend's calls each principal's own
// credential. Every call reads the caller's from the store, so that one
// stored, replaced or deleted on any replica counts from the next call;
// the principal's upstream session (sessions.go) was opened with it, and
// one opened with another is retired. A call without one is answered an
// error that says where to store one, never -32603.

package backends

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/url"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpgate/mcpgate/internal/auth/oauthclient"
	"github.com/mcpgate/mcpgate/internal/gateway/catalogue"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// CredentialSource is where per_user backends find each principal's own
// credential (personal.Credentials).
type CredentialSource interface {
	// Get is principal's credential for backend; ok is false for none.
	Get(ctx context.Context, principal, backend string) (value string, ok bool, err error)
}

// credential is a per_user principal's own credential for a backend.
type credential struct {
	principal string
	// value goes in the header or variable the spec names: a stored key,
	// or "Bearer " and an exchanged token.
	value string
	// authz is the principal's own authorization of the backend, whose
	// tokens are sent and renewed (credential: oauth).
	authz *oauthclient.Authorization
}

// personal is the calling principal's credential for b.
func (b *Backend) personal(ctx context.Context, r *mcp.Request) (credential, error) {
	id, _ := mcp.IdentityFrom(ctx)
	c := credential{principal: id.Budget()}
	switch {
	case b.spec.Exchange != nil:
		subject := id.Presented.Reveal()
		if subject == "" {
			return c, b.exchangeRefused("call with the token it gave you (a JWT or an access token of it), not a service token of the gateway's.")
		}
		tok, err := b.exchanged(ctx, c.principal, subject)
		if err != nil {
			b.log.Warn("backend: a caller's token was not exchanged", "err", err)
			return c, b.exchangeRefused("it did not exchange yours (" + err.Error() + ").")
		}
		r.SetActingAs(b.actingAs(c.principal, "exchange", tok))
		c.value = "Bearer " + tok
		return c, nil
	case b.spec.People != nil:
		tok, ok := b.spec.People.Holds(ctx, c.principal)
		if !ok {
			if tok, ok = b.askToAuthorize(ctx, r, c.principal); !ok {
				return c, b.credentialRequired()
			}
		}
		r.SetActingAs(b.actingAs(c.principal, "oauth", tok))
		c.authz = b.spec.People.For(c.principal)
		return c, nil
	case b.opts.Credentials == nil:
		return c, b.credentialRequired()
	}
	value, ok, err := b.opts.Credentials.Get(ctx, c.principal, b.spec.Name)
	if err != nil {
		b.log.Error("backend: a principal's credential could not be read", "err", err)
		return c, &catalogue.RouteError{Shown: "your credential for it could not be read", Err: err}
	}
	if !ok {
		return c, b.credentialRequired()
	}
	r.SetActingAs("vault:" + b.spec.Name)
	c.value = value
	return c, nil
}

// credentialRequired is the answer to a call whose principal has no
// credential for b yet: the URL elicitation required error (2025-11-25),
// naming the page where they store one, or where they begin their
// authorization of b. A client that knows it offers to open the page; any
// other shows the message, which names the page too.
func (b *Backend) credentialRequired() error {
	var page string
	if b.opts.CredentialsPage != nil {
		page = b.opts.CredentialsPage()
	}
	msg := "Backend " + b.spec.Name + " acts as you, and you have stored no credential for it."
	switch {
	case b.spec.People != nil && page != "":
		page += "/authorize?backend=" + url.QueryEscape(b.spec.Name)
		msg = "Backend " + b.spec.Name + " acts as you, and you have not authorized it yet. Open " + page +
			" to sign in at its authorization server, then call again."
	case page != "":
		msg += " Store yours at " + page + " (My credentials), then call again."
	default:
		msg += " Ask an admin to store yours (mcpgate credentials set " + b.spec.Name + " --for YOU), then call again."
	}
	var id [8]byte
	_, _ = rand.Read(id[:])
	data := map[string]any{"backend": b.spec.Name, "kind": mcp.KindCredentialRequired}
	if page != "" {
		data["elicitations"] = []map[string]string{{"mode": "url", "elicitationId": hex.EncodeToString(id[:]), "url": page, "message": msg}}
	}
	return jsonrpc.NewError(mcp.CodeURLElicitationRequired, msg, data)
}

// authorizeWait bounds how long a call waits for its person to finish the
// authorization they accepted to open, and authorizePoll how often it
// reads their record meanwhile (the callback may land on another replica).
const (
	authorizeWait = 10 * time.Minute
	authorizePoll = 2 * time.Second
)

// askToAuthorize asks the person calling, by a URL-mode elicitation on the
// call's own stream, to open the page that begins their authorization of
// b. Only a client of a session that declared URL elicitation is asked.
// Once they accept, the call waits for the authorization to complete and
// goes on with their token; notifications/elicitation/complete tells the
// client. ok is false when they were not asked, declined, or did not finish
// in time: the call is then answered -32042.
func (b *Backend) askToAuthorize(ctx context.Context, r *mcp.Request, principal string) (token string, ok bool) {
	if r == nil || r.Session == nil || r.MultiRoundTrip() || b.opts.CredentialsPage == nil || !urlElicitation(r.ClientCapabilities()) {
		return "", false
	}
	page := b.opts.CredentialsPage() + "/authorize?backend=" + url.QueryEscape(b.spec.Name)
	var raw [8]byte
	_, _ = rand.Read(raw[:])
	id := hex.EncodeToString(raw[:])
	res, err := r.Call(ctx, "elicitation/create", map[string]string{"mode": "url", "elicitationId": id, "url": page,
		"message": "Backend " + b.spec.Name + " acts as you. Sign in at its authorization server to let the gateway call it as you; your call goes on once you have."})
	if action, _ := jsonrpc.LookupString(res, "action"); err != nil || action != "accept" {
		return "", false
	}
	ctx, cancel := context.WithTimeout(ctx, authorizeWait)
	defer cancel()
	poll := time.NewTicker(authorizePoll)
	defer poll.Stop()
	for {
		done := b.spec.People.For(principal).Authorized() // completed here
		if token, ok = b.spec.People.Holds(ctx, principal); ok {
			_ = r.Notify(ctx, "notifications/elicitation/complete", map[string]string{"elicitationId": id})
			return token, true
		}
		select {
		case <-ctx.Done():
			return "", false
		case <-done:
		case <-poll.C: // or on another replica
		}
	}
}

// urlElicitation reports whether capabilities declare URL-mode
// elicitation (2025-11-25: elicitation.url).
func urlElicitation(capabilities json.RawMessage) bool {
	e, _ := jsonrpc.Lookup(capabilities, "elicitation")
	u, _ := jsonrpc.Lookup(e, "url")
	return len(u) > 0 && string(u) != "null"
}

// Vault reports whether b takes each principal's stored credential (a
// per_user backend of vault, not of exchange or oauth), and where it goes:
// a header (http, sse) or a variable (stdio, process).
func (b *Backend) Vault() (header, env string, ok bool) {
	return b.spec.CredentialHeader, b.spec.CredentialEnv, b.spec.Identity.PerUser() && b.spec.Exchange == nil && b.spec.People == nil
}

// People is each person's own authorization of b (nil unless b is
// per_user, of oauth).
func (b *Backend) People() *oauthclient.People { return b.spec.People }

// exchangedToken is a principal's token got by exchange, while it lasts.
type exchangedToken struct {
	subject [32]byte // the SHA-256 of the caller's token it came from
	ready   chan struct{}
	// Set before ready is closed.
	token   string
	renewAt time.Time // shortly before it expires
	err     error
}

// exchangeMargin is how long before it expires an exchanged token is
// renewed, at most (a tenth of its life for a shorter one).
const exchangeMargin = 30 * time.Second

// exchanged is principal's token for b, exchanged for subject (the
// token they signed in with) at most once while it lasts: concurrent calls
// wait for one exchange, and a new subject token is exchanged anew.
func (b *Backend) exchanged(ctx context.Context, principal, subject string) (string, error) {
	sum := sha256.Sum256([]byte(subject))
	b.xmu.Lock()
	if b.exchanges == nil {
		b.exchanges = map[string]*exchangedToken{}
	}
	e := b.exchanges[principal]
	if e != nil {
		select {
		case <-e.ready:
			if e.err != nil || e.subject != sum || !time.Now().Before(e.renewAt) {
				e = nil
			}
		default:
			if e.subject != sum {
				e = nil
			}
		}
	}
	if e == nil {
		if len(b.exchanges) >= exchangesSwept {
			b.sweepExchanged()
		}
		e = &exchangedToken{subject: sum, ready: make(chan struct{})}
		b.exchanges[principal] = e
		go b.exchange(e, subject)
	}
	b.xmu.Unlock()
	select {
	case <-e.ready:
		return e.token, e.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// exchange fills e in, bounded by the start timeout.
func (b *Backend) exchange(e *exchangedToken, subject string) {
	defer close(e.ready)
	ctx, cancel := context.WithTimeout(context.Background(), b.opts.StartTimeout)
	defer cancel()
	x, err := b.spec.Exchange.Exchange(ctx, subject)
	if err != nil {
		e.err = errors.New(scrub(err.Error(), withSecret(b.secrets, subject)))
		return
	}
	margin := min(exchangeMargin, time.Until(x.Expires)/10)
	e.token, e.renewAt = x.Token, x.Expires.Add(-margin)
}

// exchangesSwept is how many principals' exchanged tokens are kept before
// those past their time (or failed) are dropped: the map does not grow
// with every person who ever called.
const exchangesSwept = 1024

// sweepExchanged drops the exchanged tokens past their renewal time, and
// the failed exchanges. b.xmu is held.
func (b *Backend) sweepExchanged() {
	now := time.Now()
	for p, e := range b.exchanges {
		select {
		case <-e.ready:
			if e.err != nil || !now.Before(e.renewAt) {
				delete(b.exchanges, p)
			}
		default: // under way
		}
	}
}

// forgetExchanged drops principal's exchanged token (they were revoked).
func (b *Backend) forgetExchanged(principal string) {
	b.xmu.Lock()
	delete(b.exchanges, principal)
	b.xmu.Unlock()
}

// exchangeRefused is the answer to a call whose token could not be
// exchanged: none presented (a service token's caller), or the identity
// provider refused it.
func (b *Backend) exchangeRefused(why string) error {
	return jsonrpc.NewError(jsonrpc.CodeForbidden, "Backend "+b.spec.Name+" acts as you, with a token your identity provider gives for your own: "+why,
		map[string]any{"backend": b.spec.Name, "kind": mcp.KindCredentialRequired})
}

// actor is whom a principal's token is of, for as long as it is theirs.
type actor struct{ token, who string }

// actingAs is actingAs of principal's token, read once while it stays
// the same: the audit names it on every call.
func (b *Backend) actingAs(principal, way, token string) string {
	b.xmu.Lock()
	defer b.xmu.Unlock()
	if a, ok := b.actors[principal]; ok && a.token == token {
		return a.who
	}
	if b.actors == nil || len(b.actors) >= exchangesSwept {
		b.actors = map[string]actor{}
	}
	who := actingAs(way, b.spec.Name, token)
	b.actors[principal] = actor{token, who}
	return who
}

// actingAs names whom a token got by way is of: its subject when it is a
// JWT (read, not verified: its issuer made it), else the backend.
func actingAs(way, backend, token string) string {
	claims := jwt.MapClaims{}
	if _, _, err := jwt.NewParser().ParseUnverified(token, claims); err == nil {
		if sub, _ := claims["sub"].(string); sub != "" {
			return way + ":" + sub
		}
	}
	return way + ":" + backend
}

// catalogueCredential is what the backend's own connection (its
// catalogue, its pings) carries. For a per_user backend of exchange, whose
// server may let no one in without a person's token, it is the latest
// exchanged token of anyone ("" for none, and for other backends). Its
// entries are so listed to everyone once one person has reached it; what
// each may do there is decided by their own token at every call.
func (b *Backend) catalogueCredential() string {
	if b.spec.Exchange == nil {
		return ""
	}
	b.xmu.Lock()
	defer b.xmu.Unlock()
	var best *exchangedToken
	now := time.Now()
	for _, e := range b.exchanges {
		select {
		case <-e.ready:
		default:
			continue
		}
		if e.err == nil && now.Before(e.renewAt) && (best == nil || e.renewAt.After(best.renewAt)) {
			best = e
		}
	}
	if best == nil {
		return ""
	}
	return "Bearer " + best.token
}

// Arrive finds a credential for b's own connection in id's, in the
// background, while b is down with nothing to connect with. Such a backend
// is per_user, of exchange or oauth, and its server may let no one in
// without a person's token: id's is exchanged, or the token id holds is
// read. Its connection is then tried again at once. One runs at a time,
// and the request that arrived does not wait for it.
func (b *Backend) Arrive(id mcp.Identity) {
	exchange := b.spec.Exchange != nil && id.Presented != "" && b.catalogueCredential() == ""
	people := b.spec.People != nil && !b.spec.People.Reaches()
	if !exchange && !people || b.State().Up || !b.arriving.CompareAndSwap(false, true) {
		return
	}
	principal, subject := id.Budget(), id.Presented.Reveal()
	go func() {
		defer b.arriving.Store(false)
		ctx, cancel := context.WithTimeout(context.Background(), b.opts.StartTimeout)
		defer cancel()
		if people {
			if _, ok := b.spec.People.Holds(ctx, principal); ok {
				b.arrived.notify()
			}
			return
		}
		if _, err := b.exchanged(ctx, principal, subject); err != nil {
			b.log.Warn("backend: a caller's token was not exchanged", "err", err)
			return
		}
		b.arrived.notify()
	}()
}

// Authorized tells b that a person has just authorized it: a backend
// down with nothing to connect with tries again at once, with their token.
func (b *Backend) Authorized() { b.arrived.notify() }
