// sessions_test.go runs the official conformance suite through backends
// configured `session: per-client`. The suite opens a session per scenario
// and never sends DELETE, which is exactly the client that must not leak
// upstream sessions: after the run, the idle timeout must have ended every
// per-client upstream session (each child process, each HTTP session with
// a DELETE), leaving only the shared one.
//
// Every identifier here starts with "ps" so that it cannot collide with the
// other tests of this package.

package gateway_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgate/mcpgate/internal/testkit"
)

// psChildren is the number of live processes whose parent is this one.
func psChildren(t *testing.T) int {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil || len(stats) == 0 {
		t.Skip("no /proc to count child processes in")
	}
	me := strconv.Itoa(os.Getpid())
	n := 0
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // exited meanwhile
		}
		// pid (comm) state ppid …: comm may hold spaces, so cut at its end.
		fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(fields) > 1 && fields[1] == me && fields[0] != "Z" {
			n++
		}
	}
	return n
}

// The conformance suite through a per-client stdio backend: every scenario
// passes, each on a child of its own, and once the suite is gone the idle
// timeout leaves only the shared child running.
func TestConformanceThroughPerClientStdioBackend(t *testing.T) {
	testkit.LeakCheck(t)
	t.Setenv("BK_CHILD_ROLE", "fixture")
	before := psChildren(t)
	base, _ := bkGateway(t, "backends:\n  - name: fixture\n    kind: stdio\n    command: [\""+os.Args[0]+"\"]\n"+
		"    env_from: {"+bkChildEnv+": BK_CHILD_ROLE}\n    prefix: \"-\"\n"+
		"    session: per-client\n    session_idle_timeout: 500ms\n")
	bkWaitReady(t, base, http.StatusOK)
	bkRequireConformance(t, base)
	testkit.WaitFor(t, "only the shared child left", func() bool { return psChildren(t) == before+1 })
}

// The same through a per-client http backend: every per-client upstream
// session the suite caused is sent DELETE once idle; only the shared one
// stays.
func TestConformanceThroughPerClientHTTPBackend(t *testing.T) {
	testkit.LeakCheck(t)
	var mu sync.Mutex
	seen, deleted := map[string]bool{}, map[string]bool{}
	url, _ := bkFixtureHTTP(t, func(r *http.Request) {
		id := r.Header.Get("Mcp-Session-Id")
		if id == "" {
			return
		}
		mu.Lock()
		seen[id] = true
		if r.Method == http.MethodDelete {
			deleted[id] = true
		}
		mu.Unlock()
	})
	base, _ := bkGateway(t, "backends:\n  - {name: fixture, kind: http, url: \""+url+"\", prefix: \"-\", "+
		"session: per-client, session_idle_timeout: 500ms}\n")
	bkWaitReady(t, base, http.StatusOK)
	bkRequireConformance(t, base)
	testkit.WaitFor(t, "every upstream session but the shared one deleted", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) > 2 && len(deleted) == len(seen)-1
	})
	mu.Lock()
	t.Logf("%d upstream sessions opened, %d deleted", len(seen), len(deleted))
	mu.Unlock()
}
