//go:build !unix

// process_other.go stands in for process.go where there are no process
// groups: Command is not offered, and a Conn never has a process.

package stdio

type process struct {
	pid     int
	exited  chan struct{}
	exitErr error
}

func (p *process) shutdown()    {}
func (p *process) stopLogging() {}
