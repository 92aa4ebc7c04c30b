package heaproom

import (
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"

	"github.com/mcpgate/mcpgate/internal/testkit"
)

// goal is the heap goal the runtime sets for a live heap at GOGC p.
func goal(live uint64, p int) uint64 {
	return max(live+live*uint64(p)/100, minimumGoal*uint64(p)/100)
}

func TestTheNextCollectionComesOnceTheHeapGrewByTheRoomOrByWhatIsLive(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name       string
		live, room uint64
		want       uint64 // the heap goal
	}{
		{"before the first collection: the room", 0, Room, Room},
		{"a heap far below the runtime's smallest goal: live plus the room", 1 * mib, Room, 33 * mib},
		{"a heap at the smallest goal: live plus the room", 4 * mib, Room, 36 * mib},
		{"a heap of half the room: live plus the room", 16 * mib, Room, 48 * mib},
		{"a heap as large as the room: twice the heap, the default", 32 * mib, Room, 64 * mib},
		{"a heap larger than the room: twice the heap, the default", 1024 * mib, Room, 2048 * mib},
		{"a room smaller than the runtime's smallest goal: the default", 1 * mib, 1 * mib, 4 * mib},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := percent(tc.live, tc.room)
			if p < 100 {
				t.Fatalf("GOGC %d: below the default", p)
			}
			if got := goal(tc.live, p); got < tc.want*99/100 || got > tc.want*101/100 {
				t.Errorf("GOGC %d: goal %d MiB, want %d MiB", p, got/mib, tc.want/mib)
			}
		})
	}
}

// gogc reads the runtime's GOGC and live heap.
func gogc() (percent int, live uint64) {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}, {Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64()), s[1].Value.Uint64()
}

func TestKeepSetsGOGCAfterEveryCollectionAndStopPutsItBack(t *testing.T) {
	t.Setenv("GOGC", "")
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	room := Within(Room) // what Keep keeps in this container
	stop := Keep(Room)
	defer stop()
	if p, live := gogc(); p != percent(live, room) {
		t.Fatalf("at Keep: GOGC %d, want %d for %d live bytes", p, percent(live, room), live)
	}
	// The collections that follow set it for the heap each leaves.
	var kept [][]byte
	for _, size := range []int{48 << 20, 8 << 20, 0} {
		kept = make([][]byte, 0, size>>20)
		for range size >> 20 {
			kept = append(kept, make([]byte, 1<<20))
		}
		runtime.GC()
		// A cycle that was under way when the last cleanup armed the next
		// is one whose heap the cleanup after the following cycle sees.
		testkit.WaitFor(t, "GOGC set for the heap the collections left", func() bool {
			if p, live := gogc(); p == percent(live, room) {
				return true
			}
			runtime.GC()
			return false
		})
		if p, _ := gogc(); size == 48<<20 && p != 100 {
			t.Errorf("a live heap past the room: GOGC %d, want 100", p)
		}
	}
	runtime.KeepAlive(kept)
	stop()
	runtime.GC()
	if p, _ := gogc(); p != 100 {
		t.Errorf("after stop: GOGC %d, want 100 as before Keep", p)
	}
}

func TestKeepLeavesTheOperatorsGOGC(t *testing.T) {
	t.Setenv("GOGC", "100")
	stop := Keep(Room)
	defer stop()
	runtime.GC()
	if p, _ := gogc(); p != 100 {
		t.Errorf("GOGC %d with GOGC=100 in the environment", p)
	}
}

func TestTheRoomIsAnEighthOfAContainersMemoryLimitAtMost(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const mib = 1 << 20
	v2 := file("v2", "134217728\n") // 128 MiB
	v2max := file("v2max", "max\n")
	v1none := file("v1none", "9223372036854771712\n")
	v1 := file("v1", "1073741824\n") // 1 GiB
	missing := filepath.Join(dir, "missing")
	for _, tc := range []struct {
		name  string
		files []string
		want  uint64
	}{
		{"a 128 MiB container: 16 MiB", []string{v2, v1}, 16 * mib},
		{"a 1 GiB container: the room", []string{missing, v1}, Room},
		{"cgroup v2 without a limit: the room", []string{v2max, v1}, Room},
		{"cgroup v1 without a limit: the room", []string{missing, v1none}, Room},
		{"no cgroup: the room", []string{missing}, Room},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := within(Room, tc.files...); got != tc.want {
				t.Errorf("room %d MiB, want %d MiB", got/mib, tc.want/mib)
			}
		})
	}
}
