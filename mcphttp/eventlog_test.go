package mcphttp

import (
	"fmt"
	"strings"
	"testing"
)

// What a stream keeps for a resuming client is bounded by count and by
// bytes, the oldest going first; the newest event stays whatever its size
// (it may be the answer the client comes back for).
func TestKeptEventsAreBoundedByCountAndBytes(t *testing.T) {
	ids := func(q *events) string {
		var s []string
		for _, ev := range q.list {
			s = append(s, ev.id)
		}
		return strings.Join(s, ",")
	}
	for _, tc := range []struct {
		rule          string
		max, maxBytes int
		sizes         []int
		want          string
		wantBytes     int
	}{
		{"under both bounds everything stays", 4, 100, []int{10, 10, 10}, "1,2,3", 30},
		{"past the count the oldest go", 2, 100, []int{10, 10, 10}, "2,3", 20},
		{"past the bytes the oldest go", 10, 25, []int{10, 10, 10}, "2,3", 20},
		{"one big event pushes out every other", 10, 25, []int{10, 10, 40}, "3", 40},
		{"the newest stays whatever its size", 10, 25, []int{40}, "1", 40},
		{"after a big one, small ones fit again", 10, 25, []int{40, 5, 5}, "2,3", 10},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			q := &events{max: tc.max, maxBytes: tc.maxBytes}
			for i, n := range tc.sizes {
				q.push(fmt.Sprint(i+1), make([]byte, n))
			}
			if got := ids(q); got != tc.want || q.bytes != tc.wantBytes {
				t.Errorf("kept %s (%d bytes), want %s (%d bytes)", got, q.bytes, tc.want, tc.wantBytes)
			}
		})
	}
}

// The finished POST streams a session keeps hold a bounded number of
// bytes together: the oldest finished go first, the newest stays.
func TestFinishedStreamsAreBoundedByBytes(t *testing.T) {
	var ps postStreams
	for n := uint64(1); n <= 5; n++ {
		p := ps.open(n, 10, 100)
		p.finish(fmt.Sprintf("p%d-1", n), make([]byte, 30))
		ps.closed(n, 100)
	}
	var kept []uint64
	for n := uint64(1); n <= 5; n++ {
		if ps.get(n) != nil {
			kept = append(kept, n)
		}
	}
	if fmt.Sprint(kept) != "[3 4 5]" {
		t.Errorf("kept streams %v, want [3 4 5] (90 of the 100 bytes)", kept)
	}
}
