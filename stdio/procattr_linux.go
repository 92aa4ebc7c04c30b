// procattr_linux.go: a child in its own process group that the kernel
// kills if mcpgate dies without stopping it (SIGKILL of the gateway: the
// backend's server must not outlive it, holding its files and ports).

package stdio

import "syscall"

// ChildAttr is how a backend's child process is started.
func ChildAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
