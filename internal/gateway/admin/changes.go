// changes.go is the console's Changes page: each tool or prompt whose
// definition a backend changed from the approved one (catalogue.pinning).
// It is shown beside the approved definition, line by line, every
// character escaped and every invisible one written out. Buttons approve
// or reject the change.

package admin

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/mcpgate/mcpgate/internal/store"
	"github.com/mcpgate/mcpgate/mcp"
)

// change is one pending change as the page shows it.
type change struct {
	store.Pin
	Lines []diffLine
	Flags []string // of the changed definition (mcp.Suspicious)
}

// diffLine is one row of the side-by-side diff: the approved definition's
// line on the left, the changed one's on the right ("" where a side has
// none), and whether the row differs.
type diffLine struct {
	Left, Right string
	Changed     bool
}

func (h *Handler) changes(w http.ResponseWriter, r *http.Request, c caller) {
	h.changesPage(w, r, c, http.StatusOK, "")
}

func (h *Handler) changesPage(w http.ResponseWriter, r *http.Request, c caller, status int, why string) {
	pins, err := h.src.Changes(r.Context())
	if err != nil && why == "" {
		status, why = http.StatusInternalServerError, "The changes could not be read from the store."
	}
	out := make([]change, len(pins))
	for i, p := range pins {
		out[i] = change{Pin: p, Lines: sideBySide(pretty(p.Definition), pretty(p.PendingDefinition)), Flags: mcp.Suspicious(p.PendingDefinition)}
	}
	v := view{Title: "Changes", Nav: "changes", Flash: h.takeFlash(w, r), Error: why, Data: out}
	h.render(w, status, "changes", *v.from(c))
}

// decideChange approves or rejects the change the form names.
func (h *Handler) decideChange(w http.ResponseWriter, r *http.Request, c caller) {
	backend, kind, name, fp := r.PostFormValue("backend"), r.PostFormValue("kind"), r.PostFormValue("name"), r.PostFormValue("fingerprint")
	approve := r.PostFormValue("decision") == "approve"
	err := h.src.DecideChange(r.Context(), backend, kind, name, fp, approve, c.id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		h.changesPage(w, r, c, http.StatusConflict, "That change was decided meanwhile, or changed again: look at it again.")
		return
	case err != nil:
		h.changesPage(w, r, c, http.StatusInternalServerError, "The decision was not recorded.")
		return
	}
	verb := map[bool]string{true: "Approved", false: "Rejected"}[approve]
	h.log.Info("admin: definition change "+strings.ToLower(verb), "backend", backend, "kind", kind, "name", name, "by", c.id.Subject)
	h.setFlash(w, r, verb+" the change of "+kind+" "+name+" of "+backend+".")
	http.Redirect(w, r, "/admin/changes", http.StatusSeeOther)
}

// pretty is def indented, one member a line, keys sorted (so that an
// order changed is no difference) and strings as they read (< not
// \u003c), with every invisible character written out.
func pretty(def json.RawMessage) []string {
	d := json.NewDecoder(bytes.NewReader(def))
	d.UseNumber()
	var v any
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if d.Decode(&v) != nil || enc.Encode(v) != nil {
		b.Reset()
		b.Write(def)
	}
	return strings.Split(mcp.ShowInvisible(strings.TrimSuffix(b.String(), "\n")), "\n")
}

// sideBySide pairs the lines of a and b by their longest common
// subsequence: common lines side by side, the others beside a blank.
func sideBySide(a, b []string) []diffLine {
	n, m := len(a), len(b)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []diffLine
	var gone, came []string // the lines of a change, paired when it ends
	flush := func() {
		for k := 0; k < max(len(gone), len(came)); k++ {
			l := diffLine{Changed: true}
			if k < len(gone) {
				l.Left = gone[k]
			}
			if k < len(came) {
				l.Right = came[k]
			}
			out = append(out, l)
		}
		gone, came = gone[:0], came[:0]
	}
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			flush()
			out = append(out, diffLine{Left: a[i], Right: b[j]})
			i, j = i+1, j+1
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			gone = append(gone, a[i])
			i++
		default:
			came = append(came, b[j])
			j++
		}
	}
	flush()
	return out
}
