// authorize.go is the authorization endpoint: the sign-in and consent page,
// and what its form does.
//
// A request whose client or redirect URI does not check out is answered on
// the page, never by a redirect, which would be an open redirect. Once both
// are known good, every other error goes back to the client's redirect URI
// with the state exactly as it came. The form carries the request's own
// parameters and the POST checks them all again: nothing the page showed is
// trusted when it comes back.

package authserver

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/mcpgate/mcpgate/internal/auth"
	"github.com/mcpgate/mcpgate/internal/look"
	"github.com/mcpgate/mcpgate/internal/store"
)

// authRequest is an authorization request, checked.
type authRequest struct {
	client      client
	RedirectURI string
	State       string
	Challenge   string
	Resource    string
	Scopes      []string
	AskedRole   string // the role the scopes ask for ("" for the person's own)
}

// parseAuthorize checks an authorization request: pageErr is about the
// client or its redirect URI, redirectErr about the rest of the request
// (both are shown on the page: checkedRequest).
func (s *Server) parseAuthorize(r *http.Request, q url.Values) (req authRequest, redirectErr oauthError, pageErr error) {
	for _, k := range []string{"client_id", "redirect_uri", "response_type", "state", "code_challenge", "code_challenge_method", "resource", "scope"} {
		if len(q[k]) > 1 {
			return req, oauthError{}, errClient{why: "the parameter " + k + " is given more than once"}
		}
	}
	c, err := s.lookupClient(r.Context(), q.Get("client_id"))
	if err != nil {
		var ec errClient
		if errors.As(err, &ec) {
			return req, oauthError{}, ec
		}
		s.log.Error("authserver: client lookup", "err", err)
		return req, oauthError{}, errClient{why: "the client could not be looked up; try again"}
	}
	req.client = c
	req.RedirectURI = q.Get("redirect_uri")
	if !slices.Contains(c.RedirectURIs, req.RedirectURI) {
		return req, oauthError{}, errClient{why: "redirect_uri is not one the client registered (they are compared exactly)"}
	}
	req.State = q.Get("state")
	switch {
	case q.Get("response_type") != "code":
		return req, oauthError{"unsupported_response_type", "only response_type=code is served"}, nil
	case q.Get("code_challenge_method") != "S256" || !isS256Challenge(q.Get("code_challenge")):
		return req, oauthError{"invalid_request", "PKCE is required: a code_challenge with code_challenge_method=S256"}, nil
	}
	req.Challenge = q.Get("code_challenge")
	req.Resource = q.Get("resource")
	if req.Resource == "" {
		req.Resource = s.cfg.Resource
	}
	if req.Resource != s.cfg.Resource {
		return req, oauthError{"invalid_target", "this server issues tokens for " + s.cfg.Resource + " only"}, nil
	}
	req.Scopes = strings.Fields(q.Get("scope"))
	if slices.ContainsFunc(req.Scopes, notScopeToken) {
		return req, oauthError{"invalid_scope", "a scope is printable ASCII without a quote or a backslash (RFC 6749 §3.3)"}, nil
	}
	best := 0
	for _, sc := range req.Scopes {
		if role, ok := s.cfg.Scopes[sc]; ok {
			if n, _ := s.cfg.Level(role); n > best {
				req.AskedRole, best = role, n
			}
		}
	}
	if len(req.Scopes) > 0 && req.AskedRole == "" {
		return req, oauthError{"invalid_scope", "none of the scopes asked for is served here"}, nil
	}
	return req, oauthError{}, nil
}

// redirect sends the client's redirect URI its answer: the parameters,
// the state as it came, and the issuer (RFC 9207).
func (s *Server) redirect(w http.ResponseWriter, r *http.Request, req authRequest, params url.Values) {
	u, _ := url.Parse(req.RedirectURI) // checked at registration
	q := u.Query()
	for k, vs := range params {
		q[k] = vs
	}
	if req.State != "" {
		q.Set("state", req.State)
	}
	q.Set("iss", s.cfg.Issuer)
	u.RawQuery = q.Encode()
	http.Redirect(w, r, u.String(), http.StatusSeeOther)
}

// checkedRequest is the authorization request q, checked; when it does
// not check out, the page or the client's redirect URI has been told why
// and ok is false.
func (s *Server) checkedRequest(w http.ResponseWriter, r *http.Request, q url.Values) (req authRequest, ok bool) {
	req, redirectErr, pageErr := s.parseAuthorize(r, q)
	switch {
	case pageErr != nil:
		s.page(w, http.StatusBadRequest, pageData{Error: pageErr.Error()})
		return req, false
	case redirectErr.Error != "":
		// Every client here registered itself or is a metadata document:
		// redirected, an error before the person consented would make
		// this server an open redirector to any URI a client chose (RFC
		// 9700 §4.11.2). It is shown on the page.
		s.page(w, http.StatusBadRequest, pageData{Error: redirectErr.Error + ": " + redirectErr.Description})
		return req, false
	}
	return req, true
}

