// history.go keeps the record of full runs: each one's ratios, with the
// commit it measured, appended to docs/benchmarks.json, and a small chart
// of them (an SVG) beside it, so that a regression shows at a glance in
// docs/benchmarks.md.

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"
)

// history is docs/benchmarks.json: every full run, oldest first.
type history struct {
	Runs []historyRun `json:"runs"`
}

// historyRun is one full run: when, on what, of which commit, its ratios.
type historyRun struct {
	Commit  string    `json:"commit"`
	Started time.Time `json:"started"`
	Command string    `json:"command"`
	Machine machine   `json:"machine"`
	Ratios  []ratio   `json:"ratios"`
}

// charted are the ratios the chart draws, each with its colour.
var charted = []struct{ prefix, colour string }{
	{"mcpgate-http / null-relay calls/s (c=16)", "#1f77b4"},
	{"mcpgate-http-2026 / mcpgate-http", "#2ca02c"},
	{"mcpgate-pg-redis / mcpgate-http", "#d62728"},
	{"mcpgate-http / mcpgate-http-audit-async", "#9467bd"},
	{"Postgres pair COPY", "#8c564b"},
}

// appendHistory adds r to the history at path and writes the chart at
// svgPath. A file in the older form (one run's whole results) becomes the
// history's first run.
func appendHistory(path, svgPath string, r *results) error {
	var h history
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return err
	default:
		if err := json.Unmarshal(b, &h); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if h.Runs == nil {
			var old results
			if json.Unmarshal(b, &old) == nil && len(old.Ratios) > 0 {
				h.Runs = append(h.Runs, historyRun{Commit: "earlier", Started: old.Started, Command: old.Command,
					Machine: old.Machine, Ratios: old.Ratios})
			}
		}
	}
	h.Runs = append(h.Runs, historyRun{Commit: commitID(), Started: r.Started, Command: r.Command, Machine: r.Machine, Ratios: r.Ratios})
	js, err := json.MarshalIndent(h, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(js, '\n'), 0o644); err != nil {
		return err
	}
	return os.WriteFile(svgPath, []byte(h.chart()), 0o644)
}

// commitID is the commit measured, marked when the tree had changes.
func commitID() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "(unknown)"
	}
	id := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
		id += "-dirty"
	}
	return id
}

// chart draws each charted ratio across the runs, with its target as a
// dashed line of the same colour.
func (h history) chart() string {
	const w, ht, left, right, top, bottom = 720, 300, 48, 250, 16, 40
	maxY := 1.2
	for _, run := range h.Runs {
		for _, x := range run.Ratios {
			if chartedColour(x.Name) != "" && x.Value > maxY && x.Unit == "×" {
				maxY = x.Value
			}
		}
	}
	pw, ph := float64(w-left-right), float64(ht-top-bottom)
	px := func(i int) float64 {
		if len(h.Runs) < 2 {
			return float64(left) + pw/2
		}
		return float64(left) + pw*float64(i)/float64(len(h.Runs)-1)
	}
	py := func(v float64) float64 { return float64(top) + ph*(1-v/maxY) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">`+"\n", w, ht)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", w, ht)
	for v := 0.0; v <= maxY+1e-9; v += 0.2 {
		fmt.Fprintf(&b, `<line x1="%d" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#ddd"/><text x="%d" y="%.1f" text-anchor="end">%.1f×</text>`+"\n",
			left, float64(left)+pw, py(v), py(v), left-4, py(v)+4, v)
	}
	for i, run := range h.Runs {
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", px(i), ht-bottom+14, xmlText(run.Commit))
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" fill="#666">%s</text>`+"\n", px(i), ht-bottom+28, run.Started.Format("01-02"))
	}
	for k, c := range charted {
		var pts []string
		var target float64
		for i, run := range h.Runs {
			x, ok := run.charted(c.prefix)
			if !ok {
				continue
			}
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(i), py(x.Value)))
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"><title>%s: %.2f×</title></circle>`+"\n",
				px(i), py(x.Value), c.colour, xmlText(x.Name), x.Value)
			if t, ok := strings.CutPrefix(x.Target, "≥ "); ok {
				fmt.Sscanf(t, "%g", &target)
			}
		}
		if len(pts) > 1 {
			fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", c.colour, strings.Join(pts, " "))
		}
		if target > 0 {
			fmt.Fprintf(&b, `<line x1="%d" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" stroke-dasharray="4 3"/>`+"\n",
				left, float64(left)+pw, py(target), py(target), c.colour)
		}
		label := c.prefix
		if target > 0 {
			label += fmt.Sprintf(" (target %g×)", target)
		}
		y := top + 12 + 30*k
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="10" height="10" fill="%s"/>`+"\n", w-right+10, y-9, c.colour)
		for j, line := range wrapWords(label, 34) {
			fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text>`+"\n", w-right+24, y+12*j, xmlText(line))
		}
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// charted is the run's figure a series of the chart draws: of those
// named by prefix, the one with a target (a figure may also be given
// measured another way, as a reference), else the first.
func (run historyRun) charted(prefix string) (ratio, bool) {
	var found []ratio
	for _, x := range run.Ratios {
		if strings.HasPrefix(x.Name, prefix) && !x.Absent && x.Unit == "×" {
			found = append(found, x)
		}
	}
	if len(found) == 0 {
		return ratio{}, false
	}
	if i := slices.IndexFunc(found, func(x ratio) bool { return strings.HasPrefix(x.Target, "≥ ") }); i >= 0 {
		return found[i], true
	}
	return found[0], true
}

func chartedColour(name string) string {
	i := slices.IndexFunc(charted, func(c struct{ prefix, colour string }) bool { return strings.HasPrefix(name, c.prefix) })
	if i < 0 {
		return ""
	}
	return charted[i].colour
}

// wrapWords cuts s into lines of at most n bytes, between words.
func wrapWords(s string, n int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		if line != "" && len(line)+1+len(w) > n {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	return append(lines, line)
}

func xmlText(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
