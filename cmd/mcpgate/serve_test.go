package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/config"
)

// --backend adds to the file's backends, replaces one of the same name,
// and --no-prefix applies to the flag's backends only.
func TestServeBackendFlagsMergeOverTheFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "mcpgate.yaml")
	yaml := "backends:\n" +
		"  - {name: keep, kind: http, url: \"http://127.0.0.1:1/mcp\"}\n" +
		"  - {name: swap, kind: sse, url: \"http://127.0.0.1:2/sse\", headers_from: {Authorization: T}}\n"
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := loadConfig(serveFlags{config: file, noPrefix: true,
		backends: []string{"swap=stdio:mcpgate fixture --stdio", "more=http:http://127.0.0.1:3/mcp"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []config.Backend{
		{Name: "keep", Kind: "http", URL: "http://127.0.0.1:1/mcp"},
		{Name: "swap", Kind: "stdio", Command: []string{"mcpgate", "fixture", "--stdio"}, Prefix: config.NoPrefix},
		{Name: "more", Kind: "http", URL: "http://127.0.0.1:3/mcp", Prefix: config.NoPrefix},
	}
	if !reflect.DeepEqual(cfg.Backends, want) {
		t.Errorf("backends = %+v\nwant %+v", cfg.Backends, want)
	}
}

func TestServeBackendFlagRefusals(t *testing.T) {
	for _, f := range []serveFlags{
		{backends: []string{"a=ftp:x"}},
		{backends: []string{"a=http:"}}, // no URL: backends[0].url
		{noPrefix: true},                // --no-prefix without --backend
	} {
		if _, err := loadConfig(f); err == nil {
			t.Errorf("%+v accepted", f)
		} else if strings.Contains(err.Error(), "backends[0]") || strings.Contains(err.Error(), "--") {
			continue
		} else {
			t.Errorf("%+v: error %q names neither the key nor the flag", f, err)
		}
	}
}
