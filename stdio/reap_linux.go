// reap_linux.go reaps a child without a window in which its process group
// id could be reused. waitid with WNOWAIT tells us the leader has exited
// while leaving it a zombie. A zombie's pid, and so the group id, is not
// handed out again until it is reaped.

package stdio

import (
	"os/exec"
	"syscall"
	"unsafe"
)

// reap waits for cmd to exit, calls cleanup while its pid is still
// reserved, and then reaps it.
func reap(cmd *exec.Cmd, cleanup func()) error {
	if err := waitExited(cmd.Process.Pid); err != nil {
		err = cmd.Wait()
		cleanup()
		return err
	}
	cleanup()
	return cmd.Wait()
}

// waitExited blocks until pid has exited, without reaping it.
func waitExited(pid int) error {
	const pPID = 1     // P_PID
	var info [128]byte // siginfo_t, unread
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid),
			uintptr(unsafe.Pointer(&info[0])), syscall.WEXITED|syscall.WNOWAIT, 0, 0)
		switch errno {
		case 0:
			return nil
		case syscall.EINTR:
			continue
		default:
			return errno
		}
	}
}
