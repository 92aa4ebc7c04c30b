package layout

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every listener the binary opens is served by mcphttp.NewServer, which
// bounds the headers' arrival and size and closes idle connections: a
// server made elsewhere (the proxy's daemons had none of these) would let
// a client hold a connection without end.
func TestEveryHTTPServerOfTheBinaryHasTheTimeouts(t *testing.T) {
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			// Not the binary's: hidden folders, the benchmarks' peers,
			// the tests' support packages (proxytest, egresstest, …).
			if rel != "." && strings.HasPrefix(d.Name(), ".") || rel == "bench" || strings.HasSuffix(d.Name(), "test") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || rel == filepath.Join("mcphttp", "bounded.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), "http.Server{") {
			t.Errorf("%s makes an http.Server of its own: use mcphttp.NewServer", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
