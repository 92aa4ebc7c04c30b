// partial_access_test.go pins what the answer for a backend that is down
// may reveal: a caller whose role may see the dead backend's entry hears
// that the backend is unavailable (-32603, data.backend); a caller whose
// role may not gets exactly what a name that never existed gets, so that
// neither the entry nor the backend's state leaks to them.

package gateway_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/config"
	"github.com/mcpgate/mcpgate/internal/gateway"
	"github.com/mcpgate/mcpgate/internal/store/sqlite"
	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// pfAuthGateway runs a gateway with authentication on, relaying the stdio
// backend "vault" (min_role admin), and returns its base URL and a bearer
// token of each role.
func pfAuthGateway(t *testing.T, flag string) (string, map[string]string) {
	t.Helper()
	ctx := context.Background()
	t.Setenv("PF_ROLE", pfRoleStdio)
	cfg, err := config.Parse([]byte(fmt.Sprintf(`listen: 127.0.0.1:0
audit: {disabled: true}
backends:
  - name: vault
    kind: stdio
    command: [%q, vault, %q]
    env_from: {%s: PF_ROLE}
    min_role: admin
`, os.Args[0], flag, bkChildEnv)))
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "mcpgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() }) // after the gateway's close
	gw, err := gateway.New(ctx, cfg, gateway.Options{Store: st, Backend: bkFast,
		Info: mcp.Implementation{Name: "gateway-test", Version: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	base := bkServe(t, gw)
	tokens := map[string]string{}
	for _, role := range []string{"viewer", "admin"} {
		secret, _, err := gw.Tokens().Create(ctx, "pf "+role, role, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		tokens[role] = gwBearer(secret)
	}
	return base, tokens
}

func TestADownBackendsHiddenEntryAnswersAsAnUnknownOne(t *testing.T) {
	testkit.LeakCheck(t)
	flag := filepath.Join(t.TempDir(), "vault-down")
	base, tokens := pfAuthGateway(t, flag)
	bkWaitReady(t, base, http.StatusOK)
	admin := pfConnect(t, base, tokens["admin"])
	viewer := pfConnect(t, base, tokens["viewer"])

	res, err := pfCall(t, admin, "tools/call", `{"name":"vault__pid","arguments":{}}`)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(pfResultText(t, res))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(flag, nil, 0o600); err != nil { // it stays down
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	bkWaitReady(t, base, http.StatusServiceUnavailable)

	// Each call of the dead backend's entries, and the same call naming
	// something that never existed anywhere.
	calls := []struct{ method, gone, never, param string }{
		{"tools/call", "vault__hello", "nothing__hello", `{"name":%q,"arguments":{}}`},
		{"prompts/get", "vault__greet", "nothing__greet", `{"name":%q}`},
		{"resources/read", "vault://doc", "nothing://doc", `{"uri":%q}`},
	}
	for _, c := range calls {
		t.Run(c.method, func(t *testing.T) {
			_, err := pfCall(t, admin, c.method, fmt.Sprintf(c.param, c.gone))
			pfWantUnavailable(t, "admin: "+c.method+" of "+c.gone, err, "vault")

			_, goneErr := pfCall(t, viewer, c.method, fmt.Sprintf(c.param, c.gone))
			_, neverErr := pfCall(t, viewer, c.method, fmt.Sprintf(c.param, c.never))
			var gone, never *jsonrpc.Error
			if !errors.As(goneErr, &gone) || !errors.As(neverErr, &never) {
				t.Fatalf("viewer: got %v and %v, want JSON-RPC errors", goneErr, neverErr)
			}
			want := bytes.ReplaceAll(never.Raw(), []byte(c.never), []byte(c.gone))
			if !bytes.Equal(gone.Raw(), want) {
				t.Errorf("viewer: %s of the hidden dead entry answered\n %s\nwant what a name that never existed gets\n %s", c.method, gone.Raw(), want)
			}
		})
	}
}
