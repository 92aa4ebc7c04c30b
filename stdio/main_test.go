// main_test.go lets the test binary play the server: started with
// childEnv set, it serves the test server on its own stdin and stdout
// instead of running tests, so the client tests talk to a real process.

package stdio

import (
	"context"
	"log/slog"
	"os"
	"testing"

	"github.com/mcpgate/mcpgate/internal/testkit"
)

const childEnv = "MCPGATE_STDIO_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "server" {
		os.Exit(runChildServer())
	}
	testkit.Main(m)
}

// runChildServer serves one session on stdin/stdout, logging to stderr.
func runChildServer() int {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	s, _ := newTestServer()
	if err := Serve(context.Background(), s, os.Stdin, os.Stdout, Options{Logger: log}); err != nil {
		log.Error("serve failed", "err", err)
		return 1
	}
	return 0
}

// childCommandEnv is the environment that makes the test binary a server.
// A race-enabled child would otherwise linger a second at exit
// (atexit_sleep_ms), slowing every shutdown the tests observe.
func childCommandEnv() []string {
	return append(os.Environ(), childEnv+"=server", "GORACE="+os.Getenv("GORACE")+" atexit_sleep_ms=0")
}
