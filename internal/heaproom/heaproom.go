// Package heaproom lets a process's heap grow by a fixed room past what is
// live before the garbage collector runs, where Go's default (GOGC=100)
// would let it grow only by what is live.
//
// A gateway's live heap is small, a few MiB, while every relayed call
// allocates some KiB. With GOGC=100 the collector then runs several times
// a second under load, and each cycle's fixed costs came to 7% of the
// gateway's CPU in the harness's profile. Keep sets GOGC after every
// cycle: the next one comes once the heap has grown by the larger of the
// room and the live heap. That is the default's rule for a large heap,
// and a fixed room for a small one. GOGC in the environment is the operator's
// choice, and Keep then changes nothing; GOMEMLIMIT still bounds the heap
// as it always does.
package heaproom

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
)

// Room is the room mcpgate's servers keep: a heap of a few MiB is
// collected at about 32 MiB more.
const Room = 32 << 20

// minimumGoal is the Go runtime's smallest heap goal at GOGC=100 (4 MiB).
// The runtime scales it with GOGC, which percent accounts for.
const minimumGoal = 4 << 20

// percent is the GOGC that lets a heap of live bytes grow by room before
// the next collection: never below 100, the default, which already lets
// a heap larger than room grow by more. The runtime's smallest goal grows
// with GOGC too, so a heap smaller than that smallest goal gets no more
// than live+room in all.
func percent(live, room uint64) int {
	p := uint64(100)
	if live > 0 {
		p = max(p, room*100/live)
	} else {
		p = max(p, room*100/minimumGoal)
	}
	return int(max(100, min(p, (live+room)*100/minimumGoal, 1<<20)))
}

// Keep starts keeping room and returns what stops it; stop puts GOGC back
// as it was. In a container whose memory is limited (cgroup v2 or v1),
// the room is at most an eighth of the limit: a proxy shares its
// container with the tool server. With GOGC set in the environment it
// does nothing. Only one Keep may be in effect at a time.
func Keep(room uint64) (stop func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	room = Within(room)
	k := &keeper{room: room, sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	k.before = debug.SetGCPercent(k.next())
	k.arm()
	return func() {
		k.mu.Lock()
		defer k.mu.Unlock()
		if !k.stopped {
			k.stopped = true
			debug.SetGCPercent(k.before)
		}
	}
}

// Within is room as Keep keeps it here: at most an eighth of this
// container's memory limit.
func Within(room uint64) uint64 { return within(room, cgroupLimits...) }

// cgroupLimits are the files that hold a container's memory limit: cgroup
// v2's, then v1's.
var cgroupLimits = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// within is room, or an eighth of the memory limit in the first of files
// that holds one when that is less. "max", or a figure too large to be a
// machine's memory, is no limit.
func within(room uint64, files ...string) uint64 {
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		limit, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || limit >= 1<<60 {
			return room // "max", or v1's way of saying none
		}
		return min(room, limit/8)
	}
	return room
}

// keeper sets GOGC after every collection.
type keeper struct {
	room   uint64
	before int // GOGC when Keep began
	sample []metrics.Sample

	mu      sync.Mutex
	stopped bool
}

// next is the GOGC for the heap live after the last collection.
func (k *keeper) next() int {
	metrics.Read(k.sample)
	var live uint64
	if k.sample[0].Value.Kind() == metrics.KindUint64 {
		live = k.sample[0].Value.Uint64()
	}
	return percent(live, k.room)
}

// arm makes a value only the next collection frees, and sets GOGC once it
// is freed: a cleanup runs after the cycle that found its value
// unreachable. It arms the next before it reads the live heap, so that a
// cycle ending meanwhile brings another cleanup with the newer figure. A
// cycle already under way when it arms keeps the new value alive, and
// the cleanup after the cycle that follows sees its heap: GOGC may lag
// one cycle behind.
func (k *keeper) arm() {
	runtime.AddCleanup(new([64]byte), func(k *keeper) {
		k.mu.Lock()
		defer k.mu.Unlock()
		if k.stopped {
			return
		}
		k.arm()
		debug.SetGCPercent(k.next())
	}, k)
}
