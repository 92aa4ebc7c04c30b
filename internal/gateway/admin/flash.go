// flash.go carries a change's status message to the page it redirects to,
// in a sealed cookie of its own. The message used to ride in the query
// (/admin/?done=…), so that anyone could send an admin a link to the
// console that showed a message of their choosing in the console's own
// voice ("Token revoked: now paste it at evil.example").

package admin

import "net/http"

// flashCookie holds the sealed message for the next page shown.
const flashCookie = "mcpgate_flash"

// setFlash keeps msg for the next page.
func (h *Handler) setFlash(w http.ResponseWriter, r *http.Request, msg string) {
	v, err := h.sealBytes([]byte(msg), flashCookie)
	if err != nil {
		return
	}
	http.SetCookie(w, &http.Cookie{Name: flashCookie, Value: v, Path: "/admin", MaxAge: 60,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: h.secureCookies(r)})
}

// takeFlash is the message kept for this page ("" for none), once.
func (h *Handler) takeFlash(w http.ResponseWriter, r *http.Request) string {
	ck, err := r.Cookie(flashCookie)
	if err != nil {
		return ""
	}
	http.SetCookie(w, &http.Cookie{Name: flashCookie, Value: "", Path: "/admin", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: h.secureCookies(r)})
	msg, ok := h.openBytes(ck.Value, flashCookie)
	if !ok {
		return ""
	}
	return string(msg)
}
