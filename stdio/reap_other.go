//go:build unix && !linux

// reap_other.go is the portable fallback of reap_linux.go: without waitid
// the group is signalled just after the leader is reaped, which leaves a
// small window in which its id could be reused.

package stdio

import "os/exec"

// reap waits for cmd, reaps it, and then calls cleanup.
func reap(cmd *exec.Cmd, cleanup func()) error {
	err := cmd.Wait()
	cleanup()
	return err
}
