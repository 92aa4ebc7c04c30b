// backend_oauth.go makes the gateway an OAuth client of the http and sse
// backends that demand access tokens (package oauthclient). Each such
// backend gets an oauthclient.Authorization, kept across reloads while its
// URL and client stay the same. The callback at /oauth/callback takes the
// authorization server's answer for the backend its state names.
// /oauth/client-metadata.json is the gateway's Client ID Metadata Document
// when one is configured. The tokens are sealed in the store under
// oauth_client's key, or kept in memory without one.

package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgate/mcpgate/internal/auth/oauthclient"
	"github.com/mcpgate/mcpgate/internal/auth/seal"
	"github.com/mcpgate/mcpgate/internal/config"
	"github.com/mcpgate/mcpgate/internal/look"
	"github.com/mcpgate/mcpgate/internal/store"
	"github.com/mcpgate/mcpgate/internal/upstream"
)

// backendOAuth is what the backends' Authorizations share.
type backendOAuth struct {
	env    *oauthclient.ClientEnv
	listen *atomic.Pointer[string] // the address serve listens on (the gateway's)

	mu     sync.Mutex
	byName map[string]*oauthclient.Authorization
	// byPeople is each per_user backend of oauth's People; personVault
	// keeps a person's records (personal_credentials, sealed under a key
	// of vault's own; in memory with no store).
	byPeople    map[string]*oauthclient.People
	personVault func(owner string) oauthclient.Vault
	memory      map[string]*oauthclient.MemoryVault
}

// newBackendOAuth is the backends' OAuth client (nil when
// oauth_client.disabled).
func (g *Gateway) newBackendOAuth(st store.Store) (*backendOAuth, error) {
	o := g.cfg.OAuthClient
	if o.Disabled {
		return nil, nil
	}
	key, err := o.Key()
	if err != nil {
		return nil, err
	}
	var vault oauthclient.Vault = &oauthclient.MemoryVault{}
	if key != nil && st != nil {
		if vault, err = oauthclient.NewSealedVault(st, key, func(err error) bool { return errors.Is(err, store.ErrNotFound) }); err != nil {
			return nil, err
		}
	}
	b := &backendOAuth{byName: map[string]*oauthclient.Authorization{}, byPeople: map[string]*oauthclient.People{}, listen: &g.listening}
	if err := b.keepPeople(g.cfg, st); err != nil {
		return nil, err
	}
	b.env = &oauthclient.ClientEnv{RedirectURL: func() string { return b.redirectURL(g.cfg) }, ClientName: o.ClientName,
		ConsoleLink: func(name string) string {
			if g.console == nil {
				return ""
			}
			return strings.TrimSuffix(b.redirectURL(g.cfg), oauthclient.CallbackPath) + "/admin/backends/authorize?name=" + url.QueryEscape(name)
		},
		ClientMetadataURL: o.ClientMetadataURL, Vault: vault, Logger: g.log, Outbound: outbound(g.cfg.Outbound)}
	if key != nil {
		// Replicas that share the vault's key sign states alike, so that
		// a callback may land on any of them; the key itself signs nothing.
		b.env.StateKey = seal.Derive(key, "mcpgate backend oauth states")
	}
	if b.env.ClientMetadataURL == "" {
		if u, err := url.Parse(b.redirectURL(g.cfg)); err == nil && u.Scheme == "https" {
			b.env.ClientMetadataURL = u.Scheme + "://" + u.Host + oauthclient.ClientMetadataPath
		}
	}
	return b, nil
}

// keepPeople says where each person's own authorizations are kept: their
// personal_credentials rows, sealed under a key derived from vault's, so
// that neither a stored key nor an authorization opens as the other.
func (b *backendOAuth) keepPeople(cfg *config.Config, st store.Store) error {
	key, err := cfg.Vault.Key("vault")
	if err != nil {
		return err
	}
	if key == nil || st == nil {
		b.memory = map[string]*oauthclient.MemoryVault{}
		b.personVault = func(owner string) oauthclient.Vault {
			b.mu.Lock()
			defer b.mu.Unlock()
			if b.memory[owner] == nil {
				b.memory[owner] = &oauthclient.MemoryVault{}
			}
			return b.memory[owner]
		}
		return nil
	}
	base, err := oauthclient.NewSealedVault(nil, seal.Derive(key, "mcpgate people's backend authorizations"), func(err error) bool { return errors.Is(err, store.ErrNotFound) })
	if err != nil {
		return err
	}
	b.personVault = func(owner string) oauthclient.Vault { return base.ForOwner(owner, personRecords{st, owner}) }
	return nil
}

// personRecords are one person's records in the store's
// personal_credentials, as a vault keeps them.
type personRecords struct {
	st    store.PersonalCredentialStore
	owner string
}

