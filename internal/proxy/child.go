// child.go is one life of a supervised server process, and the Conn a
// session speaks through to it. The supervisor's loop owns the process:
// whoever wants it gone asks (requestStop) and waits for gone, so the
// process is stopped and reaped in one place.

package proxy

import (
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/stdio"
)

// child is one life of the server.
type child struct {
	conn    *stdio.Conn
	started time.Time
	claimed bool          // handed to a session; under Supervisor.mu
	stop    chan struct{} // closed to ask for a stop
	// replaced: the supervisor stopped it to start another (new secrets,
	// a new session), so the next start is due at once; under
	// Supervisor.mu. Any other end is a death, and backoff applies.
	replaced bool
	once     sync.Once
	gone     chan struct{} // closed once the process is reaped and its Conn closed
}

func (c *child) requestStop() { c.once.Do(func() { close(c.stop) }) }

// replaceLocked stops c so that another process can start at once.
func (c *child) replaceLocked() {
	c.replaced = true
	c.requestStop()
}

func (c *child) stopping() bool {
	select {
	case <-c.stop:
		return true
	default:
		return false
	}
}

func (c *child) running() bool {
	select {
	case <-c.conn.Done():
		return false
	default:
		return !c.stopping()
	}
}

// childConn is the Conn Dial hands out. Closing it stops its process and
// returns once the process is gone. The session's end is the process's:
// the restart that follows waits out the backoff, as after a crash, since
// a session mostly ends because its process is failing.
type childConn struct {
	*stdio.Conn
	c *child
}

func (cc *childConn) Close() error {
	cc.c.requestStop()
	<-cc.c.gone
	return nil
}