func (s *Server) serveAuthorize(w http.ResponseWriter, r *http.Request) {
	if req, ok := s.checkedRequest(w, r, r.URL.Query()); ok {
		s.page(w, http.StatusOK, s.consentData(req, r.URL.Query(), ""))
	}
}

// serveConsent is the page's form: deny, or prove who you are and allow.
func (s *Server) serveConsent(w http.ResponseWriter, r *http.Request) {
	start := s.cfg.Now()
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		s.page(w, http.StatusBadRequest, pageData{Error: "the form could not be read"})
		return
	}
	q := url.Values{}
	for k, vs := range r.PostForm {
		if k != "token" && k != "decision" && k != "login" {
			q[k] = vs
		}
	}
	req, ok := s.checkedRequest(w, r, q)
	if !ok {
		return
	}
	if r.PostForm.Get("decision") != "allow" {
		s.audit("authorize", "", "", "", "forbidden", start)
		s.redirect(w, r, req, url.Values{"error": {"access_denied"}, "error_description": {"the person declined"}})
		return
	}
	// Who the person is: signed in at the provider, or by a service token.
	var person struct{ subject, tokenID, role string }
	if login := r.PostForm.Get("login"); login != "" && s.up != nil {
		in, err := s.consentSignIn(login, q, start)
		if err != nil {
			s.audit("authorize", "", "", "", "forbidden", start)
			s.page(w, http.StatusUnauthorized, s.consentData(req, q, err.Error()))
			return
		}
		person.subject, person.role = in.Subject, in.Role
	} else if !s.tokenPerson(w, r, req, q, start, &person.subject, &person.tokenID, &person.role) {
		return
	}
	role, scope, ok := s.roleFor(req.Scopes, person.role)
	if !ok {
		s.audit("authorize", person.subject, person.tokenID, person.role, "forbidden", start)
		s.page(w, http.StatusForbidden, s.consentData(req, q, "your role is granted by no scope here"))
		return
	}
	if n, err := s.liveGrants(r.Context(), person.subject, person.tokenID, start); err != nil || n >= s.cfg.GrantLimit {
		if err != nil {
			s.log.Error("authserver: counting grants", "err", err)
		}
		s.audit("authorize", person.subject, person.tokenID, person.role, "rate_limited", start)
		s.page(w, http.StatusForbidden, s.consentData(req, q, fmt.Sprintf(
			"you hold %d live grants here, the most one person may: revoke one (mcpgate oauth revoke, or the console's Tokens page) before granting another", n)))
		return
	}
	code := secret("mcpa_")
	err := s.cfg.Store.CreateOAuthCode(r.Context(), store.OAuthCode{Hash: hash(code), ClientID: req.client.ID,
		RedirectURI: req.RedirectURI, Challenge: req.Challenge, Resource: req.Resource, Scope: scope, Role: role,
		Subject: person.subject, TokenID: person.tokenID, CreatedAt: start.UTC(), ExpiresAt: start.Add(s.cfg.CodeLifetime).UTC()})
	if err != nil {
		s.log.Error("authserver: store a code", "err", err)
		s.redirect(w, r, req, url.Values{"error": {"server_error"}})
		return
	}
	s.audit("authorize", person.subject, person.tokenID, role, "ok", start)
	s.redirect(w, r, req, url.Values{"code": {code}})
}

