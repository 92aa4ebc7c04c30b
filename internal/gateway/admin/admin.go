// Package admin is mcpgate's web console at /admin: the backends and their
// health, the catalogue as a chosen role sees it, the open sessions, the
// audit log (searched, paged, tailed live) and the service tokens, for
// admins only.
//
// It is small and server-rendered: html/template pages, every string
// escaped by the template's context. It has one stylesheet and two short
// scripts inline under a per-response CSP nonce, and fetches nothing from
// elsewhere. It so works offline, and a page can run nothing it did not
// send.
//
// Who may use it: an admin, by the gateway's own authentication. A browser
// logs in once with a token (service token or JWT) and holds a cookie:
// HttpOnly, SameSite=Strict, path /admin. The cookie seals who logged in
// and until when, never the token. Every request re-checks that the service
// token behind it is still active, so a revoked token's console session
// ends at its next click. Every change is a POST that must carry the
// session's CSRF token and come from the console's own origin. A client
// with a bearer header is authenticated as on /mcp instead (no cookie, so
// no CSRF).
package admin

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mcpgate/mcpgate/internal/auth/bearer"
	"github.com/mcpgate/mcpgate/internal/observe/metrics"
	"github.com/mcpgate/mcpgate/internal/store"
	"github.com/mcpgate/mcpgate/mcp"
)

// Source is what the console shows and changes: the gateway.
type Source interface {
	// Authenticate checks a bearer secret as the gateway's authentication
	// does: the caller's identity, and when the credential expires (zero:
	// never).
	Authenticate(ctx context.Context, secret string) (mcp.Identity, time.Time, error)
	// Active reports whether id's credential may still be used (a service
	// token not revoked nor expired).
	Active(ctx context.Context, id mcp.Identity) bool
	// IsAdmin reports whether role is admin, or a role based on it.
	IsAdmin(role string) bool
	// AuthorizationLink is the link waiting for an admin to authorize the
	// gateway at backend name's authorization server ("" for none).
	AuthorizationLink(ctx context.Context, name string) string
	// EndSession records console session id ended (a logout) until until,
	// for every replica; SessionEnded reports whether it was. A session
	// that cannot be looked up is taken as ended.
	EndSession(ctx context.Context, id string, until time.Time) error
	SessionEnded(ctx context.Context, id string) bool

	Backends(ctx context.Context) []BackendRow
	RestartBackend(name string) error
	// ForgetBackendAuthorization drops the gateway's OAuth authorization
	// at backend name, for by; the answer says what was done.
	ForgetBackendAuthorization(ctx context.Context, name string, by mcp.Identity) (string, error)
	// Roles are the role names a token may have, least first.
	Roles() []string
	// Catalogue is every entry a caller with role would see.
	Catalogue(ctx context.Context, role string) []mcp.CatalogueEntry
	// Changes are the definitions changed from the approved ones, awaiting
	// approval (catalogue.pinning); DecideChange approves or rejects the
	// one whose fingerprint is given, for by (store.ErrNotFound when it
	// is not pending).
	Changes(ctx context.Context) ([]store.Pin, error)
	// TryTool makes the tools/call of params as by, through the gate, the
	// rate limit and the audit log as any call: its result, or its error
	// (a *jsonrpc.Error when the call was answered with one).
	TryTool(ctx context.Context, by mcp.Identity, params json.RawMessage) (json.RawMessage, error)
	// OwnDefinition is the definition backend gave its entry of kind
	// and name as approved (its pin), nil when none is kept.
	OwnDefinition(ctx context.Context, backend, kind, name string) json.RawMessage
	DecideChange(ctx context.Context, backend, kind, name, fingerprint string, approve bool, by mcp.Identity) error
	Sessions() []mcp.SessionInfo
	Audit(ctx context.Context, q store.AuditQuery) (store.AuditPage, error)
	// History is the overview's range r as of now (sampled first).
	History(now time.Time, r metrics.Range) metrics.History
	// Fleet says whether this is one replica of several.
	Fleet() Fleet

	Tokens(ctx context.Context) []store.Token
	CreateToken(ctx context.Context, name, role string, expires time.Time) (secret string, t store.Token, err error)
	RevokeToken(ctx context.Context, id string) error
	// Grants are the built-in authorization server's grants, oldest
	// first; ok is false without that server.
	Grants(ctx context.Context) (grants []store.OAuthGrant, ok bool)
	// RevokeGrant revokes a grant for by; store.ErrNotFound.
	RevokeGrant(ctx context.Context, id string, by mcp.Identity) error

	// MyCredentials is, for each per_user backend that takes a stored
	// credential, whether principal has stored one (none: the console
	// has no page for people who are not admins).
	MyCredentials(ctx context.Context, principal string) ([]CredentialRow, error)
	// SetMyCredential stores by's own credential for backend, and
	// DeleteMyCredential deletes it (store.ErrNotFound when none), each
	// audited; an error of a value refused says why (personal.ErrBadValue).
	SetMyCredential(ctx context.Context, by mcp.Identity, backend, value string) error
	DeleteMyCredential(ctx context.Context, by mcp.Identity, backend string) error
	// AuthorizeMine is the link by opens to authorize backend as
	// themselves ("" with no error: they have); ForgetMine drops by's
	// authorization of it, revoked at its authorization server (the
	// error says why not there), each audited.
	AuthorizeMine(ctx context.Context, by mcp.Identity, backend string) (string, error)
	// Policy is the rules and interceptors in force, with their counts
	// and latest refusals.
	Policy(ctx context.Context) PolicyView
	ForgetMine(ctx context.Context, by mcp.Identity, backend string) (hadToken bool, err error)
}

