// build.go builds the mcpgate command for tests that run it as a real
// program (the gateway's process backends, `mcpgate proxy`, the CLI).

package mcptest

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// BuildMcpgate builds the mcpgate command into a temporary folder of tb
// and returns the binary's path; a failed build fails tb with go's output.
func BuildMcpgate(tb testing.TB) string {
	tb.Helper()
	bin := filepath.Join(tb.TempDir(), "mcpgate")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/mcpgate/mcpgate/cmd/mcpgate").CombinedOutput()
	if err != nil {
		tb.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
