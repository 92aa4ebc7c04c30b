//go:build !linux

package audit

import "testing"

// breakSegment closes the open segment: every write and truncate of it
// fails.
func breakSegment(t *testing.T, j *journal) {
	t.Helper()
	j.f.Close()
}