// liveGrants counts the grants of one person that are not revoked or
// expired: those proven with their service token, or, signed in upstream
// (no token), made for their subject.
func (s *Server) liveGrants(ctx context.Context, subject, tokenID string, now time.Time) (int, error) {
	all, err := s.cfg.Store.OAuthGrants(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, g := range all {
		if g.Active(now) && (tokenID != "" && g.TokenID == tokenID || tokenID == "" && g.TokenID == "" && g.Subject == subject) {
			n++
		}
	}
	return n, nil
}

// tokenPerson is the person a service token proves (false: the page
// said why not).
func (s *Server) tokenPerson(w http.ResponseWriter, r *http.Request, req authRequest, q url.Values, start time.Time, subject, tokenID, role *string) bool {
	tok, err := s.cfg.Tokens.VerifyFresh(r.Context(), strings.TrimSpace(r.PostForm.Get("token")), start)
	if err != nil {
		why := "that token is not one this gateway knows"
		switch {
		case errors.Is(err, auth.ErrTokenRevoked):
			why = "that token is revoked"
		case errors.Is(err, auth.ErrTokenExpired):
			why = "that token has expired"
		}
		s.audit("authorize", "", tok.ID, "", "forbidden", start)
		s.page(w, http.StatusUnauthorized, s.consentData(req, q, why))
		return false
	}
	*subject, *tokenID, *role = tok.Name, tok.ID, tok.Role
	return true
}

// pageData is what the page shows. html/template escapes every value.
type pageData struct {
	Error      string
	Client     string
	ClientID   string
	RedirectTo string
	Role       string
	Hidden     []hidden
	// UpstreamLink signs in at the provider instead (UpstreamName);
	// after it, SignedInAs and PersonRole are who came back from
	// Provider, and Login is that sign-in, sealed, for the form.
	UpstreamLink, UpstreamName       string
	SignedInAs, PersonRole, Provider string
	Login                            string
}

type hidden struct{ Name, Value string }

func (s *Server) consentData(req authRequest, q url.Values, why string) pageData {
	d := pageData{Error: why, Client: req.client.Name, ClientID: req.client.ID, Role: req.AskedRole}
	if u, err := url.Parse(req.RedirectURI); err == nil {
		d.RedirectTo = u.Scheme + "://" + u.Host
	}
	for _, k := range authorizeParams {
		if v, ok := q[k]; ok && len(v) == 1 {
			d.Hidden = append(d.Hidden, hidden{k, v[0]})
		}
	}
	if s.up != nil {
		d.UpstreamLink, d.UpstreamName = s.upstreamLink(q), s.up.name()
	}
	return d
}

// formAction is the CSP form-action of a page whose form may redirect to
// redirectTo (browsers check a form's redirects against it too).
func formAction(redirectTo string) string {
	u, err := url.Parse(redirectTo)
	switch {
	case redirectTo == "" || err != nil:
		return "'self'"
	case u.Scheme == "http" || u.Scheme == "https":
		return "'self' " + u.Scheme + "://" + u.Host
	case u.Scheme != "" && !strings.ContainsAny(u.Scheme, " ;'"):
		return "'self' " + u.Scheme + ":"
	}
	return "'self'"
}

func (s *Server) page(w http.ResponseWriter, status int, d pageData) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action "+formAction(d.RedirectTo)+"; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin") // not no-referrer: the form would then post Origin: null, which the gateway refuses
	w.WriteHeader(status)
	if err := pageTemplate.Execute(w, d); err != nil {
		s.log.Error("authserver: page", "err", err)
	}
}

var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{"style": look.CSS}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in · mcpgate</title>
<style>{{style}}</style></head><body>
<header><strong>mcpgate</strong></header>
<main><div class="card login">
<h1>Sign in to mcpgate</h1>
{{if .Error}}<p class="error" id="error" role="alert">{{.Error}}</p>{{end}}
{{if .ClientID}}
<p id="ask"><strong id="client">{{if .Client}}{{.Client}}{{else}}An unnamed client{{end}}</strong>
(<code id="client-id">{{.ClientID}}</code>) asks to use this gateway as you,
{{if .Role}}with the role <strong id="role">{{.Role}}</strong>{{else}}with your token's role{{end}},
and will be sent back to <code id="redirect">{{.RedirectTo}}</code>.</p>
{{if .Login}}<p id="signed-in">You signed in as <strong id="person">{{.SignedInAs}}</strong> at {{.Provider}}, with the role <strong id="person-role">{{.PersonRole}}</strong>.</p>{{end}}
<p class="muted">The role it gets is never more than {{if .Login}}yours{{else}}your token's{{end}}. Allow only a client you started yourself.</p>
<form method="post" action="/oauth/authorize">
{{range .Hidden}}<input type="hidden" name="{{.Name}}" value="{{.Value}}">
{{end}}{{if .Login}}<input type="hidden" name="login" value="{{.Login}}">
{{else}}<label for="token">Your service token</label>
<input type="password" id="token" name="token" autocomplete="off" required>
{{end}}<p><button type="submit" name="decision" value="allow" id="allow">Allow</button>
<button class="quiet" type="submit" name="decision" value="deny" id="deny" formnovalidate>Deny</button></p>
</form>
{{if .UpstreamLink}}<p id="upstream">Or <a id="upstream-link" href="{{.UpstreamLink}}">sign in with {{.UpstreamName}}</a> instead.</p>{{end}}{{end}}
</div></main>
</body></html>
`))

// isS256Challenge reports whether c is an S256 code challenge: a SHA-256
// digest in unpadded base64url (RFC 7636 §4.2), 43 characters.
func isS256Challenge(c string) bool {
	b, err := base64.RawURLEncoding.DecodeString(c)
	return err == nil && len(c) == 43 && len(b) == sha256.Size
}

// notScopeToken reports whether sc holds a character a scope token may
// not: one outside printable ASCII, a quote or a backslash.
func notScopeToken(sc string) bool {
	return strings.ContainsFunc(sc, func(r rune) bool { return r < 0x21 || r > 0x7e || r == '"' || r == '\\' })
}
