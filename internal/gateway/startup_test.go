// startup_test.go pins the startup wait (startup.go): a client that asks
// for the catalogue while a backend is still starting gets its tools, not
// an empty list; /readyz says "starting" meanwhile; startup_wait bounds the
// wait; and a backend that fails at once holds nobody.

package gateway_test

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/testkit"
)

func suSlowBackend(name, delay string) string {
	return "backends:\n  - name: " + name + "\n    kind: stdio\n    command: [\"" + os.Args[0] + "\", \"" + name + "\", \"" + delay + "\"]\n" +
		"    env_from: {" + bkChildEnv + ": SU_ROLE}\n"
}

func suListTools(t *testing.T, base string) (string, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18") // stateless: the list without a session
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return b.String(), time.Since(start)
}

func TestClientsThatAskAtOnceSeeTheCatalogueOfABackendStillStarting(t *testing.T) {
	testkit.LeakCheck(t)
	t.Setenv("SU_ROLE", "slow-start")
	base, _ := bkGateway(t, "http: {stateless: true}\n"+suSlowBackend("slow", "1s"))
	if _, _, r := bkReadyz(t, base); !r.Starting {
		t.Errorf("/readyz while the backend starts: starting = false")
	}
	list, _ := suListTools(t, base)
	if !strings.Contains(list, "slow__hello") {
		t.Fatalf("tools/list asked while the backend started: %s", list)
	}
	if _, _, r := bkReadyz(t, base); r.Starting {
		t.Error("/readyz still says starting once the backend is up")
	}
}

func TestStartupWaitBoundsTheWait(t *testing.T) {
	testkit.LeakCheck(t)
	t.Setenv("SU_ROLE", "slow-start")
	base, _ := bkGateway(t, "startup_wait: 200ms\nhttp: {stateless: true}\n"+suSlowBackend("slower", "1m"))
	list, took := suListTools(t, base)
	if strings.Contains(list, "slower__hello") || !strings.Contains(list, `"tools"`) {
		t.Fatalf("tools/list past the wait: %s", list)
	}
	if took > 30*time.Second {
		t.Errorf("the list took %v: startup_wait 200ms did not bound it", took)
	}
	if _, _, r := bkReadyz(t, base); r.Starting {
		t.Error("/readyz says starting after startup_wait")
	}
}

func TestABackendThatFailsAtOnceHoldsNobody(t *testing.T) {
	testkit.LeakCheck(t)
	base, _ := bkGateway(t, "http: {stateless: true}\nbackends:\n  - {name: gone, kind: stdio, command: [/nonexistent/mcp-server]}\n")
	list, took := suListTools(t, base)
	if !strings.Contains(list, `"tools"`) || took > 5*time.Second {
		t.Errorf("with a backend that cannot start, tools/list took %v: %s", took, list)
	}
}
