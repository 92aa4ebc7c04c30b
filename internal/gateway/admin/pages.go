// pages.go renders the console's pages and takes its forms.

package admin

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpgate/mcpgate/internal/look"
	"github.com/mcpgate/mcpgate/internal/observe/metrics"
	"github.com/mcpgate/mcpgate/internal/store"
	"github.com/mcpgate/mcpgate/mcp"
)

//go:embed templates/*.html
var templateFiles embed.FS

// pageNames are the pages, each its own template set over the layout.
var pageNames = []string{"login", "overview", "catalogue", "changes", "try", "sessions", "audit", "tokens", "refused", "credentials", "policy"}

type pages struct{ sets map[string]*template.Template }

func parsePages() (*pages, error) {
	funcs := template.FuncMap{
		"when": func(t time.Time) string {
			if t.IsZero() {
				return "—"
			}
			return t.UTC().Format("2006-01-02 15:04:05Z")
		},
		"ago":  func(t time.Time) string { return roughly(time.Since(t)) },
		"ms":   func(d time.Duration) string { return millis(d.Seconds()) }, // one way to write a duration, the overview's
		"pct":  func(part, whole float64) string { return percent(part, whole) },
		"num":  func(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) },
		"kind": entryKind,
		// An invisible or bidirectional-control character is shown,
		// never rendered (mcp/suspicious.go).
		"visible": mcp.ShowInvisible,
		"try":     tryLink,
		"style":   look.CSS,
		"chartOf": func(id, label string, c chart) chartView { return chartView{id, label, c} },
		"talliesOf": func(id, head string, rows []metrics.Tally, denials bool) talliesView {
			return talliesView{id, head, rows, denials}
		},
	}
	p := &pages{sets: map[string]*template.Template{}}
	for _, name := range pageNames {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFiles, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("admin: page %s: %w", name, err)
		}
		p.sets[name] = t
	}
	return p, nil
}

// chartView is one chart with its element's id and its spoken label.
type chartView struct {
	ID, Label string
	C         chart
}

// talliesView is one list of the most calls or denials.
type talliesView struct {
	ID, Head string
	Rows     []metrics.Tally
	Denials  bool
}

// view is what every page's layout needs beside the page's own data.
type view struct {
	Title string
	Nav   string // the page, for the navigation
	Nonce string // the CSP nonce of this response's style and script
	CSRF  string // "" for a bearer caller
	Who   string
	// Admin shows the admin's pages in the navigation; Person the pages
	// of one's own.
	Admin, Person bool
	Flash         string
	Error         string
	Data          any
}

