package audit

import (
	"syscall"
	"testing"
)

// breakSegment makes the open segment's mapping read-only: the next copy
// into it faults, as it would on a disk failing under the page.
func breakSegment(t *testing.T, j *journal) {
	t.Helper()
	if err := syscall.Mprotect(j.m, syscall.PROT_READ); err != nil {
		t.Fatal(err)
	}
}
