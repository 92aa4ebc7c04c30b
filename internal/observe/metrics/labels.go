// labels.go keeps label values bounded and printable: every series costs
// memory in the gateway and in every Prometheus that scrapes it, and a
// value a caller or a backend chooses must not be able to mint series
// without end.

package metrics

import (
	"strconv"
	"sync"

	"github.com/mcpgate/mcpgate/internal/textcut"
)

const (
	// maxLabelBytes cuts a catalogued name or a role to a readable size.
	maxLabelBytes = 128
	// maxCodes bounds the distinct JSON-RPC codes recorded: a backend may
	// answer any integer, and after this many the rest are "other".
	maxCodes = 64

	unknown = "unknown"
	other   = "other"
)

// label cuts s to maxLabelBytes on a character boundary and makes it valid
// UTF-8, which Prometheus requires of a label value.
func label(s string) string { return textcut.Valid(s, maxLabelBytes) }

// codeSet admits the first n distinct codes as their own label values.
type codeSet struct {
	mu   sync.Mutex
	max  int
	seen map[int64]string
}

func newCodeSet(n int) *codeSet { return &codeSet{max: n, seen: map[int64]string{}} }

func (c *codeSet) label(code int64) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if l, ok := c.seen[code]; ok {
		return l
	}
	if len(c.seen) >= c.max {
		return other
	}
	l := errorCode(code)
	c.seen[code] = l
	return l
}

// errorCode is the label of a JSON-RPC code.
func errorCode(code int64) string { return strconv.FormatInt(code, 10) }

// onceEach hands out the label of each name once per scrape. Two names cut
// to the same label would fail the whole scrape; the first keeps the
// series.
type onceEach map[string]bool

// first is name's label, and whether it is the first of that label.
func (o onceEach) first(name string) (string, bool) {
	l := label(name)
	if o[l] {
		return l, false
	}
	o[l] = true
	return l, true
}
