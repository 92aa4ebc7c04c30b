// uri_order_test.go pins, through reloads of a running gateway, who serves
// a resource URI two backends list: the one first in the configuration,
// whichever came up first; and when a reload removes it, the other serves
// the URI at once, with no restart.

package gateway_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/testkit"
)

func TestASharedURIIsServedByTheFirstBackendInTheConfiguration(t *testing.T) {
	testkit.LeakCheck(t)
	dir := t.TempDir()
	journalA, journalB := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	specsA, stopA := ejBackends(t, journalA)
	specsB, stopB := ejBackends(t, journalB)
	t.Cleanup(stopA)
	t.Cleanup(stopB)
	lineA, lineB := "  - "+specsA["http"]+", name: a}\n", "  - "+specsB["http"]+", name: b}\n"

	base, gw := bkGateway(t, "backends:\n"+lineB)
	bkWaitReady(t, base, http.StatusOK)
	f := fdHTTPConnect(t, base)
	reads := map[string]int{}
	// servedBy reads the shared URI and names the backend whose journal
	// grew.
	servedBy := func() string {
		t.Helper()
		if _, raw := fdMember(t, f.exchange(t, 5, "resources/read", `{"uri":"file:///etc/hostname"}`)); raw != "" {
			return "error " + raw
		}
		who := ""
		for name, path := range map[string]string{"a": journalA, "b": journalB} {
			b, _ := os.ReadFile(path)
			if n := strings.Count(string(b), "read file:///etc/hostname"); n > reads[name] {
				reads[name], who = n, name
			}
		}
		return who
	}
	if got := servedBy(); got != "b" {
		t.Fatalf("with b alone, the URI is served by %q", got)
	}

	// a joins, first in the file: it takes the URI over, though b was up
	// first.
	if _, err := gw.Reload(testkit.Context(t), rlConfig(t, "backends:\n"+lineA+lineB)); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "a to serve the URI", func() bool { return servedBy() == "a" })

	// a is removed: b serves the URI again, without a restart.
	if _, err := gw.Reload(testkit.Context(t), rlConfig(t, "backends:\n"+lineB)); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "b to serve the URI again", func() bool { return servedBy() == "b" })
}
