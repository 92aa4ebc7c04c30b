// credentials.go is the console's My credentials page: each person, of
// any role, stores their own key for the per_user backends that take one,
// sees whether one is stored and since when, and deletes it. A stored key
// is never shown again, to them or to an admin. For the per_user backends
// each person authorizes themselves, they begin the authorization here,
// see how theirs stands, and revoke it.

package admin

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/mcpgate/mcpgate/internal/auth/personal"
	"github.com/mcpgate/mcpgate/internal/store"
)

// personalPage is the My credentials page.
const personalPage = "/admin/credentials"

// personOK reports whether the console has pages for people who are not
// admins: a backend takes each person's own credential.
func (h *Handler) personOK(ctx context.Context) bool {
	rows, err := h.src.MyCredentials(ctx, "")
	return err == nil && len(rows) > 0
}

func (h *Handler) credentials(w http.ResponseWriter, r *http.Request, c caller) {
	h.credentialsPage(w, r, c, http.StatusOK, h.takeFlash(w, r), "")
}

func (h *Handler) credentialsPage(w http.ResponseWriter, r *http.Request, c caller, status int, flash, why string) {
	rows, err := h.src.MyCredentials(r.Context(), c.id.Budget())
	if err != nil {
		h.log.Error("admin: credentials not listed", "err", err)
		status, why = http.StatusInternalServerError, "Your credentials could not be listed."
	}
	v := view{Title: "My credentials", Nav: "credentials", Flash: flash, Error: why, Data: rows}
	h.render(w, status, "credentials", *v.from(c))
}

// backendOf is the posted backend when it is one of the page's.
func (h *Handler) backendOf(r *http.Request, c caller) (string, bool) {
	name := r.PostFormValue("backend")
	rows, err := h.src.MyCredentials(r.Context(), c.id.Budget())
	return name, err == nil && slices.ContainsFunc(rows, func(row CredentialRow) bool { return row.Backend == name })
}

func (h *Handler) setCredential(w http.ResponseWriter, r *http.Request, c caller) {
	name, ok := h.backendOf(r, c)
	if !ok {
		h.credentialsPage(w, r, c, http.StatusBadRequest, "", "Choose one of the backends below.")
		return
	}
	value := strings.TrimSpace(r.PostFormValue("value"))
	switch err := h.src.SetMyCredential(r.Context(), c.id, name, value); {
	case errors.Is(err, personal.ErrBadValue):
		h.credentialsPage(w, r, c, http.StatusBadRequest, "", "Not stored: a credential is 1 to 8192 printable characters, on one line.")
		return
	case err != nil:
		h.log.Error("admin: credential not stored", "backend", name, "err", err)
		h.credentialsPage(w, r, c, http.StatusInternalServerError, "", "Not stored: the store failed; try again.")
		return
	}
	h.setFlash(w, r, "Stored your credential for "+name+". Your next call to it uses it; it is not shown again.")
	http.Redirect(w, r, personalPage, http.StatusSeeOther)
}

func (h *Handler) deleteCredential(w http.ResponseWriter, r *http.Request, c caller) {
	name, ok := h.backendOf(r, c)
	if !ok {
		h.credentialsPage(w, r, c, http.StatusBadRequest, "", "Choose one of the backends below.")
		return
	}
	switch err := h.src.DeleteMyCredential(r.Context(), c.id, name); {
	case errors.Is(err, store.ErrNotFound):
		h.setFlash(w, r, "You had no credential stored for "+name+".")
	case err != nil:
		h.log.Error("admin: credential not deleted", "backend", name, "err", err)
		h.credentialsPage(w, r, c, http.StatusInternalServerError, "", "Not deleted: the store failed; try again.")
		return
	default:
		h.setFlash(w, r, "Deleted your credential for "+name+". Calls to it are refused until you store another.")
	}
	http.Redirect(w, r, personalPage, http.StatusSeeOther)
}

// authorizeMine sends the person's browser to their authorization of
// backend ?backend= at its authorization server, bound to this browser:
// the callback completes it from here only.
func (h *Handler) authorizeMine(w http.ResponseWriter, r *http.Request, c caller) {
	name := r.URL.Query().Get("backend")
	rows, err := h.src.MyCredentials(r.Context(), "")
	if err != nil || !slices.ContainsFunc(rows, func(row CredentialRow) bool { return row.Backend == name && row.Authorize }) {
		h.credentialsPage(w, r, c, http.StatusNotFound, "", "No backend called "+name+" is one you authorize yourself.")
		return
	}
	link, err := h.src.AuthorizeMine(r.Context(), c.id, name)
	switch {
	case err != nil:
		h.log.Warn("admin: a person's authorization not begun", "backend", name, "err", err)
		h.credentialsPage(w, r, c, http.StatusBadGateway, "", "Backend "+name+"'s authorization could not be begun: "+err.Error())
	case link == "":
		h.setFlash(w, r, "You have authorized "+name+" already. Revoke it below to authorize it anew.")
		http.Redirect(w, r, personalPage, http.StatusSeeOther)
	case !h.bindAuthorization(w, r, link, authzBinding{Subject: c.id.Subject, Principal: c.id.Budget()}):
		h.credentialsPage(w, r, c, http.StatusBadGateway, "", "Backend "+name+"'s authorization could not be begun.")
	default:
		h.log.Info("admin: a person's backend authorization started", "backend", name, "for", c.id.Budget())
	}
}

// forgetMine drops the person's authorization of the posted backend.
func (h *Handler) forgetMine(w http.ResponseWriter, r *http.Request, c caller) {
	name, ok := h.backendOf(r, c)
	if !ok {
		h.credentialsPage(w, r, c, http.StatusBadRequest, "", "Choose one of the backends below.")
		return
	}
	had, err := h.src.ForgetMine(r.Context(), c.id, name)
	switch {
	case err != nil && !had:
		h.log.Error("admin: a person's authorization not forgotten", "backend", name, "err", err)
		h.credentialsPage(w, r, c, http.StatusInternalServerError, "", "Not revoked: "+err.Error())
		return
	case err != nil:
		h.setFlash(w, r, "Revoked your authorization of "+name+" here; its authorization server could not be told ("+err.Error()+"), so revoke the gateway's access there too.")
	case had:
		h.setFlash(w, r, "Revoked your authorization of "+name+", here and at its authorization server. Calls to it are refused until you authorize it again.")
	default:
		h.setFlash(w, r, "You had not authorized "+name+".")
	}
	http.Redirect(w, r, personalPage, http.StatusSeeOther)
}