func (r personRecords) BackendCredential(ctx context.Context, name string) ([]byte, error) {
	return r.st.PersonalCredential(ctx, r.owner, name)
}

func (r personRecords) PutBackendCredential(ctx context.Context, name string, sealed []byte, at time.Time) error {
	return r.st.PutPersonalCredential(ctx, r.owner, name, sealed, at)
}

func (r personRecords) UpdateBackendCredential(ctx context.Context, name string, at time.Time, fn func([]byte) ([]byte, error)) error {
	return r.st.UpdatePersonalCredential(ctx, r.owner, name, at, fn)
}

// people is the per_user backend's People: the one it had while its URL,
// client, scopes and issuer are the same, else a new one (each person's
// record is theirs still).
func (b *backendOAuth) people(name, resource string, pre *oauthclient.Registration, scopes []string, issuer string) *oauthclient.People {
	b.mu.Lock()
	defer b.mu.Unlock()
	if p := b.byPeople[name]; p != nil && p.Same(resource, pre, scopes, issuer) {
		return p
	}
	p := &oauthclient.People{Backend: name, Resource: resource, Pre: pre, Scopes: scopes, Issuer: issuer, Env: b.env, Vault: b.personVault}
	b.byPeople[name] = p
	return p
}

// Listening tells the gateway the address it serves on (host:port), for
// the links it makes when no public URL is configured.
func (g *Gateway) Listening(hostport string) { g.listening.Store(&hostport) }

// origin is publicOrigin, on the address the gateway serves on once it is
// known (the configured one may have port 0).
func (g *Gateway) origin() string {
	o := publicOrigin(g.cfg)
	if p := g.listening.Load(); p != nil && o == "http://"+g.cfg.Listen {
		return "http://" + *p
	}
	return o
}

// redirectURL is the callback as the admin's browser reaches it: the
// configured one, else on auth.oauth.resource's origin, else on the
// listen address.
func (b *backendOAuth) redirectURL(cfg *config.Config) string {
	if u := cfg.OAuthClient.RedirectURL; u != "" {
		return u
	}
	if o := cfg.Auth.OAuth; o != nil {
		if u, err := url.Parse(o.Resource); err == nil {
			return u.Scheme + "://" + u.Host + oauthclient.CallbackPath
		}
	}
	addr := cfg.Listen
	if p := b.listen.Load(); p != nil {
		addr = *p
	}
	return "http://" + addr + oauthclient.CallbackPath
}

// publicOrigin is the gateway's origin as its users reach it: that of
// auth.oauth.resource, else of oauth_client.redirect_url, else the listen
// address over http. A gateway behind a proxy that terminates TLS cannot
// tell it from a request.
func publicOrigin(cfg *config.Config) string {
	for _, raw := range []string{oauthResource(cfg), cfg.OAuthClient.RedirectURL} {
		if u, err := url.Parse(raw); err == nil && u.Scheme != "" && u.Host != "" {
			return u.Scheme + "://" + u.Host
		}
	}
	return "http://" + cfg.Listen
}

func oauthResource(cfg *config.Config) string {
	if cfg.Auth.OAuth != nil {
		return cfg.Auth.OAuth.Resource
	}
	return ""
}

// authorization is the backend's Authorization: the one it had while its
// URL, client, scopes and issuer are the same (a reload then leaves it
// running), else a new one (its record is the backend's still).
func (b *backendOAuth) authorization(name, resource string, pre *oauthclient.Registration, scopes []string, issuer string) *oauthclient.Authorization {
	b.mu.Lock()
	defer b.mu.Unlock()
	if a := b.byName[name]; a != nil && a.Resource == resource && reflect.DeepEqual(a.Pre, pre) && slices.Equal(a.Scopes, scopes) && a.Issuer == issuer {
		return a
	}
	a := &oauthclient.Authorization{Backend: name, Resource: resource, Pre: pre, Scopes: scopes, Issuer: issuer, Env: b.env}
	b.byName[name] = a
	return a
}

// wantsAuthorization reports whether a configured backend meets OAuth
// challenges by the authorization code grant: an http or sse backend
// with no other credential of its own.
func wantsAuthorization(b config.BackendConfig) bool {
	if b.Kind != upstream.KindHTTP && b.Kind != upstream.KindSSE {
		return false
	}
	if b.OAuth != nil {
		return b.OAuth.Grant == config.GrantAuthorizationCode
	}
	if c := b.Credential; c != nil && (c.Exchange != nil || c.OAuth != nil) {
		return false // each person's own token, and no admin's
	}
	for h := range b.HeadersFrom {
		if strings.EqualFold(h, "Authorization") {
			return false
		}
	}
	return true
}

