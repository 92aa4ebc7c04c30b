// pump.go relays a byte stream (a database connection of a pair) as the
// responses of one exchange. The read of the stream and the write of the
// responses overlap: while one response is being written, what the stream
// yields gathers into the next. A fast stream so goes out in fewer, larger
// responses. A slow one is relayed as it comes, each read at once.

package wire

import (
	"errors"
	"io"
	"sync"
)

// maxGather bounds one response the pump writes.
const maxGather = 256 << 10

// Pump sends what src yields, as responses, until src ends (io.EOF
// returns nil) or a response cannot be written. Each read is of at most
// chunk bytes. A goroutine reads src meanwhile; after an error the caller
// closes src, which ends it.
func (r *Responder) Pump(src io.Reader, chunk int) (int64, error) {
	p := &pump{}
	p.cond.L = &p.mu
	go p.read(src, chunk)
	var sent int64
	spare := make([]byte, 0, maxGather)
	for {
		p.mu.Lock()
		for len(p.buf) == 0 && p.err == nil {
			p.cond.Wait()
		}
		out, err := p.buf, p.err
		p.buf = spare[:0]
		p.cond.Broadcast() // room for the reader
		p.mu.Unlock()
		if len(out) > 0 {
			if werr := r.Respond(out); werr != nil { // written before it returns: out is ours again
				p.stop()
				return sent, werr
			}
			sent += int64(len(out))
		}
		spare = out
		if err != nil {
			if errors.Is(err, io.EOF) {
				return sent, nil
			}
			return sent, err
		}
	}
}

// pump is what the reader has gathered and not yet handed over.
type pump struct {
	mu      sync.Mutex
	cond    sync.Cond
	buf     []byte
	err     error // the read's end; set once, after the last bytes
	stopped bool  // the writer has left
}

func (p *pump) read(src io.Reader, chunk int) {
	tmp := make([]byte, chunk)
	for {
		n, err := src.Read(tmp)
		p.mu.Lock()
		for n > 0 && len(p.buf)+n > maxGather && !p.stopped {
			p.cond.Wait()
		}
		if p.stopped {
			p.mu.Unlock()
			return
		}
		p.buf = append(p.buf, tmp[:n]...)
		if err != nil {
			p.err = err
		}
		p.cond.Broadcast()
		p.mu.Unlock()
		if err != nil {
			return
		}
	}
}

func (p *pump) stop() {
	p.mu.Lock()
	p.stopped = true
	p.cond.Broadcast()
	p.mu.Unlock()
}
