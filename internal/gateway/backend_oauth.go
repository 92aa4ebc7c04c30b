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
	"crypto/sha256"
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

	"github.com/mcpgate/mcpgate/internal/auth/oauthclient"
	"github.com/mcpgate/mcpgate/internal/config"
	"github.com/mcpgate/mcpgate/internal/store"
	"github.com/mcpgate/mcpgate/internal/upstream"
)

// backendOAuth is what the backends' Authorizations share.
type backendOAuth struct {
	env    *oauthclient.ClientEnv
	listen *atomic.Pointer[string] // the address serve listens on (the gateway's)

	mu     sync.Mutex
	byName map[string]*oauthclient.Authorization
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
	b := &backendOAuth{byName: map[string]*oauthclient.Authorization{}, listen: &g.listening}
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
		sum := sha256.Sum256(append([]byte("mcpgate backend oauth states\x00"), key...))
		b.env.StateKey = sum[:]
	}
	if b.env.ClientMetadataURL == "" {
		if u, err := url.Parse(b.redirectURL(g.cfg)); err == nil && u.Scheme == "https" {
			b.env.ClientMetadataURL = u.Scheme + "://" + u.Host + oauthclient.ClientMetadataPath
		}
	}
	return b, nil
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
	if c := b.Credential; c != nil && c.Exchange != nil {
		return false // each person's exchanged token, and no admin's
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

var callbackPage = template.Must(template.New("callback").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>mcpgate: {{.Title}}</title></head>
<body><h1>{{.Title}}</h1><p>{{.Text}}</p><p><a href="/admin/">Back to the console</a></p></body></html>
`))

// serveBackendCallback takes an authorization server's answer: the state
// names the backend, whose Authorization checks the rest.
func (g *Gateway) serveBackendCallback(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	q := r.URL.Query()
	name := oauthclient.StateBackend(q.Get("state"))
	var a *oauthclient.Authorization
	if b := g.backends.Backend(name); b != nil {
		a = b.Authorization()
	}
	page := struct{ Title, Text string }{"Authorized", "The gateway holds a token for backend " + name + " now; it connects at once."}
	status := http.StatusOK
	who, asked := g.authorizationAsked(r, q.Get("state"))
	switch {
	case a == nil:
		page, status = struct{ Title, Text string }{"Not authorized", "This answer names no backend that waits for an authorization."}, http.StatusBadRequest
	case !asked:
		page, status = struct{ Title, Text string }{"Not authorized", "This answer does not come from the browser of an admin who opened the authorization from the console: open it there (Backends, Authorize the gateway)."}, http.StatusForbidden
		g.log.Warn("backend authorization refused at the callback: not asked from the console by this browser", "backend", name)
	default:
		if err := a.Callback(r.Context(), q); err != nil {
			page, status = struct{ Title, Text string }{"Not authorized", "Backend " + name + ": " + err.Error()}, http.StatusBadRequest
			g.log.Warn("backend authorization refused at the callback", "backend", name, "err", err)
		} else if who != "" {
			g.log.Info("backend authorized", "backend", name, "by", who)
		}
	}
	w.WriteHeader(status)
	_ = callbackPage.Execute(w, page)
}

// authorizationAsked reports whether the callback r comes from the
// browser of an admin who opened the authorization from the console, and
// who. Without a console (authentication off, loopback only) there is no
// admin to bind to.
func (g *Gateway) authorizationAsked(r *http.Request, state string) (string, bool) {
	if g.console == nil {
		return "", true
	}
	return g.console.AuthorizationAsked(r, state)
}
