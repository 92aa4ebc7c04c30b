// spawn.go is how the servers of the tests are run: in a temporary folder
// of their own, in their own process group, their output in a log there,
// ready when they answer, and stopped with everything they started.

package peers

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// spawn starts cmd (its folder dir, made by the caller) and waits up to 20
// s for ready. stop kills its process group, waits for it and removes dir;
// on an error everything is stopped already, and the error carries the
// log.
func spawn(name string, cmd *exec.Cmd, dir string, ready func() bool) (stop func(), err error) {
	logPath := filepath.Join(dir, name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	stop = func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		_ = logFile.Close()
		_ = os.RemoveAll(dir)
	}
	deadline := time.Now().Add(20 * time.Second)
	for !ready() {
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(logPath)
			stop()
			return nil, fmt.Errorf("%s is not ready in 20s\n%s", name, log)
		}
		time.Sleep(20 * time.Millisecond) // polling a server that is starting
	}
	return stop, nil
}

// accepts reports whether something listens at addr.
func accepts(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err == nil {
		_ = c.Close()
	}
	return err == nil
}

// freePort is a loopback port nothing listens on now.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
