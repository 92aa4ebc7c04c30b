// main_test.go lets the test binary play a stdio MCP server: started with
// childEnv set, it serves the fixture (plus the proxy's test tools) on its
// stdin and stdout instead of running tests, so the supervisor and the
// stdio upstream are tested against a real process.

package proxy

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"testing"

	"github.com/mcpgate/mcpgate/internal/fixture"
	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/stdio"
)

const (
	childEnv = "MCPGATE_PROXY_TEST_CHILD"
	// startsEnv names a file the child appends a line to when it starts.
	startsEnv = "MCPGATE_PROXY_TEST_STARTS"
)

func TestMain(m *testing.M) {
	switch os.Getenv(childEnv) {
	case "server":
		os.Exit(runChild())
	case "crash": // a server that cannot get going
		os.Exit(7)
	case "fixture-sessionless": // the fixture, both eras, over stdio
		err := stdio.Serve(context.Background(), fixture.New(fixture.Options{}), os.Stdin, os.Stdout, stdio.Options{Sessionless: true})
		if err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	testkit.Main(m)
}

func runChild() int {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if path := os.Getenv(startsEnv); path != "" {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			log.Error("cannot record the start", "err", err)
			return 1
		}
		fmt.Fprintf(f, "start %d\n", os.Getpid())
		_ = f.Close()
	}
	if err := stdio.Serve(context.Background(), testServer(true), os.Stdin, os.Stdout, stdio.Options{Logger: log}); err != nil {
		log.Error("serve failed", "err", err)
		return 1
	}
	return 0
}

// crashingCommand is a child that exits with status 7 as it starts.
func crashingCommand() ([]string, []string) {
	return []string{os.Args[0]}, append(os.Environ(), childEnv+"=crash")
}

// sessionlessFixtureCommand is a child serving the fixture over stdio in
// both eras.
func sessionlessFixtureCommand() ([]string, []string) {
	return []string{os.Args[0]}, append(os.Environ(), childEnv+"=fixture-sessionless", "GORACE="+os.Getenv("GORACE")+" atexit_sleep_ms=0")
}

// childCommand is the command line and environment of a child server. A
// race-enabled child would otherwise linger a second at exit.
func childCommand(extraEnv ...string) ([]string, []string) {
	env := append(os.Environ(), childEnv+"=server", "GORACE="+os.Getenv("GORACE")+" atexit_sleep_ms=0")
	return []string{os.Args[0]}, append(env, extraEnv...)
}
