// validate_arguments_test.go pins a backend's validate_arguments: the
// gateway checks tools/call arguments against the input schema the
// backend listed and answers -32602 with the violations before the
// backend is asked; a schema the validator cannot compile leaves its tool
// to the backend; and without the setting every call reaches the backend.

package gateway_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/testkit"
)

func TestValidateArgumentsChecksTheListedSchemaBeforeTheBackend(t *testing.T) {
	testkit.LeakCheck(t)
	journal := filepath.Join(t.TempDir(), "journal")
	specs, stop := ejBackends(t, journal)
	t.Cleanup(stop)
	base, _ := bkGateway(t, fmt.Sprintf("backends:\n  - %s, name: on, validate_arguments: true}\n  - %s, name: off, prefix: x__}\n",
		specs["http"], specs["stdio"]))
	bkWaitReady(t, base, http.StatusOK)
	f := fdHTTPConnect(t, base)

	_, raw := fdMember(t, f.exchange(t, 1, "tools/call", `{"name":"on__typed","arguments":{"path":5}}`))
	var e struct {
		Code int64
		Data struct {
			Tool       string
			Violations []json.RawMessage
		}
	}
	if err := json.Unmarshal([]byte(raw), &e); err != nil || e.Code != -32602 || e.Data.Tool != "on__typed" || len(e.Data.Violations) == 0 {
		t.Fatalf("arguments that break the listed schema: %s, want -32602 with the violations", raw)
	}
	// A twin the validator would not check, which a Go backend reads as
	// path.
	if _, raw := fdMember(t, f.exchange(t, 5, "tools/call", `{"name":"on__typed","arguments":{"path":"/ok","PATH":5}}`)); !strings.Contains(raw, `-32602`) || !strings.Contains(raw, `/PATH`) {
		t.Fatalf("a twin of path: %s, want -32602 naming /PATH", raw)
	}
	if res, raw := fdMember(t, f.exchange(t, 2, "tools/call", `{"name":"on__typed","arguments":{"path":"/ok"}}`)); raw != "" {
		t.Fatalf("valid arguments: %s %s", res, raw)
	}
	if _, raw := fdMember(t, f.exchange(t, 3, "tools/call", `{"name":"on__broken","arguments":{"x":1}}`)); raw != "" {
		t.Fatalf("a tool whose schema does not compile is left to the backend: got %s", raw)
	}
	if _, raw := fdMember(t, f.exchange(t, 4, "tools/call", `{"name":"x__typed","arguments":{"path":5}}`)); raw != "" {
		t.Fatalf("without validate_arguments the backend judges: got %s", raw)
	}
	ran, _ := os.ReadFile(journal)
	if got, want := strings.Count(string(ran), "tool typed"), 2; got != want {
		t.Errorf("the backends ran typed %d times, want %d (the valid call, and the unchecked backend's):\n%s", got, want, ran)
	}
	if !strings.Contains(string(ran), "tool broken") {
		t.Errorf("the unchecked tool never reached its backend:\n%s", ran)
	}
}
