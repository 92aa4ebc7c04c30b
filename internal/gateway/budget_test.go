// budget_test.go pins that a principal has one budget however many
// credentials it holds: the grants one person makes with one service token
// at the built-in server spend the token's rate bucket and count against
// its cap on sessions, and so does the token itself.

package gateway_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// budgetGateway is a gateway with the built-in server and extra
// configuration, ada's service token, and three grants she made with it.
func budgetGateway(t *testing.T, extra string) (e *gwEnv, ada string, grants []string) {
	t.Helper()
	e = gwStart(t, "auth:\n  oauth:\n    resource: "+oauthResource+"\n    builtin: true\n"+extra)
	ada, _ = e.token("ada", "editor")
	for _, name := range []string{"client a", "client b", "client c"} {
		grants = append(grants, builtinGrant(t, e, ada, name, "editor").AccessToken)
	}
	return e, ada, grants
}

func TestOnePrincipalOneBudget(t *testing.T) {
	t.Run("three grants and their token share one burst", func(t *testing.T) {
		e, ada, grants := budgetGateway(t, "rate_limits:\n  entries:\n    - {kind: tool, name: \"expensive_*\", rate: 0.001, burst: 3}\n")
		var admitted, limited int
		for _, cred := range append(grants, ada) {
			_, err := gwCallTool(testkit.Context(t), e.dial(gwStreamable, gwBearer(cred)), gwToolExpensive, nil)
			if err == nil {
				admitted++
				continue
			}
			gwWantRefusal(t, "a call beyond the principal's burst", err, jsonrpc.CodeRateLimited, "rate_limited")
			limited++
		}
		if admitted != 3 || limited != 1 {
			t.Errorf("calls through three grants and their token: %d admitted, %d limited; want the one burst of 3", admitted, limited)
		}
	})
	t.Run("the fourth session is refused whichever credential asks", func(t *testing.T) {
		e, ada, grants := budgetGateway(t, "http: {max_sessions_per_identity: 3}\n")
		for i, g := range grants {
			if rep := e.do(gwRequest{method: http.MethodPost, path: "/mcp", auth: gwBearer(g), body: gwInitializeBody}); rep.status != http.StatusOK {
				t.Fatalf("session %d: %d %s", i+1, rep.status, rep.body)
			}
		}
		for i, cred := range append(grants, ada) {
			rep := e.do(gwRequest{method: http.MethodPost, path: "/mcp", auth: gwBearer(cred), body: gwInitializeBody})
			if rep.status != http.StatusTooManyRequests || !strings.Contains(string(rep.body), "too many sessions") {
				t.Errorf("a fourth session asked by credential %d: %d %s, want 429", i+1, rep.status, rep.body)
			}
		}
		bob, _ := e.token("bob", "editor")
		if rep := e.do(gwRequest{method: http.MethodPost, path: "/mcp", auth: gwBearer(bob), body: gwInitializeBody}); rep.status != http.StatusOK {
			t.Errorf("another person's session: %d", rep.status)
		}
	})
}