// CredentialRow is one per_user backend on a person's My credentials page.
type CredentialRow struct {
	Backend string
	// SentAs says how the backend gets it: "the header X-Api-Key", "the
	// variable API_KEY of your own process".
	SentAs    string
	Stored    bool
	UpdatedAt time.Time
	// Authorize: each person authorizes the backend themselves
	// (credential: oauth), and Authorization says how theirs stands.
	Authorize     bool
	Authorization PersonAuthorization
}

// PersonAuthorization is a person's own authorization of a backend.
type PersonAuthorization struct {
	Authorized bool
	Issuer     string // the authorization server
	Scope      string
	Expiry     time.Time // the access token's (renewed before it)
	// Waiting: a link is waiting for them (a sign-in begun, or more
	// scope asked for); Failure is why the last attempt got no token.
	Waiting bool
	Failure string
}

// BackendRow is one backend's row.
type BackendRow struct {
	Name, Kind string
	Up         bool
	Connecting bool // an attempt to connect is under way
	Since      time.Time
	Restarts   int
	LastError  string
	// OAuth says how the gateway stands with the backend's authorization
	// server ("": the backend asked for no OAuth); AuthorizeLink is the
	// authorization an admin is asked to open ("": none waiting).
	OAuth         string
	AuthorizeLink string
	// Authorized: the gateway holds a token there, which an admin may
	// make it forget.
	Authorized bool
	Entries    int     // its entries in the catalogue
	Calls      float64 // gated calls served since start
	Errors     float64 // of them, every outcome but ok
	Mean       time.Duration
}

// Fleet is what the overview says of the replicas: whether this is one
// of several (then it shows only its own), its name, and the dashboard
// over them all ("" when none is configured).
type Fleet struct {
	Replicas  bool
	Replica   string
	Dashboard string
}

// Options configure the console.
type Options struct {
	Source Source
	// Key seals the console's cookie (32 bytes). Replicas that share it
	// share console sessions; nil: a random key, sessions of this
	// process only.
	Key []byte
	// SessionAge bounds a console session (default 8h; never past the
	// credential's own expiry).
	SessionAge time.Duration
	// Secure marks the console's cookies Secure: set it when the
	// gateway's public URL is https, which the gateway, behind a proxy
	// that terminates TLS, cannot see in the request.
	Secure bool
	Logger *slog.Logger
	Now    func() time.Time
}

