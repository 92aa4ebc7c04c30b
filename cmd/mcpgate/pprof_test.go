// pprof_test.go pins the hidden --pprof flag of serve and proxy: the
// profiling endpoints are served on a loopback address only, and stop
// with the command.

package main

import (
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func TestPprofRefusesAnAddressOffTheLoopback(t *testing.T) {
	for _, addr := range []string{":0", "0.0.0.0:0", "[::]:0", "192.0.2.1:6060", "example.com:6060"} {
		if stop, err := servePprof(addr); !errors.Is(err, errPprofNotLoopback) {
			if stop != nil {
				stop()
			}
			t.Errorf("servePprof(%q): err %v, want the loopback refusal", addr, err)
		}
	}
}

func TestPprofServesOnLoopbackUntilStopped(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close() // servePprof listens itself; the port was free a moment ago
	stop, err := servePprof(addr)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + addr + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		stop()
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "goroutine profile") {
		t.Errorf("status %d, body %.80q: want the goroutine profile", resp.StatusCode, body)
	}
	stop()
	if c, err := net.Dial("tcp", addr); err == nil {
		_ = c.Close()
		t.Error("the profiling endpoints still accept connections after stop")
	}
}

func TestPprofFlagIsHiddenOnServeAndProxy(t *testing.T) {
	for _, cmd := range []*cobra.Command{serveCommand(), proxyCommand()} {
		f := cmd.Flags().Lookup("pprof")
		if f == nil || !f.Hidden {
			t.Errorf("mcpgate %s: --pprof %v, want a hidden flag", cmd.Name(), f)
		}
	}
}
