//go:build unix && !linux

package stdio

import "syscall"

// ChildAttr is how a backend's child process is started: in its own
// process group (no parent-death signal outside Linux).
func ChildAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