// Handler serves /admin and everything under it.
type Handler struct {
	src    Source
	secure bool
	aead   cipher.AEAD
	age    time.Duration
	log    *slog.Logger
	now    func() time.Time
	pages  *pages
	mux    *http.ServeMux
}

// cookieName is the console session's cookie.
const cookieName = "mcpgate_admin"

// New builds the console.
func New(o Options) (*Handler, error) {
	if o.Source == nil {
		return nil, errors.New("admin: no source")
	}
	key := o.Key
	if key == nil {
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, err
		}
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("admin: cookie key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	if o.SessionAge <= 0 {
		o.SessionAge = 8 * time.Hour
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	p, err := parsePages()
	if err != nil {
		return nil, err
	}
	h := &Handler{src: o.Source, secure: o.Secure, aead: aead, age: o.SessionAge, log: o.Logger, now: o.Now, pages: p}
	h.routes()
	return h, nil
}

func (h *Handler) routes() {
	m := http.NewServeMux()
	m.HandleFunc("GET /admin/login", h.loginPage)
	m.HandleFunc("POST /admin/login", h.login)
	m.Handle("POST /admin/logout", h.admin(h.logout))
	m.Handle("GET /admin/{$}", h.admin(h.overview))
	m.Handle("POST /admin/backends/restart", h.admin(h.restart))
	m.Handle("POST /admin/backends/forget-oauth", h.admin(h.forgetOAuth))
	m.Handle("GET /admin/backends/authorize", h.admin(h.authorizeBackend))
	m.Handle("GET /admin/catalogue", h.admin(h.catalogue))
	m.Handle("GET /admin/changes", h.admin(h.changes))
	m.Handle("GET /admin/try", h.admin(h.try))
	m.Handle("POST /admin/try", h.admin(h.try))
	m.Handle("POST /admin/changes/decide", h.admin(h.decideChange))
	m.Handle("GET /admin/sessions", h.admin(h.sessions))
	m.Handle("GET /admin/policy", h.admin(h.policy))
	m.Handle("GET /admin/audit", h.admin(h.audit))
	m.Handle("GET /admin/audit/tail", h.admin(h.auditTail))
	m.Handle("GET /admin/tokens", h.admin(h.tokens))
	m.Handle("POST /admin/tokens", h.admin(h.createToken))
	m.Handle("POST /admin/tokens/revoke", h.admin(h.revokeToken))
	m.Handle("POST /admin/grants/revoke", h.admin(h.revokeGrant))
	m.Handle("GET "+personalPage, h.person(h.credentials))
	m.Handle("POST "+personalPage, h.person(h.setCredential))
	m.Handle("POST "+personalPage+"/delete", h.person(h.deleteCredential))
	m.Handle("GET "+personalPage+"/authorize", h.person(h.authorizeMine))
	m.Handle("POST "+personalPage+"/revoke", h.person(h.forgetMine))
	m.HandleFunc("/admin", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/admin/", http.StatusSeeOther)
	})
	h.mux = m
}

// ServeHTTP serves the console with the headers every page has: no
// caching, no framing, no referrer to another origin, nothing sniffed.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "same-origin") // not no-referrer: a form would then post Origin: null
	h.mux.ServeHTTP(w, r)
}

// claims are what the cookie seals: who logged in, until when, and the
// session's CSRF token.
type claims struct {
	ID        string    `json:"i"` // the session's own id: what a logout ends
	Subject   string    `json:"s"`
	Role      string    `json:"r"`
	TokenID   string    `json:"t"`
	Principal string    `json:"p,omitempty"`
	Until     time.Time `json:"u"`
	CSRF      string    `json:"c"`
}

func (c claims) identity() mcp.Identity {
	return mcp.Identity{Subject: c.Subject, Role: c.Role, TokenID: c.TokenID, Principal: c.Principal}
}

func (h *Handler) seal(c claims) (string, error) {
	plain, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	return h.sealBytes(plain, cookieName)
}

