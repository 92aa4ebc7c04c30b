// instructions.go relays the backends' instructions (what a server tells a
// model about using its tools) to the gateway's clients, who used to get
// none. With one backend they are its own. With several, each comes under
// its name, in the configuration's order, so that a model reading "use
// search__query for…" knows which tools are meant.

package catalogue

import (
	"cmp"
	"slices"
	"strings"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// Instructions joins the instructions of the backends that are up and that
// serve the caller at least one entry they see. Pass it as
// mcp.Options.InstructionsFrom. A backend's instructions describe its
// tools, which a caller who may see none of them has no business reading.
func (c *Claims) Instructions(shown func(backend string) bool) string {
	c.mu.Lock()
	type said struct {
		name, text string
		rank       int
	}
	var all []said
	for name, b := range c.live {
		if b.instructions != "" {
			all = append(all, said{name, b.instructions, c.rankOf(name)})
		}
	}
	one := len(c.live) == 1
	c.mu.Unlock()
	all = slices.DeleteFunc(all, func(s said) bool { return !shown(s.name) })
	if len(all) == 0 {
		return ""
	}
	if one {
		return all[0].text
	}
	slices.SortFunc(all, func(a, b said) int { return cmp.Or(cmp.Compare(a.rank, b.rank), cmp.Compare(a.name, b.name)) })
	var sb strings.Builder
	for i, s := range all {
		if i > 0 {
			sb.WriteString("\n\n")
		}
		sb.WriteString("## " + s.name + "\n\n" + strings.TrimSpace(s.text))
	}
	return sb.String()
}

// instructionsOf reads the instructions of an initialize result.
func instructionsOf(initResult []byte) string {
	s, _ := jsonrpc.LookupString(initResult, "instructions")
	return s
}
