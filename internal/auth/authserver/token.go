// token.go is the token endpoint (codes and refresh tokens for access
// tokens) and the revocation endpoint (RFC 7009).

package authserver

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpgate/mcpgate/internal/store"
)

func (s *Server) serveToken(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, oauthError{"invalid_request", "the body must be a form of at most 64 KiB"})
		return
	}
	for k, vs := range r.PostForm {
		if len(vs) > 1 {
			writeJSON(w, http.StatusBadRequest, oauthError{"invalid_request", "the parameter " + k + " is given more than once"})
			return
		}
	}
	if _, _, basic := r.BasicAuth(); basic {
		writeJSON(w, http.StatusUnauthorized, oauthError{"invalid_client", "only public clients are served: no client authentication"})
		return
	}
	f := r.PostForm
	if res := f.Get("resource"); res != "" && res != s.cfg.Resource {
		writeJSON(w, http.StatusBadRequest, oauthError{"invalid_target", "this server issues tokens for " + s.cfg.Resource + " only"})
		return
	}
	switch f.Get("grant_type") {
	case "authorization_code":
		s.redeemCode(w, r)
	case "refresh_token":
		s.refresh(w, r)
	default:
		writeJSON(w, http.StatusBadRequest, oauthError{"unsupported_grant_type", "authorization_code and refresh_token are served"})
	}
}

// invalidGrant is the answer to every code or refresh token that does not
// check out; the description says which check, never a secret.
func invalidGrant(w http.ResponseWriter, why string) {
	writeJSON(w, http.StatusBadRequest, oauthError{"invalid_grant", why})
}

func (s *Server) redeemCode(w http.ResponseWriter, r *http.Request) {
	start := s.cfg.Now()
	f := r.PostForm
	h := hash(f.Get("code"))
	c, err := s.cfg.Store.OAuthCode(r.Context(), h)
	switch {
	case errors.Is(err, store.ErrNotFound):
		invalidGrant(w, "unknown code")
		return
	case err != nil:
		s.serverError(w, "read a code", err)
		return
	case c.ClientID != f.Get("client_id"):
		s.audit("token", c.Subject, c.TokenID, c.Role, "forbidden", start)
		invalidGrant(w, "the code was issued to another client")
		return
	case c.RedirectURI != f.Get("redirect_uri"):
		invalidGrant(w, "redirect_uri is not the one the code was issued for")
		return
	case !pkceMatches(f.Get("code_verifier"), c.Challenge):
		s.audit("token", c.Subject, c.TokenID, c.Role, "forbidden", start)
		invalidGrant(w, "code_verifier does not match the code_challenge")
		return
	}
	refresh := secret("mcpr_")
	g := store.OAuthGrant{ID: secret(GrantPrefix)[:28], ClientID: c.ClientID, ClientName: s.clientName(r, c.ClientID),
		Subject: c.Subject, TokenID: c.TokenID, Role: c.Role, Scope: c.Scope, Resource: c.Resource,
		RefreshHash: hash(refresh), CreatedAt: start.UTC(), ExpiresAt: start.Add(s.cfg.RefreshLifetime).UTC()}
	switch err := s.cfg.Store.RedeemOAuthCode(r.Context(), h, g, start.UTC()); {
	case errors.Is(err, store.ErrReused):
		s.reused(w, "token", "code", c.GrantID, c.Subject, c.Role, start)
		return
	case errors.Is(err, store.ErrExpired):
		invalidGrant(w, "the code has expired")
		return
	case err != nil:
		s.serverError(w, "redeem a code", err)
		return
	}
	s.audit("token", g.Subject, g.ID, g.Role, "ok", start)
	s.answerTokens(w, g, refresh, start)
}

// reused answers a code or refresh token presented again: the store has
// revoked its grant, which this replica forgets at once.
func (s *Server) reused(w http.ResponseWriter, act, what, grant, subject, role string, start time.Time) {
	s.log.Warn("authserver: a "+what+" was presented again; its grant is revoked", "grant", grant, "subject", subject)
	s.forget(grant)
	s.audit(act, subject, grant, role, "forbidden", start)
	invalidGrant(w, "the "+what+" was used before; its grant is revoked")
}

// clientName is the name a grant shows for its client.
func (s *Server) clientName(r *http.Request, id string) string {
	if strings.HasPrefix(id, "http") {
		return id
	}
	c, err := s.cfg.Store.OAuthClient(r.Context(), id)
	if err != nil {
		return id
	}
	return c.Name
}

