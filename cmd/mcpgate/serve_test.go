package main

import (
	"io"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/config"
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
	want := []config.BackendConfig{
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

// The URL serve prints is one to paste: a listener on every address
// prints as loopback, any other as it is.
func TestServePrintsAURLToPaste(t *testing.T) {
	for _, c := range []struct {
		addr net.Addr
		want string
	}{
		{&net.TCPAddr{IP: net.IPv6unspecified, Port: 8080}, "127.0.0.1:8080"},
		{&net.TCPAddr{IP: net.IPv4zero, Port: 9000}, "127.0.0.1:9000"},
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}, "127.0.0.1:8080"},
		{&net.TCPAddr{IP: net.ParseIP("::1"), Port: 8080}, "[::1]:8080"},
		{&net.TCPAddr{IP: net.IPv4(10, 1, 2, 3), Port: 80}, "10.1.2.3:80"},
	} {
		if got := pasteHost(c.addr); got != c.want {
			t.Errorf("pasteHost(%v) = %q, want %q", c.addr, got, c.want)
		}
	}
}

// A mistyped flag says where the usage is.
func TestUnknownFlagNamesTheHelp(t *testing.T) {
	for _, args := range [][]string{{"serve", "--lisen", "x"}, {"token", "list", "--stor", "x"}, {"audit", "tail", "--nn", "1"}} {
		root := rootCommand()
		root.SetOut(io.Discard)
		root.SetErr(io.Discard)
		root.SetArgs(args)
		err := root.Execute()
		want := "run 'mcpgate " + strings.Join(args[:len(args)-2], " ") + " --help' for usage"
		if err == nil || !strings.Contains(err.Error(), "unknown flag") || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: %v, want the unknown flag and %q", args, err, want)
		}
	}
}
