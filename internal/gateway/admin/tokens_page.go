// tokens_page.go is the console's Tokens page: service tokens made and
// revoked, and the built-in server's grants revoked.

package admin

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/mcpgate/mcpgate/internal/config"
	"github.com/mcpgate/mcpgate/internal/store"
)

// tokensData is the tokens page; Created is a token made by this very
// request, its secret shown this once.
type tokensData struct {
	Tokens  []tokenRow
	Roles   []string
	Created *created
	// Grants are the built-in authorization server's (OAuth shown: it
	// runs).
	OAuth  bool
	Grants []grantRow
}

type grantRow struct {
	store.OAuthGrant
	Status string
}

type tokenRow struct {
	store.Token
	Status string
}

type created struct {
	Secret string
	Token  store.Token
}

func (h *Handler) tokens(w http.ResponseWriter, r *http.Request, c caller) {
	h.tokensPage(w, r, c, http.StatusOK, nil, h.takeFlash(w, r), "")
}

func (h *Handler) tokensPage(w http.ResponseWriter, r *http.Request, c caller, status int, made *created, flash, why string) {
	now := h.now()
	var rows []tokenRow
	for _, t := range h.src.Tokens(r.Context()) {
		st := "active"
		switch {
		case !t.RevokedAt.IsZero():
			st = "revoked"
		case !t.Active(now):
			st = "expired"
		}
		t.Hash = nil // never to a page
		rows = append(rows, tokenRow{Token: t, Status: st})
	}
	data := tokensData{Tokens: rows, Roles: h.src.Roles(), Created: made}
	var grants []store.OAuthGrant
	if grants, data.OAuth = h.src.Grants(r.Context()); data.OAuth {
		for _, g := range grants {
			st := "active"
			switch {
			case !g.RevokedAt.IsZero():
				st = "revoked"
			case !g.Active(now):
				st = "expired"
			}
			g.RefreshHash, g.PreviousHash = nil, nil // never to a page
			data.Grants = append(data.Grants, grantRow{OAuthGrant: g, Status: st})
		}
	}
	v := view{Title: "Tokens", Nav: "tokens", Flash: flash, Error: why, Data: data}
	h.render(w, status, "tokens", *v.from(c))
}

func (h *Handler) createToken(w http.ResponseWriter, r *http.Request, c caller) {
	name := strings.TrimSpace(r.PostFormValue("name"))
	role := r.PostFormValue("role")
	var expires time.Time
	switch {
	case name == "":
		h.tokensPage(w, r, c, http.StatusBadRequest, nil, "", "A token needs a name (what it is for).")
		return
	case !slices.Contains(h.src.Roles(), role):
		h.tokensPage(w, r, c, http.StatusBadRequest, nil, "", "Choose one of the roles.")
		return
	}
	if s := strings.TrimSpace(r.PostFormValue("expires")); s != "" {
		d, err := config.ParseLifetime(s)
		if err != nil {
			h.tokensPage(w, r, c, http.StatusBadRequest, nil, "", "Expires: "+err.Error()+".")
			return
		}
		expires = h.now().Add(d)
	}
	secret, t, err := h.src.CreateToken(r.Context(), name, role, expires)
	if err != nil {
		h.log.Error("admin: token not created", "err", err)
		h.tokensPage(w, r, c, http.StatusInternalServerError, nil, "", "The token was not created.")
		return
	}
	h.log.Info("admin: token created", "token_id", t.ID, "role", t.Role, "by", c.id.Subject)
	h.tokensPage(w, r, c, http.StatusOK, &created{Secret: secret, Token: t}, "", "")
}

func (h *Handler) revokeToken(w http.ResponseWriter, r *http.Request, c caller) {
	id := r.PostFormValue("id")
	if err := h.src.RevokeToken(r.Context(), id); err != nil {
		h.notRevoked(w, r, c, "token", id, err)
		return
	}
	h.log.Info("admin: token revoked", "token_id", id, "by", c.id.Subject)
	if id == c.id.TokenID && c.csrf != "" {
		clearCookie(w) // the session's own token: it ends here
		http.Redirect(w, r, "/admin/login", http.StatusSeeOther)
		return
	}
	h.setFlash(w, r, "Revoked "+id+".")
	http.Redirect(w, r, "/admin/tokens", http.StatusSeeOther)
}

// notRevoked shows the Tokens page saying why a token or a grant (what)
// was not revoked: there is none of that id, or the store failed.
func (h *Handler) notRevoked(w http.ResponseWriter, r *http.Request, c caller, what, id string, err error) {
	status, why := http.StatusInternalServerError, "The "+what+" was not revoked."
	if errors.Is(err, store.ErrNotFound) {
		status, why = http.StatusNotFound, "There is no "+what+" "+id+"."
	}
	h.tokensPage(w, r, c, status, nil, "", why)
}

func (h *Handler) revokeGrant(w http.ResponseWriter, r *http.Request, c caller) {
	id := r.PostFormValue("id")
	if err := h.src.RevokeGrant(r.Context(), id, c.id); err != nil {
		h.notRevoked(w, r, c, "grant", id, err)
		return
	}
	h.log.Info("admin: grant revoked", "grant", id, "by", c.id.Subject)
	h.setFlash(w, r, "Revoked grant "+id+".")
	http.Redirect(w, r, "/admin/tokens", http.StatusSeeOther)
}
