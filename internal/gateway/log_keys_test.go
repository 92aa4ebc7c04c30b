// log_keys_test.go pins the gateway's JSON log as machines read it: no
// line carries a key twice (the backend's name was written by each layer
// that had it), and a stdio backend's own JSON log line arrives as
// structured attributes, not as an escaped string.

package gateway_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

func TestLogLinesCarryEachKeyOnceAndAChildsJSONAsAttributes(t *testing.T) {
	journal := filepath.Join(t.TempDir(), "journal")
	t.Setenv("EJ_ROLE", ejRoleStdio)
	// Two stdio backends listing the same URI (the relay logs the
	// collision), each writing a JSON log line to stderr first.
	child := func(name string) string {
		script := `echo '{"level":"INFO","msg":"child ready","who":"` + name + `"}' >&2; exec "$0" "$1"`
		return fmt.Sprintf("  - {name: %s, kind: stdio, command: [/bin/sh, -c, %q, %q, %q], env_from: {%s: EJ_ROLE}}\n",
			name, script, os.Args[0], journal, bkChildEnv)
	}
	e := gwStart(t, "listen: 127.0.0.1:0\nbackends:\n"+child("one")+child("two"))
	bkRun(t, e.gw)
	bkWaitReady(t, e.base, http.StatusOK)
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(e.logs.String())
		}
	})
	testkit.WaitFor(t, "both children's lines and the collision in the log", func() bool {
		out := e.logs.String()
		return strings.Count(out, `"child ready"`) == 2 && strings.Contains(out, "collision")
	})

	sc := bufio.NewScanner(strings.NewReader(e.logs.String()))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	children := 0
	for sc.Scan() {
		line := sc.Bytes()
		seen := map[string]bool{}
		if err := jsonrpc.Members(line, func(key string, _ json.RawMessage) bool {
			if seen[key] {
				t.Errorf("key %q twice in %s", key, line)
			}
			seen[key] = true
			return true
		}); err != nil {
			t.Fatalf("a log line that is not a JSON object: %s", line)
		}
		var rec struct {
			Backend string
			Child   struct{ Msg, Who string }
		}
		if json.Unmarshal(line, &rec) == nil && rec.Child.Msg == "child ready" {
			children++
			if rec.Child.Who != rec.Backend {
				t.Errorf("the child's line is logged under backend %q: %s", rec.Backend, line)
			}
		}
	}
	if children != 2 {
		t.Errorf("%d children's lines logged as attributes, want 2:\n%s", children, e.logs.String())
	}
}
