// workers.go runs the handlers of a connection's exchanges on goroutines
// that are kept between exchanges. A goroutine per exchange started with
// the smallest stack and grew it, copy by copy, through the handler's
// depth (the proxy's upstream HTTP exchange is deep): about 4% of the CPU
// of a framed tools/call went to copying stacks. A kept goroutine has
// grown already. Each exchange still has a goroutine of its own while it
// is served, so a slow exchange never delays another.

package wire

import "context"

// maxIdleWorkers bounds the goroutines kept waiting for an exchange: more
// end when their exchange does.
const maxIdleWorkers = 256

// job is one exchange for a handler.
type job struct {
	r       *Responder
	payload []byte
	h       func(context.Context, *Responder, []byte)
}

func (j job) run() {
	defer j.r.done()
	j.h(j.r.ctx, j.r, j.payload)
}

// serveLocked runs a handler on an idle worker, or on a new one when none
// is idle.
func (c *conn) serveLocked(r *Responder, payload []byte, h func(context.Context, *Responder, []byte)) {
	j := job{r: r, payload: payload, h: h}
	select {
	case c.jobs <- j:
		return
	default:
	}
	c.handlers.Add(1)
	go c.work(j)
}

// work runs j, then the jobs handed to it while it is idle, until the
// connection ends or enough others are idle.
func (c *conn) work(j job) {
	defer c.handlers.Done()
	for {
		j.run()
		if c.idle.Add(1) > maxIdleWorkers {
			c.idle.Add(-1)
			return
		}
		select {
		case j = <-c.jobs:
			c.idle.Add(-1)
		case <-c.ctx.Done():
			c.idle.Add(-1)
			return
		}
	}
}