func (s *Server) refresh(w http.ResponseWriter, r *http.Request) {
	start := s.cfg.Now()
	f := r.PostForm
	old := hash(f.Get("refresh_token"))
	cur, err := s.cfg.Store.OAuthGrantByRefresh(r.Context(), old)
	switch {
	case err == nil && cur.ClientID != f.Get("client_id"):
		invalidGrant(w, "the refresh token was issued to another client")
		return
	case err == nil:
		if !s.provingTokenActive(cur.TokenID, start) {
			_ = s.Revoke(r.Context(), cur.ID)
			s.audit("refresh", cur.Subject, cur.ID, cur.Role, "forbidden", start)
			invalidGrant(w, "the service token the grant was made with is revoked or expired; sign in again")
			return
		}
		if !start.Before(s.grantEnd(cur)) {
			_ = s.Revoke(r.Context(), cur.ID)
			s.audit("refresh", cur.Subject, cur.ID, cur.Role, "forbidden", start)
			invalidGrant(w, "the grant has reached its lifetime; sign in again")
			return
		}
		if asked := strings.Fields(f.Get("scope")); len(asked) > 0 && (len(asked) != 1 || asked[0] != cur.Scope) {
			writeJSON(w, http.StatusBadRequest, oauthError{"invalid_scope", "a refresh keeps the grant's scope, " + cur.Scope})
			return
		}
	case !errors.Is(err, store.ErrNotFound):
		s.serverError(w, "read a grant", err)
		return
	}
	refresh := secret("mcpr_")
	expires := start.Add(s.cfg.RefreshLifetime)
	if end := s.grantEnd(cur); err == nil && end.Before(expires) {
		expires = end // never past the grant's lifetime
	}
	g, err := s.cfg.Store.RotateOAuthRefresh(r.Context(), old, hash(refresh), start.UTC(), expires.UTC())
	switch {
	case errors.Is(err, store.ErrReused):
		s.reused(w, "refresh", "refresh token", g.ID, g.Subject, g.Role, start)
		return
	case errors.Is(err, store.ErrRevoked):
		invalidGrant(w, "the grant is revoked")
		return
	case errors.Is(err, store.ErrExpired):
		invalidGrant(w, "the refresh token has expired")
		return
	case errors.Is(err, store.ErrNotFound):
		invalidGrant(w, "unknown refresh token")
		return
	case err != nil:
		s.serverError(w, "rotate a refresh token", err)
		return
	}
	s.audit("refresh", g.Subject, g.ID, g.Role, "ok", start)
	s.answerTokens(w, g, refresh, start)
}

func (s *Server) answerTokens(w http.ResponseWriter, g store.OAuthGrant, refresh string, now time.Time) {
	access, err := s.issueAccess(g, now)
	if err != nil {
		s.serverError(w, "sign an access token", err)
		return
	}
	w.Header().Set("Pragma", "no-cache")
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token":  access,
		"token_type":    "Bearer",
		"expires_in":    int(s.cfg.AccessLifetime / time.Second),
		"refresh_token": refresh,
		"scope":         g.Scope,
	})
}

func (s *Server) serverError(w http.ResponseWriter, what string, err error) {
	s.log.Error("authserver: "+what, "err", err)
	writeJSON(w, http.StatusInternalServerError, oauthError{"server_error", "the authorization server could not " + what})
}

// forget drops a grant from the cache of active ones.
func (s *Server) forget(id string) {
	s.mu.Lock()
	delete(s.active, id)
	s.mu.Unlock()
}

// serveRevoke revokes the grant a refresh or access token of it names
// (RFC 7009). Only the client the token was issued to may revoke it
// (§2.1): a public client names itself with client_id, and a token of
// another client is refused as invalid_grant (RFC 6749 §5.2) with the
// grant untouched. An unknown token is answered 200, as the RFC asks.
func (s *Server) serveRevoke(w http.ResponseWriter, r *http.Request) {
	start := s.cfg.Now()
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, oauthError{"invalid_request", "the body must be a form of at most 64 KiB"})
		return
	}
	if _, _, basic := r.BasicAuth(); basic {
		writeJSON(w, http.StatusUnauthorized, oauthError{"invalid_client", "only public clients are served: no client authentication"})
		return
	}
	client := r.PostForm.Get("client_id")
	if client == "" {
		writeJSON(w, http.StatusBadRequest, oauthError{"invalid_request", "client_id names the client the token was issued to"})
		return
	}
	tok := r.PostForm.Get("token")
	var g struct{ id, client, subject, role string }
	if found, err := s.cfg.Store.OAuthGrantByRefresh(r.Context(), hash(tok)); err == nil {
		g.id, g.client, g.subject, g.role = found.ID, found.ClientID, found.Subject, found.Role
	} else {
		var c accessClaims
		if _, err := jwt.ParseWithClaims(tok, &c, func(*jwt.Token) (any, error) { return s.cfg.Key, nil },
			jwt.WithValidMethods([]string{"HS256"}), jwt.WithIssuer(s.cfg.Issuer)); err == nil {
			g.id, g.client, g.subject, g.role = c.Grant, c.ClientID, c.Subject, c.Role
		}
	}
	if g.id == "" {
		w.WriteHeader(http.StatusOK)
		return
	}
	if g.client != client {
		s.audit("revoke", g.subject, g.id, g.role, "forbidden", start)
		invalidGrant(w, "the token was issued to another client")
		return
	}
	if err := s.Revoke(r.Context(), g.id); err != nil {
		s.serverError(w, "revoke a grant", err)
		return
	}
	s.audit("revoke", g.subject, g.id, g.role, "ok", start)
	w.WriteHeader(http.StatusOK)
}
