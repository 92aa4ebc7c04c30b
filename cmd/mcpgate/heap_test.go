package main

import (
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/heaproom"
	"github.com/mcpgate/mcpgate/internal/testkit"
)

// nextGCRE finds the heap goal in the heap profile's text form.
var nextGCRE = regexp.MustCompile(`# NextGC = (\d+)`)

func TestServeAndProxyLeaveTheHeapRoomUnlessGOGCIsSet(t *testing.T) {
	room := heaproom.Within(heaproom.Room)
	if room < 16<<20 {
		t.Skipf("a container memory limit leaves a room of %d bytes: too small to tell from the runtime's own goal", room)
	}
	bin := testkit.Mcpgate(t)
	commands := map[string]func(t *testing.T) []string{
		"serve": func(t *testing.T) []string {
			return []string{"serve", "--no-auth", "--store", t.TempDir() + "/mcpgate.db", "--backend", "b=http:http://127.0.0.1:1/mcp"}
		},
		"proxy": func(*testing.T) []string {
			return []string{"proxy", "--upstream", "http://127.0.0.1:1/mcp", "--postgres-listen", "", "--daemon-listen", ""}
		},
	}
	for name, command := range commands {
		for _, gogc := range []string{"", "100"} {
			t.Run(name+" GOGC="+gogc, func(t *testing.T) {
				env := slices.DeleteFunc(cliEnv(t), func(kv string) bool { return strings.HasPrefix(kv, "GOGC=") })
				if gogc != "" {
					env = append(env, "GOGC="+gogc)
				}
				pprof := testkit.FreePort(t)
				args := append(command(t), "--listen", testkit.FreePort(t), "--pprof", pprof)
				p := cliStartIn(t, "", env, bin, args...)
				var nextGC uint64
				testkit.WaitFor(t, "the heap profile served", func() bool {
					resp, err := http.Get("http://" + pprof + "/debug/pprof/heap?debug=1")
					if err != nil {
						return false
					}
					defer resp.Body.Close()
					body, _ := io.ReadAll(resp.Body)
					m := nextGCRE.FindSubmatch(body)
					if m == nil {
						return false
					}
					nextGC, _ = strconv.ParseUint(string(m[1]), 10, 64)
					return true
				})
				if gogc == "" && nextGC < room {
					t.Errorf("the heap goal is %d bytes, want at least the room (%d)", nextGC, room)
				}
				if gogc != "" && nextGC >= room {
					t.Errorf("with GOGC=%s the heap goal is %d bytes, want the runtime's own (below %d)", gogc, nextGC, room)
				}
				if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
					t.Fatal(err)
				}
				<-p.done
			})
		}
	}
}
