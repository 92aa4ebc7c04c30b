// credentials.go is the console's My credentials page: each person, of
// any role, stores their own key for the per_user backends that take one,
// sees whether one is stored and since when, and deletes it. A stored key
// is never shown again, to them or to an admin.

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
