//go:build unix

// process_test.go pins the process kind with the real mcpgate binary: the
// fixture as the program, `mcpgate proxy` beside it, both started by the
// backend; killing either one takes the backend down, and its restart
// brings up a fresh pair that serves again.

package backends_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpgate/mcpgate/internal/gateway/backends"
	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/internal/upstream"
	"github.com/mcpgate/mcpgate/mcp"
)

// processPids returns the pids of the last pair the backend started.
func processPids(t *testing.T, logs *wtLog) (program, proxy int) {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(logs.String()))
	for sc.Scan() {
		var l struct {
			Msg        string `json:"msg"`
			ProgramPid int    `json:"program_pid"`
			ProxyPid   int    `json:"proxy_pid"`
		}
		if json.Unmarshal(sc.Bytes(), &l) == nil && l.Msg == "backend processes started" {
			program, proxy = l.ProgramPid, l.ProxyPid
		}
	}
	if program == 0 || proxy == 0 {
		t.Fatalf("no pids in the log:\n%s", logs)
	}
	return program, proxy
}

// A process backend in a Set: the program and its proxy serve, killing
// either brings up a fresh pair, and removing the backend ends both.
func TestProcessBackendServesAndRestartsThePair(t *testing.T) {
	bin := testkit.Mcpgate(t)
	logs := &wtLog{}
	opts := fast
	opts.Logger = logs.logger()
	f := newFront(t)
	set := backends.NewSet(f.Server, opts)
	if err := set.Add(backends.Spec{Name: "demo", Kind: upstream.KindProcess,
		Command: []string{bin, "fixture"}, ProxyCommand: []string{bin, "proxy"}}); err != nil {
		t.Fatal(err)
	}
	run(t, set)
	b := set.Backend("demo")
	waitState(t, b, "up", isUp)
	const simple = "This is a simple text response for testing."
	if text := f.callText(t, "demo__test_simple_text"); text != simple {
		t.Fatalf("call = %q", text)
	}
	if !strings.Contains(logs.String(), "mcpgate fixture: Streamable HTTP at") {
		t.Errorf("the program's stderr is not in the backend's log:\n%s", logs)
	}

	for i, victim := range []string{"program", "proxy"} {
		program, proxy := processPids(t, logs)
		pid := map[string]int{"program": program, "proxy": proxy}[victim]
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		s := waitState(t, b, victim+" down", isDown)
		if !strings.Contains(s.LastError, "the "+victim+" exited") && !strings.Contains(s.LastError, "proxy connection ended") {
			t.Errorf("after killing the %s: LastError %q", victim, s.LastError)
		}
		s = waitState(t, b, "up again", func(s backends.Status) bool { return s.Up && s.Restarts > i })
		if text := f.callText(t, "demo__test_simple_text"); text != simple {
			t.Errorf("call after the %s's restart = %q", victim, text)
		}
		if p2, x2 := processPids(t, logs); p2 == program || x2 == proxy {
			t.Errorf("the restart kept a process: program %d→%d, proxy %d→%d", program, p2, proxy, x2)
		}
	}

	// Removed from the Set, the backend ends both process groups.
	program, proxy := processPids(t, logs)
	if !set.Remove("demo") || f.has(t, "demo__test_simple_text") {
		t.Fatal("remove: the demo's tools are still in the front")
	}
	for name, pid := range map[string]int{"program": program, "proxy": proxy} {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("the %s (pid %d) outlived its backend: %v", name, pid, err)
		}
	}
}

// A process backend's era is what its proxy speaks to the program: auto
// finds the fixture's 2026-07-28, session keeps to initialize.
func TestProcessBackendsEraIsWhatItsProxySpeaks(t *testing.T) {
	bin := testkit.Mcpgate(t)
	for _, tc := range []struct {
		era  mcp.Era
		want string
	}{{mcp.EraAuto, "sessionless"}, {mcp.EraSession, "session"}} {
		t.Run(tc.want, func(t *testing.T) {
			logs := &wtLog{}
			opts := fast
			opts.Logger = logs.logger()
			f := newFront(t)
			set := backends.NewSet(f.Server, opts)
			if err := set.Add(backends.Spec{Name: "demo", Kind: upstream.KindProcess, Era: tc.era,
				Command: []string{bin, "fixture"}, ProxyCommand: []string{bin, "proxy"}}); err != nil {
				t.Fatal(err)
			}
			run(t, set)
			waitState(t, set.Backend("demo"), "up", isUp)
			if text := f.callText(t, "demo__test_simple_text"); text != "This is a simple text response for testing." {
				t.Fatalf("call = %q", text)
			}
			var eras []string
			sc := bufio.NewScanner(strings.NewReader(logs.String()))
			for sc.Scan() {
				var l struct {
					Child struct {
						Msg string `json:"msg"`
						Era string `json:"era"`
					} `json:"child"`
				}
				if json.Unmarshal(sc.Bytes(), &l) == nil && l.Child.Msg == "upstream session started" {
					eras = append(eras, l.Child.Era)
				}
			}
			if len(eras) != 1 || eras[0] != tc.want {
				t.Errorf("the proxy's upstream sessions: %q, want one of %s", eras, tc.want)
			}
		})
	}
}