// sealBytes seals plain under the console's key, bound to what (a
// cookie's name: one cookie's value does not open as another's).
func (h *Handler) sealBytes(plain []byte, what string) (string, error) {
	nonce := make([]byte, h.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(h.aead.Seal(nonce, nonce, plain, []byte(what))), nil
}

// openBytes opens what sealBytes sealed for what.
func (h *Handler) openBytes(v, what string) ([]byte, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil || len(raw) < h.aead.NonceSize() {
		return nil, false
	}
	n := h.aead.NonceSize()
	plain, err := h.aead.Open(nil, raw[:n], raw[n:], []byte(what))
	return plain, err == nil
}

func (h *Handler) open(v string) (claims, bool) {
	plain, ok := h.openBytes(v, cookieName)
	if !ok {
		return claims{}, false
	}
	var c claims
	if json.Unmarshal(plain, &c) != nil || c.CSRF == "" {
		return claims{}, false
	}
	return c, true
}

// caller is who a request is from, once admitted.
type caller struct {
	id    mcp.Identity
	csrf  string // "" for a bearer caller
	admin bool
	// person: the console has pages of one's own (My credentials).
	person bool
}

type adminHandler func(w http.ResponseWriter, r *http.Request, c caller)

// admin admits admins only: by bearer header, or by the console's
// cookie (then a POST must carry the CSRF token and come from this
// origin). A browser with no session is sent to the login page; anyone
// else is refused with what they lack.
func (h *Handler) admin(next adminHandler) http.Handler { return h.admit(next, true) }

// person admits anyone signed in, whatever their role, to their own
// pages (My credentials), as admin admits admins.
func (h *Handler) person(next adminHandler) http.Handler { return h.admit(next, false) }

func (h *Handler) admit(next adminHandler, adminOnly bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if secret, err := bearer.Token(r.Header); err == nil {
			id, _, err := h.src.Authenticate(r.Context(), secret)
			if err != nil {
				w.Header().Set("WWW-Authenticate", `Bearer realm="mcpgate"`)
				h.refuse(w, r, http.StatusUnauthorized, "This credential is not valid.")
				return
			}
			if adminOnly && !h.src.IsAdmin(id.Role) {
				h.refuse(w, r, http.StatusForbidden, notAdmin(id.Role))
				return
			}
			next(w, r, caller{id: id, admin: h.src.IsAdmin(id.Role), person: h.personOK(r.Context())})
			return
		}
		c, ok := h.session(r)
		if ok && adminOnly && !h.src.IsAdmin(c.Role) {
			h.refuseView(w, http.StatusForbidden, notAdmin(c.Role)+" Your own page is My credentials.", caller{id: c.identity(), csrf: c.CSRF, person: true})
			return
		}
		if !ok {
			clearCookie(w)
			if r.Method == http.MethodGet && !strings.HasPrefix(r.URL.Path, "/admin/audit/tail") {
				http.Redirect(w, r, "/admin/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
				return
			}
			h.refuse(w, r, http.StatusForbidden, "No console session: log in first.")
			return
		}
		if r.Method == http.MethodPost {
			if why := h.crossSite(r, c); why != "" {
				h.log.Warn("admin: a change refused", "why", why, "subject", c.Subject)
				h.refuse(w, r, http.StatusForbidden, "Refused: "+why+".")
				return
			}
		}
		next(w, r, caller{id: c.identity(), csrf: c.CSRF, admin: h.src.IsAdmin(c.Role), person: h.personOK(r.Context())})
	})
}

// session is the request's console session, when its cookie opens, has
// not run out, and its credential is still active (an admin's, or of
// someone with pages of their own: personOK).
func (h *Handler) session(r *http.Request) (claims, bool) {
	ck, err := r.Cookie(cookieName)
	if err != nil {
		return claims{}, false
	}
	c, ok := h.open(ck.Value)
	if !ok || !h.now().Before(c.Until) || !(h.src.IsAdmin(c.Role) || h.personOK(r.Context())) || !h.src.Active(r.Context(), c.identity()) ||
		c.ID == "" || h.src.SessionEnded(r.Context(), c.ID) {
		return claims{}, false
	}
	return c, true
}