// mountBackendOAuth serves the callback and the client metadata document.
func (g *Gateway) mountBackendOAuth(root *http.ServeMux) {
	b := g.backendOAuth
	if b == nil {
		return
	}
	root.HandleFunc("GET "+oauthclient.CallbackPath, g.serveBackendCallback)
	if u, err := url.Parse(b.env.ClientMetadataURL); err == nil && b.env.ClientMetadataURL != "" {
		path := oauthclient.ClientMetadataPath
		if u.Path == path || strings.HasPrefix(u.Path, "/oauth/") {
			path = u.Path
		}
		doc, _ := json.Marshal(b.env.ClientMetadata(b.env.ClientMetadataURL, "none"))
		root.HandleFunc("GET "+path, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Cache-Control", "max-age=300")
			_, _ = w.Write(doc)
		})
	}
}

var callbackPage = template.Must(template.New("callback").Funcs(template.FuncMap{"style": look.CSS}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} · mcpgate</title>
<style>{{style}}</style></head><body>
<header><strong>mcpgate</strong></header>
<main><div class="card">
<h1 id="title">{{.Title}}</h1>
<p id="text"{{if .Failed}} class="error" role="alert"{{end}}>{{.Text}}</p>
<p><a href="{{.Back}}">{{if .Person}}Back to My credentials{{else}}Back to the console{{end}}</a></p>
</div></main>
</body></html>
`))

// callbackAnswer is the page the callback shows.
type callbackAnswer struct {
	Title, Text, Back string
	Failed, Person    bool
}

// serveBackendCallback takes an authorization server's answer: the state
// names the backend, whose Authorization checks the rest, or, for a
// per_user backend of oauth, the Authorization of the person whose
// browser began it.
func (g *Gateway) serveBackendCallback(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	q := r.URL.Query()
	name := oauthclient.StateBackend(q.Get("state"))
	var a *oauthclient.Authorization
	var people *oauthclient.People
	b := g.backends.Backend(name)
	if b != nil {
		a, people = b.Authorization(), b.People()
	}
	page := callbackAnswer{Title: "Authorized", Text: "The gateway holds a token for backend " + name + " now; it connects at once.", Back: "/admin/"}
	refuse := func(status int, text string) {
		page.Title, page.Text, page.Failed = "Not authorized", text, true
		w.WriteHeader(status)
	}
	who, principal, asked := g.authorizationAsked(r, q.Get("state"))
	switch {
	case a == nil && people == nil:
		refuse(http.StatusBadRequest, "This answer names no backend that waits for an authorization.")
	case !asked || people == nil && principal != "":
		refuse(http.StatusForbidden, "This answer does not come from the browser that opened the authorization from the console: open it there (Backends, Authorize the gateway; or, for a backend that acts as you, My credentials).")
		g.log.Warn("backend authorization refused at the callback: not asked from the console by this browser", "backend", name)
	case people != nil && principal == "":
		refuse(http.StatusForbidden, "Backend "+name+" acts as each person: authorize it as yourself, from your own page (My credentials).")
		g.log.Warn("backend authorization refused at the callback: a person's backend, not begun by a person", "backend", name)
	case people != nil:
		page.Person, page.Back = true, personalPage
		if err := people.Callback(r.Context(), principal, q); err != nil {
			refuse(http.StatusBadRequest, "Backend "+name+": "+err.Error())
			g.log.Warn("backend authorization refused at the callback", "backend", name, "for", principal, "err", err)
			break
		}
		b.Authorized()
		page.Text = "Backend " + name + " acts as you now: the gateway holds your token for it, sends it on your calls only, and renews it. A call of yours that waits for it goes on now; otherwise, call the tool again from your client."
		g.log.Info("backend authorized by a person", "backend", name, "for", principal, "by", who)
	default:
		if err := a.Callback(r.Context(), q); err != nil {
			refuse(http.StatusBadRequest, "Backend "+name+": "+err.Error())
			g.log.Warn("backend authorization refused at the callback", "backend", name, "err", err)
		} else if who != "" {
			g.log.Info("backend authorized", "backend", name, "by", who)
		}
	}
	_ = callbackPage.Execute(w, page)
}

// personalPage is the console's My credentials page.
const personalPage = "/admin/credentials"

// authorizationAsked reports whether the callback r comes from the
// browser of an admin who opened the authorization from the console, and
// who. Without a console (authentication off, loopback only) there is no
// admin to bind to.
func (g *Gateway) authorizationAsked(r *http.Request, state string) (subject, principal string, ok bool) {
	if g.console == nil {
		return "", "", true
	}
	return g.console.AuthorizationAsked(r, state)
}
