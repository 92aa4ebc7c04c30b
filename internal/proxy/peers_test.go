// peers_test.go runs the upstream against the reference server
// (@modelcontextprotocol/server-everything, Node) rather than our own: over
// stdio as a supervised program fed secrets, and over Streamable HTTP at
// /mcp on $PORT, the way a container-contract program serves it.

package proxy

import (
	"encoding/json"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgate/mcpgate/internal/peers"
	"github.com/mcpgate/mcpgate/internal/upstream"
)

// everythingWorks lists the tools and runs echo.
func everythingWorks(t *testing.T, u *Upstream) {
	t.Helper()
	ctx := testCtx(t)
	res, rpcErr, err := u.Exchange(ctx, "tools/list", json.RawMessage("null"))
	if err != nil || rpcErr != nil || !strings.Contains(string(res), `"get-env"`) {
		t.Fatalf("tools/list: %.200s, %v, %v", res, rpcErr, err)
	}
	if got := toolText(t, call(t, ctx, u, "echo", `{"message":"hi"}`)); got != "Echo: hi" {
		t.Errorf("echo = %q", got)
	}
	_, rpcErr, err = u.Exchange(ctx, "no/such/method", nil)
	if err != nil || rpcErr == nil || rpcErr.Code != -32601 {
		t.Errorf("an unknown method: %v, %v; want the server's -32601", rpcErr, err)
	}
}

func TestServerEverythingOverStdio(t *testing.T) {
	p := peers.Require(t)
	u := newUpstream(t, UpstreamConfig{Kind: upstream.KindStdio, Command: []string{p.Node22, p.ServerEverything, "stdio"}})
	everythingWorks(t, u)

	ctx := testCtx(t)
	if refusal, err := u.FeedSecrets(ctx, map[string]string{"EVERYTHING_TEST_SECRET": "fed-4b7e"}); err != nil || refusal != nil {
		t.Fatalf("FeedSecrets: %s, %v", refusal, err)
	}
	var env map[string]string
	if err := json.Unmarshal([]byte(toolText(t, call(t, ctx, u, "get-env", "{}"))), &env); err != nil {
		t.Fatal(err)
	}
	if env["EVERYTHING_TEST_SECRET"] != "fed-4b7e" {
		t.Errorf("the restarted server's environment lacks the secret")
	}
	everythingWorks(t, u)
}

func TestServerEverythingAsAContractProgram(t *testing.T) {
	port := startEverythingPort(t)
	u := newUpstream(t, UpstreamConfig{Kind: upstream.KindContract, URL: ContractURL(port)})
	everythingWorks(t, u)
}

// watchFor is a process's stderr: seen closes once phrase was written.
type watchFor struct {
	phrase string
	seen   chan struct{}
	mu     sync.Mutex
	text   strings.Builder
}

func (w *watchFor) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.text.Len() < 64<<10 {
		w.text.Write(p)
		if strings.Contains(w.text.String(), w.phrase) {
			select {
			case <-w.seen:
			default:
				close(w.seen)
			}
		}
	}
	return len(p), nil
}

func freePort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}