// render writes page with data under a CSP that lets run only what this
// response carries.
func (h *Handler) render(w http.ResponseWriter, status int, page string, v view) {
	v.Nonce = randomToken()
	var buf bytes.Buffer
	if err := h.pages.sets[page].ExecuteTemplate(&buf, "layout.html", v); err != nil {
		h.log.Error("admin: page failed", "page", page, "err", err)
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'nonce-"+v.Nonce+"'; script-src 'nonce-"+v.Nonce+
		"'; connect-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// renderPart writes one template of page alone: a fragment a page's
// script puts in place.
func (h *Handler) renderPart(w http.ResponseWriter, page, part string, data any) {
	var buf bytes.Buffer
	if err := h.pages.sets[page].ExecuteTemplate(&buf, part, data); err != nil {
		h.log.Error("admin: part failed", "page", page, "part", part, "err", err)
		http.Error(w, "the part could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(buf.Bytes())
}

func (h *Handler) refuse(w http.ResponseWriter, _ *http.Request, status int, why string) {
	h.render(w, status, "refused", view{Title: http.StatusText(status), Error: why})
}

// refuseView refuses a signed-in caller, with their navigation.
func (h *Handler) refuseView(w http.ResponseWriter, status int, why string, c caller) {
	v := view{Title: http.StatusText(status), Error: why}
	h.render(w, status, "refused", *v.from(c))
}

// from fills in who is signed in, and which pages they have.
func (v *view) from(c caller) *view {
	v.CSRF, v.Who, v.Admin, v.Person = c.csrf, c.id.Subject, c.admin, c.person
	return v
}

func (h *Handler) loginPage(w http.ResponseWriter, r *http.Request) {
	if c, ok := h.session(r); ok {
		to := "/admin/"
		if !h.src.IsAdmin(c.Role) {
			to = personalPage
		}
		http.Redirect(w, r, to, http.StatusSeeOther)
		return
	}
	h.loginForm(w, r, http.StatusOK, "", safeNext(r.URL.Query().Get("next")))
}

func (h *Handler) loginForm(w http.ResponseWriter, _ *http.Request, status int, why, next string) {
	h.render(w, status, "login", view{Title: "Log in", Error: why, Data: next})
}

// overviewData is the backends page.
type overviewData struct {
	Backends []backendRow
	Charts   overviewCharts
	Sessions int
	Fleet    Fleet
}

type backendRow struct {
	BackendRow
	State string
}

func (h *Handler) overview(w http.ResponseWriter, r *http.Request, c caller) {
	charts := newOverviewCharts(h.src.History(h.now(), overviewRange(r)))
	if r.URL.Query().Get("part") == "charts" { // the script's refresh: no table
		h.renderPart(w, "overview", "charts", charts)
		return
	}
	var rows []backendRow
	for _, b := range h.src.Backends(r.Context()) {
		rows = append(rows, backendRow{BackendRow: b, State: stateOf(b)})
	}
	v := view{Title: "Backends", Nav: "overview", Flash: h.takeFlash(w, r),
		Data: overviewData{Backends: rows, Charts: charts, Sessions: len(h.src.Sessions()), Fleet: h.src.Fleet()}}
	h.render(w, http.StatusOK, "overview", *v.from(c))
}

// stateOf is up; starting while its first connection is tried;
// restarting while another is (after it went down, failed, or was
// restarted); down while it waits out its backoff before the next.
func stateOf(b BackendRow) string {
	switch {
	case b.Up:
		return "up"
	case b.Connecting && b.Restarts == 0:
		return "starting"
	case b.Connecting:
		return "restarting"
	}
	return "down"
}

func (h *Handler) restart(w http.ResponseWriter, r *http.Request, c caller) {
	name := r.PostFormValue("name")
	if err := h.src.RestartBackend(name); err != nil {
		h.render(w, http.StatusNotFound, "refused", view{Title: "Not restarted", Error: "Backend " + name + " was not restarted: " + err.Error()})
		return
	}
	h.log.Info("admin: backend restarted", "backend", name, "by", c.id.Subject)
	h.setFlash(w, r, "Restarting "+name+".")
	http.Redirect(w, r, "/admin/", http.StatusSeeOther)
}

// forgetOAuth makes the gateway forget its authorization at a backend.
func (h *Handler) forgetOAuth(w http.ResponseWriter, r *http.Request, c caller) {
	name := r.PostFormValue("name")
	done, err := h.src.ForgetBackendAuthorization(r.Context(), name, c.id)
	if err != nil {
		h.render(w, http.StatusNotFound, "refused", view{Title: "Not forgotten", Error: err.Error()})
		return
	}
	h.log.Info("admin: backend authorization forgotten", "backend", name, "by", c.id.Subject)
	h.setFlash(w, r, done)
	http.Redirect(w, r, "/admin/", http.StatusSeeOther)
}

// catalogueData is the catalogue page: what Role sees.
type catalogueData struct {
	Roles   []string
	Role    string
	Entries []mcp.CatalogueEntry
	Counts  map[string]int
}

func (h *Handler) catalogue(w http.ResponseWriter, r *http.Request, c caller) {
	roles := h.src.Roles()
	role := r.URL.Query().Get("role")
	if !slices.Contains(roles, role) {
		role = roles[0]
	}
	entries := h.src.Catalogue(r.Context(), role)
	counts := map[string]int{}
	for _, e := range entries {
		counts[entryKind(e)]++
	}
	v := view{Title: "Catalogue", Nav: "catalogue", Data: catalogueData{Roles: roles, Role: role, Entries: entries, Counts: counts}}
	h.render(w, http.StatusOK, "catalogue", *v.from(c))
}

func entryKind(e mcp.CatalogueEntry) string {
	if e.Template {
		return "template"
	}
	return string(e.Kind)
}

func (h *Handler) sessions(w http.ResponseWriter, r *http.Request, c caller) {
	v := view{Title: "Sessions", Nav: "sessions", Data: h.src.Sessions()}
	h.render(w, http.StatusOK, "sessions", *v.from(c))
}

// auditData is the audit page: the filters as given, and one page.
type auditData struct {
	Identity, Entry, Outcome, Since, Until string
	Outcomes                               []string
	Page                                   store.AuditPage
	Query                                  string // the filters as a query string, for the next page and the tail
	First                                  bool   // the newest page: the tail may follow it
}

var outcomes = []string{string(mcp.OutcomeOK), string(mcp.OutcomeToolError), string(mcp.OutcomeForbidden),
	string(mcp.OutcomeRateLimited), string(mcp.OutcomeInvalid), string(mcp.OutcomeError)}

// auditQuery reads the filters of r; the times are UTC, as the form says.
func auditQuery(r *http.Request) (store.AuditQuery, auditData, error) {
	q := r.URL.Query()
	d := auditData{Identity: strings.TrimSpace(q.Get("identity")), Entry: strings.TrimSpace(q.Get("entry")),
		Outcome: q.Get("outcome"), Since: q.Get("since"), Until: q.Get("until"), Outcomes: outcomes}
	aq := store.AuditQuery{Identity: d.Identity, Entry: d.Entry, Outcome: d.Outcome, After: q.Get("after")}
	if d.Outcome != "" && !slices.Contains(outcomes, d.Outcome) {
		return aq, d, fmt.Errorf("%q is not an outcome", d.Outcome)
	}
	var err error
	if aq.Since, err = formTime(d.Since); err != nil {
		return aq, d, err
	}
	if aq.Until, err = formTime(d.Until); err != nil {
		return aq, d, err
	}
	keep := url.Values{}
	for _, k := range []string{"identity", "entry", "outcome", "since", "until"} {
		if v := q.Get(k); v != "" {
			keep.Set(k, v)
		}
	}
	d.Query = keep.Encode()
	d.First = aq.After == ""
	return aq, d, nil
}

// formTime reads a datetime-local value (UTC), or RFC 3339.
func formTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{"2006-01-02T15:04", "2006-01-02T15:04:05", time.RFC3339} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a time (YYYY-MM-DDTHH:MM, UTC)", s)
}

func (h *Handler) audit(w http.ResponseWriter, r *http.Request, c caller) {
	aq, d, err := auditQuery(r)
	v := view{Title: "Audit log", Nav: "audit"}
	status := http.StatusOK
	if err == nil {
		d.Page, err = h.src.Audit(r.Context(), aq)
	}
	if err != nil {
		v.Error, status = auditError(err), http.StatusBadRequest
	}
	v.Data = d
	h.render(w, status, "audit", *v.from(c))
}

func auditError(err error) string {
	if errors.Is(err, store.ErrBadCursor) {
		return "This page link is not one the console gave."
	}
	return "The filter was not understood: " + err.Error()
}

// auditTail answers the live tail: the rows written after head, as
// escaped HTML, and the new head. At most a page of them: when more were
// written since head, the newest page comes and skipped says that older
// ones were left out (the page shows where, and links to them).
func (h *Handler) auditTail(w http.ResponseWriter, r *http.Request, _ caller) {
	aq, _, err := auditQuery(r)
	if err != nil {
		http.Error(w, auditError(err), http.StatusBadRequest)
		return
	}
	aq.After, aq.NewerThan, aq.Limit = "", r.URL.Query().Get("head"), store.MaxAuditPage
	var page store.AuditPage
	if aq.NewerThan != "" {
		page, err = h.src.Audit(r.Context(), aq)
	}
	if err != nil {
		http.Error(w, auditError(err), http.StatusBadRequest)
		return
	}
	var rows bytes.Buffer
	if err := h.pages.sets["audit"].ExecuteTemplate(&rows, "rows", page.Records); err != nil {
		http.Error(w, "the rows could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(struct {
		Head    string `json:"head"`
		Rows    string `json:"rows"`
		N       int    `json:"n"`
		Skipped bool   `json:"skipped"`
	}{page.Head, rows.String(), len(page.Records), page.Next != ""})
}

func percent(part, whole float64) string {
	if whole == 0 {
		return "—"
	}
	return strconv.FormatFloat(100*part/whole, 'f', 1, 64) + "%"
}

// roughly is a duration as a person reads an age.
func roughly(d time.Duration) string {
	switch {
	case d < time.Minute:
		return strconv.Itoa(int(d.Seconds())) + "s"
	case d < time.Hour:
		return strconv.Itoa(int(d.Minutes())) + "m"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d.Hours())) + "h"
	}
	return strconv.Itoa(int(d.Hours()/24)) + "d"
}
