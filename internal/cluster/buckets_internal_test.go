package cluster

import "testing"

// A lease spent before it expires doubles the next, one that expires with
// tokens left halves it; never below leaseSize, never above maxLeaseSize
// or a sixteenth of the burst.
func TestLeaseSizeFollowsWhatTheReplicaSpends(t *testing.T) {
	for _, tc := range []struct {
		name  string
		size  int
		spent bool
		burst int
		want  int
	}{
		{"the first lease", 0, false, 100000, leaseSize},
		{"spent in time doubles", 16, true, 100000, 32},
		{"up to the largest lease", 256, true, 100000, maxLeaseSize},
		{"up to a sixteenth of the burst", 32, true, 1000, 62},
		{"a bucket at the leased minimum keeps the smallest lease", 16, true, minLeaseBurst, leaseSize},
		{"expired with tokens left halves", 128, false, 100000, 64},
		{"never below the first size", 16, false, 100000, leaseSize},
		{"a burst lowered by a reload shrinks the lease", 256, true, 2048, 128},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := nextLeaseSize(tc.size, tc.spent, tc.burst); got != tc.want {
				t.Errorf("nextLeaseSize(%d, %v, %d) = %d, want %d", tc.size, tc.spent, tc.burst, got, tc.want)
			}
		})
	}
}