// crossSite is why a cookie-authenticated POST is not the console's own
// ("" when it is): a CSRF token other than the session's, or an Origin
// (or Sec-Fetch-Site) other than this one.
func (h *Handler) crossSite(r *http.Request, c claims) string {
	if origin := r.Header.Get("Origin"); origin != "" {
		if u, err := url.Parse(origin); err != nil || u.Host != r.Host {
			return "the request comes from another origin"
		}
	} else if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
		return "the request comes from another site"
	}
	got := r.PostFormValue("csrf")
	if subtle.ConstantTimeCompare([]byte(got), []byte(c.CSRF)) != 1 {
		return "the form's CSRF token is missing or not this session's"
	}
	return ""
}

func notAdmin(role string) string {
	if role == "" {
		role = "none"
	}
	return "The console needs the admin role (or a role based on it); this credential's role is " + role + "."
}

func (h *Handler) setCookie(w http.ResponseWriter, r *http.Request, value string, until time.Time) {
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: value, Path: "/admin", Expires: until,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: h.secureCookies(r)})
}

// secureCookies reports whether the console's cookies are sent over
// https only: whenever the gateway's public URL is https (it is behind a
// proxy that terminates TLS) or it terminates TLS itself.
func (h *Handler) secureCookies(r *http.Request) bool { return h.secure || r.TLS != nil }

func clearCookie(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/admin", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode})
}

// login takes a token from the login form. The form must come from this
// origin (no one else logs a browser in), and the token is never echoed.
func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	if origin := r.Header.Get("Origin"); origin != "" {
		if u, err := url.Parse(origin); err != nil || u.Host != r.Host {
			h.refuse(w, r, http.StatusForbidden, "Refused: the login comes from another origin.")
			return
		}
	}
	secret := strings.TrimSpace(r.PostFormValue("token"))
	next := safeNext(r.PostFormValue("next"))
	if secret == "" {
		h.loginForm(w, r, http.StatusUnauthorized, "Paste a token.", next)
		return
	}
	id, expires, err := h.src.Authenticate(r.Context(), secret)
	if err != nil {
		h.loginForm(w, r, http.StatusUnauthorized, "This token is not valid (unknown, revoked or expired).", next)
		return
	}
	if !h.src.IsAdmin(id.Role) {
		if !h.personOK(r.Context()) {
			h.loginForm(w, r, http.StatusForbidden, notAdmin(id.Role), next)
			return
		}
		next = personalPage // the pages a person who is not an admin has
	}
	until := h.now().Add(h.age)
	if !expires.IsZero() && expires.Before(until) {
		until = expires
	}
	c := claims{ID: randomToken(), Subject: id.Subject, Role: id.Role, TokenID: id.TokenID, Principal: id.Principal, Until: until, CSRF: randomToken()}
	v, err := h.seal(c)
	if err != nil {
		h.refuse(w, r, http.StatusInternalServerError, "The session could not be made.")
		return
	}
	h.setCookie(w, r, v, until)
	h.log.Info("admin: console login", "subject", id.Subject, "token_id", id.TokenID)
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// logout ends the session on the server, for every replica, and not only
// in this browser: a copy of the cookie opens nothing after it.
func (h *Handler) logout(w http.ResponseWriter, r *http.Request, _ caller) {
	if c, ok := h.session(r); ok {
		if err := h.src.EndSession(r.Context(), c.ID, c.Until); err != nil {
			h.log.Error("admin: a logout could not be recorded", "err", err)
			h.refuse(w, r, http.StatusInternalServerError, "The session could not be ended; try again.")
			return
		}
	}
	clearCookie(w)
	http.Redirect(w, r, "/admin/login", http.StatusSeeOther)
}

// safeNext is where to go after the login: a console path, never
// another site.
func safeNext(next string) string {
	if strings.HasPrefix(next, "/admin/") && !strings.HasPrefix(next, "/admin//") && !strings.ContainsAny(next, "\\\r\n") {
		return next
	}
	return "/admin/"
}

func randomToken() string {
	b := make([]byte, 18)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
