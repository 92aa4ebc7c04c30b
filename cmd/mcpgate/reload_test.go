// reload_test.go runs `mcpgate serve --config FILE` as a person would and
// edits the file under it: a backend added by an editor's save (written
// aside and renamed over the file) appears in the catalogue of a session
// that stays open; a file that does not validate is refused with the key
// named in the log while the old catalogue keeps serving; SIGHUP applies
// an edit when polling is off; and without --config SIGHUP says it has
// nothing to read.

package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// rlSession is one Streamable HTTP session with a running mcpgate.
type rlSession struct {
	c    *mcp.Client
	conn *mcphttp.StreamableConn
	id   string // the session id issued at initialize
}

func rlOpen(t *testing.T, url string) *rlSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := mcphttp.DialStreamable(ctx, url, mcphttp.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(conn, mcp.ClientOptions{Info: mcp.Implementation{Name: "reload-test", Version: "0"}})
	t.Cleanup(func() { _ = c.Close() })
	if _, err := c.Initialize(ctx); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return &rlSession{c: c, conn: conn, id: conn.SessionID()}
}

// tools lists the session's tool names; the session must still be the
// one opened.
func (s *rlSession) tools(t *testing.T) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := s.c.Call(ctx, "tools/list", json.RawMessage(`{}`))
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	if id := s.conn.SessionID(); id != s.id {
		t.Fatalf("the session id %q became %q", s.id, id)
	}
	var page struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(res, &page); err != nil {
		t.Fatalf("tools/list: %s: %v", res, err)
	}
	var names []string
	for _, tl := range page.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return names
}

// call calls the fixture's test_simple_text as name.
func (s *rlSession) call(t *testing.T, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := s.c.Call(ctx, "tools/call", json.RawMessage(`{"name":"`+name+`","arguments":{}}`))
	if err != nil || !strings.Contains(string(res), "simple text response") {
		t.Fatalf("%s: %s, %v", name, res, err)
	}
}

// rlHasTool reports whether names holds a tool with prefix.
func rlHasTool(names []string, prefix string) bool {
	return slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, prefix) })
}

// rlWrite replaces the file as an editor that saves by rename does.
func rlWrite(t *testing.T, path, text string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// rlFixtures is the backends section: the fixture over stdio under each
// name.
func rlFixtures(bin string, names ...string) string {
	s := "backends:\n"
	for _, n := range names {
		s += "  - {name: " + n + ", kind: stdio, command: [\"" + bin + "\", fixture, --stdio]}\n"
	}
	return s
}

// rlServe starts serve on a free port with the extra arguments and returns
// the process and the URL of its MCP endpoint.
func rlServe(t *testing.T, bin string, args ...string) (*cliProc, string) {
	t.Helper()
	db := filepath.Join(t.TempDir(), "mcpgate.db")
	p := cliStart(t, bin, append([]string{"serve", "--no-auth", "--listen", "127.0.0.1:0", "--store", db}, args...)...)
	lines := p.waitLine(t, "the MCP URL", func(l string) bool { return cliMCPURLRE.MatchString(l) })
	return p, cliMCPURLRE.FindString(lines[len(lines)-1])
}

func TestServeReloadsItsConfiguration(t *testing.T) {
	bin := testkit.Mcpgate(t)

	t.Run("an edit of the file adds and removes backends while a session stays open", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "mcpgate.yaml")
		rlWrite(t, file, rlFixtures(bin, "a"))
		p, url := rlServe(t, bin, "--config", file, "--config-poll", "100ms")
		s := rlOpen(t, url)
		testkit.WaitFor(t, "a's tools listed", func() bool { return rlHasTool(s.tools(t), "a__") })
		s.call(t, "a__test_simple_text")

		rlWrite(t, file, rlFixtures(bin, "a", "b"))
		testkit.WaitFor(t, "b's tools listed", func() bool { return rlHasTool(s.tools(t), "b__") })
		s.call(t, "a__test_simple_text")
		s.call(t, "b__test_simple_text")
		before := s.tools(t)

		// A file that does not validate: refused, the key named in the log,
		// the old catalogue still served on the same session.
		if err := os.WriteFile(file, []byte(rlFixtures(bin, "a")+"  - {name: c, kind: ftp}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		testkit.WaitFor(t, "the refusal logged", func() bool {
			return strings.Contains(p.stderr.String(), "reload refused") && strings.Contains(p.stderr.String(), "backends[1].kind")
		})
		if after := s.tools(t); !slices.Equal(after, before) {
			t.Errorf("tools after the invalid file %v, want %v", after, before)
		}
		s.call(t, "b__test_simple_text")

		rlWrite(t, file, rlFixtures(bin, "b"))
		testkit.WaitFor(t, "a's tools gone", func() bool {
			names := s.tools(t)
			return !rlHasTool(names, "a__") && rlHasTool(names, "b__")
		})
		s.call(t, "b__test_simple_text")
		p.stop(t)
		for _, want := range []string{"backend added", "backend removed"} {
			if !strings.Contains(p.stderr.String(), want) {
				t.Errorf("the log has no %q line:\n%s", want, p.stderr)
			}
		}
	})

	t.Run("SIGHUP applies an edit when polling is off", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "mcpgate.yaml")
		rlWrite(t, file, rlFixtures(bin, "a"))
		p, url := rlServe(t, bin, "--config", file, "--config-poll", "0")
		s := rlOpen(t, url)
		testkit.WaitFor(t, "a's tools listed", func() bool { return rlHasTool(s.tools(t), "a__") })

		rlWrite(t, file, rlFixtures(bin, "a", "b"))
		if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		testkit.WaitFor(t, "b's tools listed", func() bool { return rlHasTool(s.tools(t), "b__") })
		s.call(t, "a__test_simple_text")
		before := s.tools(t)

		rlWrite(t, file, "backends:\n  - {name: a, kind: stdio}\n")
		if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		testkit.WaitFor(t, "the refusal logged", func() bool { return strings.Contains(p.stderr.String(), "backends[0].command") })
		if after := s.tools(t); !slices.Equal(after, before) {
			t.Errorf("tools after the invalid file %v, want %v", after, before)
		}
		s.call(t, "b__test_simple_text")
		p.stop(t)
	})

	t.Run("without --config SIGHUP says there is nothing to read", func(t *testing.T) {
		p, url := rlServe(t, bin, "--backend", "a=stdio:"+bin+" fixture --stdio")
		s := rlOpen(t, url)
		testkit.WaitFor(t, "a's tools listed", func() bool { return rlHasTool(s.tools(t), "a__") })
		if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		testkit.WaitFor(t, "the SIGHUP logged", func() bool { return strings.Contains(p.stderr.String(), "no --config file") })
		s.call(t, "a__test_simple_text")
		p.stop(t)
	})
}
