package gateway

import (
	"testing"

	"github.com/mcpgate/mcpgate/internal/config"
	"github.com/mcpgate/mcpgate/internal/policy"
	"github.com/mcpgate/mcpgate/mcp"
)

// A caller's view: their token's rule, else their role's (a custom
// role's own, else its base role's), else catalogue.view.
func TestTheViewIsTheTokensThenTheRolesThenTheDefault(t *testing.T) {
	cfg, err := config.Parse([]byte("roles: {bot: viewer, agent: editor}\ncatalogue:\n  view: compact\n" +
		"  roles: {viewer: full, agent: full, editor: compact}\n  tokens: {tok_big: full, tok_small: compact}\n"))
	if err != nil {
		t.Fatal(err)
	}
	g := &Gateway{cfg: cfg}
	if g.roles, err = policy.NewRoles(cfg.Roles); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id   mcp.Identity
		want mcp.View
	}{
		{mcp.Identity{Role: "admin", TokenID: "tok_x"}, mcp.ViewCompact}, // no rule: the default
		{mcp.Identity{Role: "viewer", TokenID: "tok_x"}, mcp.ViewFull},   // the role's
		{mcp.Identity{Role: "bot", TokenID: "tok_x"}, mcp.ViewFull},      // its base role's
		{mcp.Identity{Role: "agent", TokenID: "tok_x"}, mcp.ViewFull},    // its own over its base's
		{mcp.Identity{Role: "editor", TokenID: "tok_big"}, mcp.ViewFull}, // the token's over the role's
		{mcp.Identity{Role: "viewer", TokenID: "tok_small"}, mcp.ViewCompact},
	} {
		if got := g.viewFor(tc.id); got != tc.want {
			t.Errorf("viewFor(%+v) = %v, want %v", tc.id, got, tc.want)
		}
	}
}
