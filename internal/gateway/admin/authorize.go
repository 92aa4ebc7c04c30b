// authorize.go binds a backend's authorization to the admin's browser that
// asked for it. The link to the backend's authorization server carries the
// state its callback is matched by. Written to the log, it let whoever read
// the log, or was sent the link, complete the authorization with an account
// of their own at the backend. The gateway then acted with that account. An
// admin now opens it from the console: the console sets, on the way, a
// sealed cookie naming the state and the admin, sent back with the callback
// alone, and the callback is refused without it.

package admin

import (
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"net/url"
	"time"
)

// authzCookie carries the binding; it goes to the callback alone.
const authzCookie = "mcpgate_authz"

// authzCallbackPath is the gateway's callback (oauthclient.CallbackPath).
const authzCallbackPath = "/oauth/callback"

// authzFor bounds how long a binding waits for its callback.
const authzFor = 15 * time.Minute

type authzBinding struct {
	State   string `json:"s"`
	Subject string `json:"a"` // who asked
	// Principal is whose own authorization it is (a person's, of a
	// per_user backend); "" for the gateway's, which an admin gives.
	Principal string    `json:"p,omitempty"`
	Until     time.Time `json:"u"`
}

// authorizeBackend sends the admin's browser to the waiting link of
// backend ?name=, with the binding cookie set.
func (h *Handler) authorizeBackend(w http.ResponseWriter, r *http.Request, c caller) {
	name := r.URL.Query().Get("name")
	link := h.src.AuthorizationLink(r.Context(), name)
	if !h.bindAuthorization(w, r, link, authzBinding{Subject: c.id.Subject}) {
		h.render(w, http.StatusNotFound, "refused", view{Title: "Nothing to authorize", Error: "Backend " + name + " waits for no authorization."})
		return
	}
	h.log.Info("admin: backend authorization started", "backend", name, "by", c.id.Subject)
}

// bindAuthorization sends the browser to link, with the cookie that binds
// its state to b set; false, with nothing written, when link has no state.
func (h *Handler) bindAuthorization(w http.ResponseWriter, r *http.Request, link string, b authzBinding) bool {
	u, err := url.Parse(link)
	if link == "" || err != nil || u.Query().Get("state") == "" {
		return false
	}
	b.State, b.Until = u.Query().Get("state"), h.now().Add(authzFor)
	raw, _ := json.Marshal(b)
	v, err := h.sealBytes(raw, authzCookie)
	if err != nil {
		h.refuse(w, r, http.StatusInternalServerError, "The authorization could not be started.")
		return true
	}
	// Lax, not Strict: the callback is a top-level navigation from the
	// authorization server's site, which a Strict cookie would not follow.
	http.SetCookie(w, &http.Cookie{Name: authzCookie, Value: v, Path: authzCallbackPath, MaxAge: int(authzFor / time.Second),
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: h.secureCookies(r)})
	w.Header().Set("Referrer-Policy", "no-referrer")
	http.Redirect(w, r, link, http.StatusSeeOther)
	return true
}

// AuthorizationAsked reports whether the callback r, of state, comes from
// the browser that opened the authorization from the console: an admin's,
// or a person's for their own. It carries the sealed binding of that
// state, not yet expired. Who asked is returned for the log, and whose
// authorization it is ("": the gateway's).
func (h *Handler) AuthorizationAsked(r *http.Request, state string) (subject, principal string, ok bool) {
	ck, err := r.Cookie(authzCookie)
	if err != nil {
		return "", "", false
	}
	plain, ok := h.openBytes(ck.Value, authzCookie)
	var b authzBinding
	if !ok || json.Unmarshal(plain, &b) != nil || !h.now().Before(b.Until) ||
		subtle.ConstantTimeCompare([]byte(b.State), []byte(state)) != 1 {
		return "", "", false
	}
	return b.Subject, b.Principal, true
}
